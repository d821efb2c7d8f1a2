// The adaptive_4d bench row (registered with the filter bank rows, bank_rows.cpp; described in
// bank_rows.h) and the share of the FP32 FMA peak that every bank row reports.
#pragma once

#include <cstdint>

#include "perf/bench.h"
#include "perf/gpu.h"

namespace ndconv::perf {

/// 100 x the useful FLOP/s (2 per multiply-add) of `fmas` multiply-adds in `ms` milliseconds over
/// the FP32 FMA peak measured in the run.
inline double pct_of_peak(double fmas, double ms, const gpu::Ceilings& c) {
  return 100.0 * 2.0 * fmas / (ms * 1e-3) / c.fma_flops;
}

/// The whole adaptive filter on the GPU (ndconv::adaptive_filter, default parameters) on an
/// echo-like sequence of extents `volume`: first on a small sequence against the CPU backend (a
/// failure counted), then timed, each stage as adaptive_filter reports it (median of the runs),
/// against `target_seconds` without the filter design.
Json adaptive_row(const Shape& volume, double target_seconds, const BenchConfig& cfg, int device,
                  const gpu::Ceilings& c, uint64_t seed, int& failures);

}  // namespace ndconv::perf
