// The CUDA backend's host path (cuda/cuda_backend.h): probing the devices, and for each call a
// pipeline of chunks along the last axis (chunk_plan.h: resident where the problem fits the
// device, resident_pipeline.h; else staged slabs, chunk_pipeline.h, whose halo staging.h
// explains) whose uploads, kernels and downloads overlap on several streams, with device and
// pinned staging buffers kept between calls (buffer_pools.h), and the RunReport. Kernels are
// launched through the low-level API (launch.h). Calls from several threads run at once: all state
// of a call is its own, and the tap buffers the launchers share order only the launches whose taps
// would overwrite another's (uploaded_taps.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/seconds_since.h"
#include "core/parallel_for.h"
#include "core/first_touch.h"
#include "cuda/buffer_pools.h"
#include "cuda/check.h"
#include "cuda/chunk_plan.h"
#include "cuda/convert/convert.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"
#include "cuda/tensor_dense/tensor_dense.h"
#include "cuda/launch.h"
#include "cuda/plan.h"
#include "cuda/staging.h"
#include "cuda/stream_scratch.h"
#include "cuda/chunk_pipeline.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_host.h"
#include "core/stored_access.h"
#include "ndconv/memory.h"

namespace ndconv::cuda_backend {

CudaStatus probe(bool free_memory) {
  const CallerDevice caller_device;  // restored on return (check.h)
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
      s.devices.push_back(device_info(d, free_memory));
      if (free_memory)
        mark_started(d);
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

std::size_t free_memory_of(int device) {
  const std::size_t free_bytes = device_info(device).free_memory;
  mark_started(device);
  return free_bytes;
}

void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  DenseKernelRequest request;
  request.outputs_per_thread = options.expert.outputs_per_thread;
  run_dense(problem, options, report, request, Tuning{});
}

void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const DenseKernelRequest& request, const Tuning& tuning) {
  const CallerDevice caller_device;  // restored on return (check.h)
  run_dense_stored(problem, stored_view(problem.input), options, report, request, tuning);
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  run_separable(problem, options, report, Tuning{});
}

void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report, const Tuning& tuning) {
  const CallerDevice caller_device;  // restored on return (check.h)
  run_separable_stored(problem, stored_view(problem.input), options, report, tuning);
}

void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  DenseKernelRequest request;
  request.outputs_per_thread = options.expert.outputs_per_thread;
  run_dense_stored(problem, input, options, report, request, Tuning{});
}

void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report, const DenseKernelRequest& request,
                      const Tuning& tuning) {
  const CallerDevice caller_device;  // restored on return (check.h)
  set_device(options, report);
  const int last = problem.input.dims - 1;
  // Large filters keep their taps in device memory (at most 31^3 or 15^4 floats).
  int64_t reserved_taps = 1;
  for (int a = 0; a <= last; ++a)
    reserved_taps *= problem.filter_extent[a];

  // 8-bit 3D inputs with a 7^3 or 11^3 filter: the tensor cores where they can take the problem
  // (tensor_dense.h), unless a kernel or KO is forced.
  std::string tensor_cores_not;
  if (input.type == ScalarType::UInt8) {
    if (request.kernel != DenseKernel::Auto || request.outputs_per_thread != 0)
      tensor_cores_not = "a kernel or KO is forced";
    else if (cuda_tensor_dense::run_tensor_dense(problem, input, options, tuning.dense_tensor_cores,
                                                 report, tensor_cores_not))
      return;
  }

  LaunchPlan plan;
  run_pipelined(input, problem.output, problem.boundary, problem.filter_extent[last] - 1,
                problem.offset[last], 0, reserved_taps, options, report,
                [&](const ConstVolumeView& in, const VolumeView& out, int64_t offset_last,
                    const Lease&, cudaStream_t stream) {
                  detail::CorrelationProblem p = problem;
                  p.input = in;
                  p.output = out;
                  p.offset[last] = offset_last;
                  plan = launch_dense_device(p, request, options.cuda_device, stream, tuning);
                });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back(
      "dense plan: " + plan.describe() +
      (tensor_cores_not.empty() ? "" : "; not on the tensor cores: " + tensor_cores_not));
}

