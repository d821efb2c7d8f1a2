// The median filter's front end: checks the request, chooses the backend and runs the selection
// on the GPU (src/cuda/median/) or the CPU (src/cpu/median); median_filter_device runs the GPU
// selection on device memory.
#include <chrono>
#include <string>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cpu/median.h"
#include "cuda/median/median.h"
#include "engine/backend_work.h"
#include "engine/filter_checks.h"
#include "ndconv/device.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"

namespace ndconv {

namespace {

void check_median_request(const ConstVolumeView& input, const VolumeView& output,
                          const Index& radius) {
  if (input.dims < 2 || input.dims > 4)
    throw InvalidArgument("the median filters 2D, 3D and 4D volumes");
  if (input.data == nullptr || output.data == nullptr)
    throw InvalidArgument("the median needs an input and an output volume");
  if (output.dims != input.dims)
    throw InvalidArgument("the output volume's dimension does not match");
  for (int a = 0; a < kMaxDims; ++a) {
    if (a < input.dims && (input.extent[a] < 1 || output.extent[a] != input.extent[a]))
      throw InvalidArgument("the output volume does not have the input's extents");
    const int64_t limit = a < input.dims ? kMaxMedianRadius : 0;
    if (radius[a] < 0 || radius[a] > limit) {
      throw InvalidArgument("the median radius along axis " + std::to_string(a) + " is " +
                            std::to_string(radius[a]) + "; it must be 0.." + std::to_string(limit));
    }
  }
  const auto first = reinterpret_cast<const char*>(input.data);
  const auto last = reinterpret_cast<const char*>(input.data + input.voxel_count());
  const auto out_first = reinterpret_cast<const char*>(output.data);
  if (input.is_contiguous() && output.is_contiguous() && out_first < last &&
      first < reinterpret_cast<const char*>(output.data + output.voxel_count()))
    throw InvalidArgument("input and output volumes overlap");
}

// The boundary rule the backends run and the value of the voxels outside the volume where that
// rule reads none: Boundary::Constant runs as Zero with Options::boundary_value outside (a
// selection reads the value as it is, so the result is scipy's median_filter(mode='constant',
// cval=value) bit for bit).
struct MedianBoundary {
  Boundary rule = Boundary::Zero;
  float outside = 0;
};

MedianBoundary median_boundary(const Options& options) {
  const Boundary rule = detail::backend_boundary(options, nullptr);  // a finite value
  return {rule, options.boundary == Boundary::Constant ? options.boundary_value : 0.0f};
}

}  // namespace

RunReport median_filter(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
                        const Options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  check_median_request(input, output, radius);
  const MedianBoundary b = median_boundary(options);
  RunReport report;
  const detail::BackendWork work =
      detail::median_backend_work(input.dims, radius, input.voxel_count());
  if (detail::choose_backend(options, work, report) == Backend::Cuda) {
    cuda_median::run(input, output, radius, b.rule, b.outside, options.cuda_device, report);
  } else {
    report.threads = core::resolve_thread_count(options.threads);
    const auto tc = std::chrono::steady_clock::now();
    cpu::median(input, output, radius, b.rule, b.outside, options.threads, options.progress);
    report.seconds_compute = detail::seconds_since(tc);
  }
  report.seconds_total = detail::seconds_since(t0);
  return report;
}

RunReport median_filter_device(const ConstVolumeView& input, const VolumeView& output,
                               const Index& radius, const Options& options, void* stream) {
  check_median_request(input, output, radius);
  const MedianBoundary b = median_boundary(options);
  if (options.backend == Backend::Cpu)
    throw InvalidArgument("device memory needs the CUDA backend, not the CPU");
  Options cuda = options;
  cuda.backend = Backend::Cuda;
  RunReport report;
  detail::choose_backend(cuda, detail::median_backend_work(input.dims, radius, 0), report);
  cuda_median::run_device(input, output, radius, b.rule, b.outside, options, stream, report);
  return report;
}

}  // namespace ndconv
