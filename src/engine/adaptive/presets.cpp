// The adaptive filter's named parameter sets and the ranges of its user-set parameters
// (ndconv/adaptive.h), shared by the command line and the ITK filter.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/adaptive/slab_stages.h"
#include "ndconv/adaptive.h"

namespace ndconv {

AdaptiveParameters adaptive_preset(AdaptivePreset preset) {
  AdaptiveParameters p;
  if (preset == AdaptivePreset::Echo) {
    // Speckle: a wider lowpass and relaxation, a higher structure threshold and a stronger
    // preference for the dominant orientation.
    p.reconstruction.lowpass_sigma = 2.0;
    p.relaxation_sigma = 2.0;
    p.magnitude_sigma = 0.3;
    p.eigen_alpha = 0.2;
    p.reconstruction.size = 9;
  }
  return p;
}

AdaptivePreset parse_adaptive_preset(const std::string& name) {
  if (name == "default")
    return AdaptivePreset::Default;
  if (name == "echo")
    return AdaptivePreset::Echo;
  throw InvalidArgument("the adaptive preset is '" + name + "'; it must be default or echo");
}

namespace {

void check_range(const char* what, double value, AdaptiveRange range) {
  if (std::isfinite(value) && value >= range.min && value <= range.max)
    return;
  char text[160];
  std::snprintf(text, sizeof text, "the adaptive filter's %s is %g; it must be %g to %g", what,
                value, range.min, range.max);
  throw InvalidArgument(text);
}

void check_size(const char* what, int size) {
  check_range(what, size, kFilterSizeRange);
  if (size % 2 == 0)
    throw InvalidArgument(std::string("the adaptive filter's ") + what + " is " +
                          std::to_string(size) + "; it must be odd");
}

}  // namespace

void validate_adaptive_parameters(const AdaptiveParameters& p) {
  check_range("smoothing (lowpass sigma)", p.reconstruction.lowpass_sigma, kSmoothingRange);
  check_range("relaxation sigma", p.relaxation_sigma, kRelaxationRange);
  check_range("threshold (magnitude sigma)", p.magnitude_sigma, kThresholdRange);
  check_range("anisotropy (eigenvalue alpha)", p.eigen_alpha, kAnisotropyRange);
  check_range("blend", p.blend, kBlendRange);
  check_size("quadrature filter size", p.quadrature.size);
  check_size("reconstruction filter size", p.reconstruction.size);
  if (p.orientation_downsampling != 1 && p.orientation_downsampling != 2)
    throw InvalidArgument("the adaptive filter's orientation downsampling must be 1 or 2");
}

double adaptive_working_volumes(int dims, const Index& extent, const AdaptiveParameters& p,
                                bool on_gpu, Boundary boundary) {
  if (on_gpu)
    return 1.0;  // the float input staged for the upload
  const bool frames = dims == 4 && !p.time_as_axis;
  const int d = frames ? 3 : dims;
  Index volume = extent;
  if (frames)
    volume[3] = 1;
  double voxels = 1;
  for (int a = 0; a < d; ++a)
    voxels *= static_cast<double>(volume[a]);
  // The frames of a series run one after the other, each in the same buffers.
  const bool slabs = p.orientation_downsampling == 1 && boundary != Boundary::Periodic;
  return detail::cpu_working_bytes(d, volume, p, slabs) /
         (4.0 * voxels * static_cast<double>(frames ? std::max<int64_t>(1, extent[3]) : 1));
}

}  // namespace ndconv
