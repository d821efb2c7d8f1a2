// The CPU backend's tuning values, with the defaults the engine uses; tests set them to reach
// paths that only large volumes take by default. Nothing here is read from the environment.
#pragma once

#include <cstdint>

#include "core/problem.h"
#include "ndconv/types.h"

namespace ndconv::detail {
struct BankProblem;  // core/bank_problem.h
}

namespace ndconv::cpu_backend {

struct Tuning {
  /// Largest boundary-padded copy the dense driver makes at once; larger volumes are processed in
  /// slabs along the last axis: 256 MiB bounds the copy's extra memory while leaving most volumes
  /// in one slab.
  int64_t pad_limit_bytes = int64_t{256} << 20;
};

/// cpu_backend::run_dense (cpu/cpu_backend.h) with these tuning values.
void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const Tuning& tuning);

/// cpu_backend::run_bank (cpu/cpu_backend.h) with these tuning values.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report,
              const Tuning& tuning);

}  // namespace ndconv::cpu_backend