void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  run_separable_stored(problem, input, options, report, Tuning{});
}

void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report, const Tuning& tuning) {
  const CallerDevice caller_device;  // restored on return (check.h)
  set_device(options, report);
  const int last = problem.input.dims - 1;
  const int64_t k_last = std::max<int64_t>(1, problem.taps[last].size());
  const int64_t scratch_halves =
      static_cast<int64_t>(separable_scratch_floats(problem) / problem.input.voxel_count());

  LaunchPlan plan;
  run_pipelined(input, problem.output, problem.boundary, k_last - 1, problem.offset[last],
                scratch_halves, 0, options, report,
                [&](const ConstVolumeView& in, const VolumeView& out, int64_t offset_last,
                    const Lease& scratch, cudaStream_t stream) {
                  detail::SeparableProblem p = problem;
                  p.input = in;
                  p.output = out;
                  p.offset[last] = offset_last;
                  if (separable_scratch_floats(p) * sizeof(float) > scratch.bytes())
                    throw InvalidArgument("internal: the chunk's separable scratch is too small");
                  plan = launch_separable_device(p, scratch.floats(), options.cuda_device, stream,
                                                 options.expert.outputs_per_thread, tuning);
                });
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("separable plan: " + plan.describe());
}

namespace {

// The device entry points' checks: contiguous views of memory the device can address.
void check_device_view(const void* data, bool contiguous, int device, const char* what) {
  if (!contiguous)
    throw InvalidArgument(std::string(what) + " must be contiguous for the device entry points");
  cudaPointerAttributes attributes{};
  NDCONV_CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
  const bool on_device = attributes.type == cudaMemoryTypeDevice && attributes.device == device;
  if (!on_device && attributes.type != cudaMemoryTypeManaged) {
    throw InvalidArgument(std::string(what) + " is not in the memory of CUDA device " +
                          std::to_string(device) +
                          " (the host entry points, e.g. filter_dense, take host memory)");
  }
}

}  // namespace

void prepare_device_call(const ConstVolumeView& input, const VolumeView& output,
                         const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  mark_started(options.cuda_device);
  check_device_view(input.data, input.is_contiguous(), options.cuda_device, "the input volume");
  check_device_view(output.data, output.is_contiguous(), options.cuda_device, "the output volume");
  report.backend = Backend::Cuda;
  report.backend_reason = "device memory on CUDA device " + std::to_string(options.cuda_device);
}

void run_dense_device(const detail::CorrelationProblem& problem, const Options& options,
                      void* stream_handle, RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  prepare_device_call(problem.input, problem.output, options, report);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const LaunchPlan plan =
      launch_dense_device(problem, options.expert.outputs_per_thread, options.cuda_device, stream);
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("dense plan: " + plan.describe());
}

void run_separable_device(const detail::SeparableProblem& problem, const Options& options,
                          void* stream_handle, RunReport& report) {
  const CallerDevice caller_device;  // restored on return (check.h)
  prepare_device_call(problem.input, problem.output, options, report);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  // Only what this launch's plan needs (none for the slab kernel's one pass).
  const int64_t scratch_floats = static_cast<int64_t>(
      separable_launch_scratch_floats(problem, options.expert.outputs_per_thread));
  // Stream-ordered: freed on `stream` after the kernels that use it, without waiting here.
  std::optional<StreamScratch> scratch;
  if (scratch_floats > 0) {
    scratch.emplace(options.cuda_device, scratch_floats, stream);
    if (scratch->get() == nullptr) {
      throw InvalidArgument("no device memory for the separable filter's scratch (" +
                            std::to_string(scratch_floats * 4) + " bytes)");
    }
  }
  const LaunchPlan plan =
      launch_separable_device(problem, scratch ? scratch->get() : nullptr, options.cuda_device,
                              stream, options.expert.outputs_per_thread);
  report.outputs_per_thread = plan.outputs_per_thread;
  report.outputs_per_thread_reason = plan.reason;
  report.notes.push_back("separable plan: " + plan.describe());
}

}  // namespace ndconv::cuda_backend
