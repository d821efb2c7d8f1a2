// The benchmark: a fixed list of workloads, each validated against the CPU backend and
// then timed twice: the filter alone on data already on the device ("device"), and the whole
// engine call with host buffers, uploads and downloads ("call"). Reported against the device's
// FP32 FMA peak and copy bandwidth measured at the start of the same run.
//
// Rows beyond the kernels (issue 29): api_* (the whole call of a GPU workload on pageable and on
// pinned host buffers, against max(upload, kernel, download) at the host bandwidths measured in
// the same run), e2e_* and batch (whole `ndconv` commands against their I/O-only floor,
// perf/e2e.h).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "perf/check.h"
#include "perf/e2e.h"
#include "perf/gpu.h"
#include "perf/params.h"
#include "perf/report.h"

namespace ndconv::perf {

struct Workload {
  std::string name;
  std::string description;
  enum class Kind {
    GpuDense,
    GpuSeparable,
    CpuDense,
    Api,
    EndToEnd,
    Batch,
    GpuMedian,
    Bank,           ///< the filter bank and adaptive filter rows (perf/bank_rows.h)
    CpuBank,        ///< the CPU filter bank against the CPU's FMA peak (bench_cpu_row.cpp)
    GpuFft,         ///< direct against FFT against auto for large dense filters (perf/fft_rows.h)
    GpuTensorDense  ///< one dense filter on 8-bit input on the tensor cores (tensor_dense_rows.h)
  } kind = Kind::GpuDense;
  Shape volume;
  Shape filter;       ///< dense filters
  double sigma = 0;   ///< separable Gaussian, voxels
  double target = 0;  ///< % of FMA peak (dense), x memory floor (separable), x ITK (CPU)
  std::string target_text;
  std::string base;                     ///< Api: the GPU workload whose call it times
  std::string command;                  ///< EndToEnd: "smooth" or "convolve"
  FileFormat format = FileFormat::Nii;  ///< EndToEnd: the input's and the output's format
  int64_t median_radius = 0;            ///< GpuMedian: the radius along every axis
  bool eight_bit_input = false;         ///< CpuBank: integers 0..255 (the 8-bit AMX-INT8 path)
};

/// The fixed workloads, in order: dense3d_11, dense3d_5, dense4d_7, dense2d_17, gauss3d_s2,
/// gauss3d_s2_272, cpu3d_7, cpu_bank_3d, cpu_bank_3d_u8, api_<each GPU workload>, median3d_r1,
/// median3d_r3, median2d_r3 (perf/median_rows.h), bank_3d, bank_3d_tc, bank_4d, bank_4d_tc,
/// bank_sum_3d, adaptive_4d (perf/bank_rows.h), fft3d_11, fft3d_15, fft3d_21 (perf/fft_rows.h),
/// e2e_{smooth,convolve}_{mha,nii,niigz}, batch.
const std::vector<Workload>& bench_workloads();

/// What a CPU peer (itk::ConvolutionImageFilter, supplied by the ITK-linked front end) returns for
/// the CPU row: its output (convolution, replicate boundary, same region) and its median time.
struct PeerRun {
  std::string name;
  double median_ms = 0;
  int repetitions = 0;
  std::vector<float> output;
};
/// Runs the peer on `c` (convolution with c.taps, replicate boundary) with `threads` threads,
/// timing `repetitions` runs.
using CpuPeer = std::function<PeerRun(const DenseCase& c, int threads, int repetitions)>;

struct BenchConfig {
  std::vector<std::string> workloads;  ///< empty = all (GPU rows need a GPU)
  bool cpu_only = false;               ///< --device cpu: only the CPU rows
  int cuda_device = 0;
  int threads = 0;  ///< CPU row: worker threads (0 = all)
  int warmup = 3;
  int repetitions = 20;
  int call_repetitions = 5;
  bool flush_l2 = true;
  bool all_kos = true;         ///< also time every compiled KO (auto vs best)
  bool all_boundaries = true;  ///< also time replicate, mirror, periodic and reflect
  double check_budget_fmas = 2e9;
  double tolerance = 1e-4;
  uint64_t seed = 0;
  std::string command_line;
  CpuPeer cpu_peer;  ///< empty: the CPU row reports ndconv alone and says why
  int cpu_peer_repetitions = 1;
  EndToEndConfig e2e;  ///< e2e.ndconv empty: the e2e_* and batch rows say they are not available
};

struct BenchResult {
  Json summary;  ///< date, device, ceilings, one object per workload
  int failures = 0;
};

/// Throws InvalidArgument for an unknown workload and GpuUnavailable when a GPU row has no GPU.
BenchResult run_bench(const BenchConfig& config, std::ostream* progress);

void print_bench_table(std::ostream& out, const BenchResult& result);

/// A timing as the rows write it: median, minimum and repetitions.
Json timing_json(const Timing& t);
/// A row's whole-call timing: the timing, its error against the CPU and the call's own times.
Json call_timing_json(const Timing& t, double rel_l2_error, const RunReport& report);

}  // namespace ndconv::perf
