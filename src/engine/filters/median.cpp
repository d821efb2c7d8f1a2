// The median filter's front end: checks the request and runs the CPU selection (src/cpu/median).
#include <chrono>
#include <string>

#include "cpu/median.h"
#include "cpu/parallel_for.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"

namespace ndconv {

RunReport median_filter(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
                        const Options& options) {
  const auto t0 = std::chrono::steady_clock::now();
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
  if (options.backend == Backend::Cuda)
    throw InvalidArgument("the median has no GPU kernel in this build; use --device cpu or auto");
  const auto first = reinterpret_cast<const char*>(input.data);
  const auto last = reinterpret_cast<const char*>(input.data + input.voxel_count());
  const auto out_first = reinterpret_cast<const char*>(output.data);
  if (input.is_contiguous() && output.is_contiguous() && out_first < last &&
      first < reinterpret_cast<const char*>(output.data + output.voxel_count()))
    throw InvalidArgument("input and output volumes overlap");
  RunReport report;
  report.backend = Backend::Cpu;
  report.backend_reason = options.backend == Backend::Cpu
                              ? "CPU requested"
                              : "the median runs on the CPU (no GPU kernel in this build)";
  report.threads = cpu::resolve_thread_count(options.threads);
  const auto tc = std::chrono::steady_clock::now();
  cpu::median(input, output, radius, options.boundary, options.threads, options.progress);
  const auto t1 = std::chrono::steady_clock::now();
  report.seconds_compute = std::chrono::duration<double>(t1 - tc).count();
  report.seconds_total = std::chrono::duration<double>(t1 - t0).count();
  return report;
}

}  // namespace ndconv
