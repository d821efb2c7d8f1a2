// The recursive Gaussian's front end: checks the request, chooses the backend and runs the
// recursion on the GPU (src/cuda/recursive_gaussian/) or the CPU (src/cpu/recursive_gaussian).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cpu/recursive_gaussian.h"
#include "cuda/recursive_gaussian/recursive_gaussian.h"
#include "engine/backend_work.h"
#include "engine/filter_checks.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"

namespace ndconv {

bool recursive_gaussian_needed(const std::array<double, kMaxDims>& sigma, double truncate) {
  for (double s : sigma) {
    if (s > 0 && 2 * std::floor(truncate * s + 0.5) + 1 > static_cast<double>(kMaxSeparableExtent))
      return true;
  }
  return false;
}

RunReport recursive_gaussian(const ConstVolumeView& input, const VolumeView& output,
                             const std::array<double, kMaxDims>& sigma, const Options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  static const char* names[] = {"x", "y", "z", "t"};
  if (input.dims < 2 || input.dims > 4)
    throw InvalidArgument("the recursive Gaussian filters 2D, 3D and 4D volumes");
  if (input.data == nullptr || output.data == nullptr || output.dims != input.dims)
    throw InvalidArgument("the recursive Gaussian needs an input and an output volume");
  for (int a = 0; a < input.dims; ++a) {
    if (input.extent[a] < 1 || output.extent[a] != input.extent[a])
      throw InvalidArgument("the output volume does not have the input's extents");
    if (!std::isfinite(sigma[a]) || sigma[a] < 0 || sigma[a] > kMaxRecursiveSigma ||
        (sigma[a] > 0 && sigma[a] < kMinRecursiveSigma)) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "the recursive Gaussian needs sigma 0 or %g to %g voxels along %s, got %g "
                    "(the exact method takes smaller ones)",
                    kMinRecursiveSigma, kMaxRecursiveSigma, names[a], sigma[a]);
      throw InvalidArgument(text);
    }
  }
  // Every boundary extends each line through boundary_index; the constant one with its value, so
  // that each axis's pass pads its own input with it (scipy.ndimage's semantics).
  const Boundary boundary = detail::backend_boundary(options, nullptr);
  const float outside = options.boundary == Boundary::Constant ? options.boundary_value : 0.0f;
  RunReport report;
  report.notes.push_back("recursive (IIR) Gaussian, Young-van Vliet-van Ginkel third order");
  const detail::BackendWork work = detail::recursive_backend_work(input.voxel_count());
  if (detail::choose_backend(options, work, report) == Backend::Cuda) {
    std::array<recursive::Coefficients, kMaxDims> coefficients{};
    std::array<int64_t, kMaxDims> margin{0, 0, 0, 0};
    for (int a = 0; a < input.dims; ++a) {
      if (sigma[a] > 0) {
        coefficients[a] = cpu::young_van_vliet(sigma[a]);
        margin[a] = cpu::recursive_margin(sigma[a]);
      }
    }
    cuda_recursive::run(input, output, sigma, coefficients, margin, boundary, outside,
                        options.cuda_device, report);
    report.seconds_total = detail::seconds_since(t0);
    return report;
  }
  report.threads = core::resolve_thread_count(options.threads);
  const auto tc = std::chrono::steady_clock::now();
  cpu::recursive_gaussian(input, output, sigma, boundary, outside, options.threads,
                          options.progress);
  const auto t1 = std::chrono::steady_clock::now();
  report.seconds_compute = std::chrono::duration<double>(t1 - tc).count();
  report.seconds_total = std::chrono::duration<double>(t1 - t0).count();
  return report;
}

}  // namespace ndconv
