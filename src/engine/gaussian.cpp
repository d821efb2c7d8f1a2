#include "ndconv/gaussian.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "ndconv/errors.h"

namespace ndconv {

namespace {
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

std::vector<float> gaussian_taps(double sigma_voxels, double truncate) {
  if (!(sigma_voxels > 0) || !std::isfinite(sigma_voxels)) {
    throw InvalidArgument("sigma must be a positive number of voxels, got " + number(sigma_voxels));
  }
  if (!(truncate > 0) || !std::isfinite(truncate)) {
    throw InvalidArgument("truncate must be a positive number of sigmas, got " + number(truncate));
  }
  const double radius_real = std::floor(truncate * sigma_voxels + 0.5);
  if (2 * radius_real + 1 > static_cast<double>(kMaxSeparableExtent)) {
    throw InvalidArgument("a Gaussian of sigma " + number(sigma_voxels) + " voxels truncated at " +
                          number(truncate) + " sigmas needs " +
                          std::to_string(static_cast<long long>(2 * radius_real + 1)) +
                          " taps; the limit is " + std::to_string(kMaxSeparableExtent));
  }
  const int64_t radius = static_cast<int64_t>(radius_real);
  std::vector<double> w(2 * radius + 1);
  double sum = 0;
  for (int64_t i = -radius; i <= radius; ++i) {
    const double x = static_cast<double>(i) / sigma_voxels;
    w[i + radius] = std::exp(-0.5 * x * x);
    sum += w[i + radius];
  }
  std::vector<float> taps(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    taps[i] = static_cast<float>(w[i] / sum);
  return taps;
}

SeparableFilter gaussian_filter(int dims, const std::array<double, kMaxDims>& sigma_voxels,
                                double truncate) {
  SeparableFilter f;
  f.dims = dims;
  for (int a = 0; a < dims; ++a) {
    if (sigma_voxels[a] < 0)
      throw InvalidArgument("sigma must not be negative");
    if (sigma_voxels[a] > 0)
      f.taps[a] = gaussian_taps(sigma_voxels[a], truncate);
  }
  return f;
}

double fwhm_to_sigma(double fwhm) {
  return fwhm / (2.0 * std::sqrt(2.0 * std::log(2.0)));
}

}  // namespace ndconv
