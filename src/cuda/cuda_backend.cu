// The CUDA backend's host orchestration (engine/cuda_backend.h, cuda/launch.h): probing the
// devices, staging strided host views, uploading, filtering in slabs along the last axis when the
// volume does not fit (staging.h explains the halo), downloading, and the RunReport. Kernels are
// launched through the low-level API (launch.cu).
#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "cuda/plan.h"
#include "cuda/staging.h"

namespace ndconv::cuda_backend {

CudaStatus probe() {
  CudaStatus s;
  s.compiled = true;
  try {
    cudaRuntimeGetVersion(&s.runtime_version);
    cudaDriverGetVersion(&s.driver_version);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();  // reset the runtime's last-error state (the error is not sticky)
      s.reason = std::string(err == cudaErrorInsufficientDriver ? "no usable CUDA driver"
                             : err == cudaErrorNoDevice         ? "no CUDA device"
                                                                : "CUDA unavailable") +
                 " (" + cudaGetErrorName(err) + ", error " + std::to_string(int(err)) + ")";
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device";
      return s;
    }
    for (int d = 0; d < count; ++d) {
      const DeviceAttributes& a = device_attributes(d);
      DeviceInfo info;
      info.index = d;
      info.name = a.name;
      info.compute_capability_major = a.cc_major;
      info.compute_capability_minor = a.cc_minor;
      info.multiprocessors = a.multiprocessors;
      NDCONV_CUDA_CHECK(cudaSetDevice(d));
      NDCONV_CUDA_CHECK(cudaMemGetInfo(&info.free_memory, &info.total_memory));
      s.devices.push_back(info);
    }
    s.usable = true;
    s.reason = std::to_string(count) + " CUDA device(s), runtime " +
               std::to_string(s.runtime_version) + ", driver " + std::to_string(s.driver_version);
  } catch (const std::exception& e) {
    s.usable = false;
    s.devices.clear();
    s.reason = std::string("CUDA probe failed: ") + e.what();
  }
  return s;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One filter at a time per process: the tap buffers are per device (see launch.cu).
std::mutex g_run_mutex;

// Floats the backend may allocate: 90% of the free memory less a 64 MiB reserve, under the cap.
int64_t device_budget_floats(const Options& options, RunReport& report) {
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t reserve = size_t(64) << 20;
  size_t budget = free_bytes > reserve ? (free_bytes - reserve) / 10 * 9 : 0;
  const size_t cap = memory_cap(options);
  if (cap > 0 && cap < budget) {
    budget = cap;
    report.notes.push_back("device memory cap: " + std::to_string(cap) + " bytes");
  }
  return static_cast<int64_t>(budget / sizeof(float));
}

void set_device(const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  cudaDeviceProp prop{};
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.cuda_device));
  report.device_name = prop.name;
  report.notes.push_back("registers per SM: " + std::to_string(prop.regsPerMultiprocessor) +
                         ", SMs: " + std::to_string(prop.multiProcessorCount));
}

