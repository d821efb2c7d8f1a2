// The bench's own rows as run_bench (bench.cpp) calls them: the dense and Gaussian GPU rows
// (bench_kernel_rows.cpp), their whole-call timings and the api rows (bench_call_rows.cpp), the
// CPU row against ITK (bench_cpu_row.cpp), and the dense rows outside the fixed list
// (bench_workloads.cpp). The median and bank rows are in median_rows.h and bank_rows.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "perf/bench.h"
#include "perf/check.h"
#include "perf/gpu.h"
#include "perf/report.h"

namespace ndconv::perf {

/// The device a GPU row runs on, its facts, the ceilings measured at the start of the run and
/// the timer of the device rows.
struct GpuContext {
  int dev = 0;
  gpu::DeviceFacts facts;
  gpu::Ceilings ceil;
  gpu::Timer* timer = nullptr;
};

/// A dense GPU row: validated against the CPU, timed on the device (with every KO and every
/// boundary when the config asks) and as a whole call; `pinned_call` adds the call on pinned
/// buffers.
Json dense_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                   int& failures, bool pinned_call);

/// The separable Gaussian GPU row, as dense_gpu_row.
Json separable_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                       int& failures, bool pinned_call);

// The whole call of a GPU workload on pageable and on pinned host buffers, each against
// max(upload, kernel, download) with the transfers at the bandwidth measured for that kind of
// memory at the start of the run and the kernel at this row's device time.
Json api_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
             int& failures);

/// The CPU row: ndconv's CPU backend, and itk::ConvolutionImageFilter when the config has a peer.
Json cpu_row(const Workload& w, const BenchConfig& cfg, uint64_t seed, int& failures);

/// The CPU filter bank (the adaptive filter's 12 real 7^3 quadrature filters, all cores) against
/// the CPU's FP32 FMA peak measured before and after it in the same run; filter 0's responses
/// checked against the dense filter of its taps.
Json cpu_bank_row(const Workload& w, const BenchConfig& cfg, uint64_t seed, int& failures);

/// A whole engine call on host buffers, as the call-time rows time it.
using EngineCall =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;

// The row's call_time on pageable buffers and, with `pinned`, call_time_pinned.
void add_call_times(Json& row, const Shape& volume, const std::vector<float>& input, bool pinned,
                    const BenchConfig& cfg, const GpuContext& g, const CheckPlan& check,
                    const EngineCall& call, int& failures);

// A dense GPU row that is not in the fixed list, named as those are (denseND_K: a K^N cube filter)
// on the volume of the fixed dense row with N dimensions, without a target (for studies of other
// filter sizes, e.g. where a launch plan's rule changes); false when `name` is not of that form.
bool other_dense_workload(const std::string& name, Workload& out);

}  // namespace ndconv::perf
