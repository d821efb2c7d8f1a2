// The cost model (backend_cost.h). The GPU's call time with the chunk pipeline is the slowest stage
// (upload, kernel or download) over the whole volume, plus filling and draining the pipeline (one
// chunk's worth of the other two stages), plus the fixed cost and, when not yet paid, CUDA's
// start-up.
#include "engine/backend_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ndconv::detail {

namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  return text;
}

}  // namespace

double estimate_cpu_seconds(const CpuWork& w, const CostConstants& k) {
  const double outputs = static_cast<double>(w.output_voxels);
  const double taps = outputs * std::max(1.0, w.taps_per_output);
  const double passes = std::max(1, w.passes);
  const double pass = w.kind == CpuWork::Kind::Dense ? k.cpu_dense_pass_seconds_per_voxel
                      : w.slab_passes                ? k.cpu_slab_pass_seconds_per_voxel
                                                     : k.cpu_pass_seconds_per_voxel;
  double per_thread = outputs * passes * pass;
  switch (w.kind) {
    case CpuWork::Kind::Dense:
      per_thread += taps / (w.dense_4d ? k.cpu_dense_4d_taps_per_second_per_thread
                                       : k.cpu_taps_per_second_per_thread);
      break;
    case CpuWork::Kind::Bank:
      per_thread += taps / k.cpu_bank_taps_per_second_per_thread;
      break;
    case CpuWork::Kind::Separable:
      per_thread += taps / k.cpu_separable_taps_per_second_per_thread;
      break;
    case CpuWork::Kind::Median:
      per_thread += taps * k.cpu_median_seconds_per_key;
      break;
    case CpuWork::Kind::Recursive:
      per_thread += taps * k.cpu_recursive_seconds_per_voxel_axis;
      break;
  }
  return k.cpu_fixed_seconds + per_thread / std::max(1, w.threads);
}

CostEstimate estimate_costs(const CostInput& in, const CostConstants& k) {
  CostEstimate e;
  const double outputs = static_cast<double>(in.output_voxels);
  const double taps = outputs * std::max(1.0, in.taps_per_output);
  const int threads = std::max(1, in.cpu_threads);
  CpuWork cpu;
  cpu.kind = in.separable ? CpuWork::Kind::Separable : CpuWork::Kind::Dense;
  cpu.output_voxels = in.output_voxels;
  cpu.taps_per_output = in.taps_per_output;
  cpu.passes = in.passes;
  cpu.slab_passes = in.separable && in.slab_passes;
  cpu.dense_4d = !in.separable && in.dense_4d;
  cpu.threads = threads;
  e.cpu_seconds = estimate_cpu_seconds(cpu, k);

  const double rate = in.separable ? k.gpu_separable_taps_per_second : k.gpu_dense_taps_per_second;
  const double traffic = outputs * 8.0 * std::max(1, in.passes);
  e.gpu_kernel_seconds = std::max(taps / rate, traffic / k.gpu_bytes_per_second);
  const double in_bytes = static_cast<double>(in.input_voxels) * in.input_bytes_per_voxel;
  const double out_bytes = outputs * 4.0;
  e.gpu_upload_seconds =
      in_bytes / (in.input_pinned ? k.pinned_bytes_per_second : k.pageable_upload_bytes_per_second);
  e.gpu_download_seconds = out_bytes / (in.output_pinned ? k.pinned_bytes_per_second
                                                         : k.pageable_download_bytes_per_second);
  const double chunks = std::max(1.0, std::floor(in_bytes / k.chunk_bytes));
  const double stages = e.gpu_upload_seconds + e.gpu_kernel_seconds + e.gpu_download_seconds;
  const double slowest =
      std::max({e.gpu_upload_seconds, e.gpu_kernel_seconds, e.gpu_download_seconds});
  // One chunk: the stages one after another; several: the slowest stage plus the fill and drain.
  const double pipelined = chunks < 2 ? stages : slowest + (stages - slowest) / chunks * 2;
  e.gpu_startup_seconds =
      in.cuda_started ? 0.0 : std::max(0.0, k.cuda_startup_seconds - in.startup_elapsed_seconds);
  e.gpu_seconds = e.gpu_startup_seconds + k.gpu_fixed_seconds + std::min(stages, pipelined);
  e.prefer_gpu = e.gpu_seconds < e.cpu_seconds;

  e.reason = std::string(e.prefer_gpu ? "GPU" : "CPU") + " estimated faster: GPU " +
             milliseconds(e.gpu_seconds) + " (kernel " + milliseconds(e.gpu_kernel_seconds) +
             ", copies " + milliseconds(e.gpu_upload_seconds) + " up and " +
             milliseconds(e.gpu_download_seconds) + " down from " +
             (in.input_pinned ? "pinned" : "pageable") + " memory, " +
             (in.cuda_started ? "CUDA already started"
              : in.startup_elapsed_seconds > 0
                  ? "the rest of CUDA's start-up under way, " + milliseconds(e.gpu_startup_seconds)
                  : "CUDA start-up " + milliseconds(e.gpu_startup_seconds)) +
             ") against CPU " + milliseconds(e.cpu_seconds) + " on " + std::to_string(threads) +
             " thread" + (threads == 1 ? "" : "s");
  return e;
}

}  // namespace ndconv::detail