// The shared slab loop of run_dense and run_separable. `launch(in_view, out_view, stream)`
// enqueues the filtering of one slab problem whose input/output are device views; `halo` is the
// filter extent along the last axis minus one and `offset_last` the problem's offset along it.
template <typename Launch>
void run_in_slabs(const ConstVolumeView& input, const VolumeView& output, Boundary boundary,
                  int64_t halo, int64_t offset_last, int64_t scratch_factor,
                  int64_t reserved_floats, const Options& options, RunReport& report,
                  Launch launch) {
  const int dims = input.dims;
  const int last = dims - 1;
  const int64_t in_row = input.voxel_count() / input.extent[last];
  const int64_t out_row = output.voxel_count() / output.extent[last];
  const int64_t out_rows = output.extent[last];
  const int64_t budget = device_budget_floats(options, report) - reserved_floats;

  const int64_t whole = input.voxel_count() * (1 + scratch_factor) + output.voxel_count();
  int64_t rows = out_rows;
  if (whole > budget) {
    rows = std::min(out_rows, slab_rows(budget, in_row, out_row, halo, scratch_factor));
    if (rows < 1) {
      throw InvalidArgument(
          "the device memory budget (" + std::to_string(std::max<int64_t>(0, budget) * 4) +
          " bytes) is too small for one slab row: it needs " +
          std::to_string(((halo + 1) * in_row * (1 + scratch_factor) + out_row) * 4) + " bytes");
    }
  }
  const bool one_pass = rows == out_rows;
  const int64_t slabs = (out_rows + rows - 1) / rows;
  report.slabs = static_cast<int>(slabs);

  // In one pass the device boundary handling serves every axis; in slabs the halo along the last
  // axis is staged on the host (staging.h).
  const int64_t in_rows_max = one_pass ? input.extent[last] : rows + halo;
  DeviceBuffer d_in(static_cast<size_t>(in_rows_max * in_row));
  DeviceBuffer d_out(static_cast<size_t>(rows * out_row));
  Stream stream;
  std::vector<float> staging;
  const bool output_contiguous = output.is_contiguous();

  for (int64_t s = 0; s < slabs; ++s) {
    if (s > 0 && options.progress && !options.progress(double(s) / double(slabs)))
      throw Aborted();
    const int64_t o0 = s * rows;
    const int64_t n_rows = std::min(rows, out_rows - o0);
    const int64_t in_rows = one_pass ? input.extent[last] : n_rows + halo;

    auto t0 = Clock::now();
    const float* host_in = input.data;
    if (!one_pass) {
      staging.resize(static_cast<size_t>(in_rows * in_row));
      stage_slab_input(input, o0 + offset_last, in_rows, boundary, staging.data());
      host_in = staging.data();
    } else if (!input.is_contiguous()) {
      staging.resize(static_cast<size_t>(input.voxel_count()));
      gather(input, staging.data());
      host_in = staging.data();
    }
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), host_in, sizeof(float) * in_rows * in_row,
                                      cudaMemcpyHostToDevice, stream.get()));
    stream.synchronize();
    report.seconds_upload += seconds_since(t0);

    t0 = Clock::now();
    Index in_extent = input.extent, out_extent = output.extent;
    in_extent[last] = in_rows;
    out_extent[last] = n_rows;
    const ConstVolumeView d_in_view = make_view<const float>(d_in.get(), dims, in_extent);
    const VolumeView d_out_view = make_view(d_out.get(), dims, out_extent);
    launch(d_in_view, d_out_view, one_pass, stream.get());
    stream.synchronize();
    report.seconds_compute += seconds_since(t0);

    t0 = Clock::now();
    const VolumeView host_out = last_axis_rows(output, o0, n_rows);
    float* download_to = host_out.data;
    if (!output_contiguous) {
      staging.resize(static_cast<size_t>(n_rows * out_row));
      download_to = staging.data();
    }
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(download_to, d_out.get(), sizeof(float) * n_rows * out_row,
                                      cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    if (!output_contiguous)
      scatter(staging.data(), host_out);
    report.seconds_download += seconds_since(t0);
  }
  if (!one_pass) {
    report.notes.push_back("processed in " + std::to_string(slabs) + " slabs of " +
                           std::to_string(rows) + " rows along the last axis");
  }
}

}  // namespace

void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report) {
  DenseKernelRequest request;
  request.outputs_per_thread = options.expert.outputs_per_thread;
  run_dense(problem, options, report, request, Tuning{});
}

void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const DenseKernelRequest& request, const Tuning& tuning) {
  std::lock_guard<std::mutex> lock(g_run_mutex);
  set_device(options, report);
  const int last = problem.input.dims - 1;
  // Large filters keep their taps in device memory (at most 31^3 or 15^4 floats).
  int64_t reserved_taps = 1;
  for (int a = 0; a <= last; ++a)
    reserved_taps *= problem.filter_extent[a];

  LaunchPlan plan;
  run_in_slabs(
      problem.input, problem.output, problem.boundary, problem.filter_extent[last] - 1,
      problem.offset[last], 0, reserved_taps, options, report,
      [&](const ConstVolumeView& in, const VolumeView& out, bool one_pass, cudaStream_t stream) {
        detail::CorrelationProblem p = problem;
        p.input = in;
        p.output = out;
        if (!one_pass)
          p.offset[last] = 0;  // the halo is staged
        plan = launch_dense_device(p, request, options.cuda_device, stream, tuning);
      });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("dense plan: " + plan.describe());
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report) {
  run_separable(problem, options, report, Tuning{});
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report, const Tuning& tuning) {
  std::lock_guard<std::mutex> lock(g_run_mutex);
  set_device(options, report);
  const int last = problem.input.dims - 1;
  const int64_t k_last = std::max<int64_t>(1, problem.taps[last].size());
  const int64_t scratch_halves =
      static_cast<int64_t>(separable_scratch_floats(problem) / problem.input.voxel_count());

  LaunchPlan plan;
  DeviceBuffer scratch;
  run_in_slabs(
      problem.input, problem.output, problem.boundary, k_last - 1, problem.offset[last],
      scratch_halves, 0, options, report,
      [&](const ConstVolumeView& in, const VolumeView& out, bool one_pass, cudaStream_t stream) {
        detail::SeparableProblem p = problem;
        p.input = in;
        p.output = out;
        if (!one_pass)
          p.offset[last] = 0;
        scratch.reserve(separable_scratch_floats(p));
        plan = launch_separable_device(p, scratch.get(), options.cuda_device, stream,
                                       options.expert.outputs_per_thread, tuning);
      });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("separable plan: " + plan.describe());
}

}  // namespace ndconv::cuda_backend
