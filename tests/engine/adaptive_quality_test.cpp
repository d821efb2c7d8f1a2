// The adaptive filter's purpose, as a test: on a thick-walled ellipsoidal shell with
// multiplicative Rayleigh speckle (as in echocardiography), at the same noise reduction in flat
// regions as a Gaussian, it keeps the wall's edges sharper. Noise: flat_noise, in regions at
// least 4 voxels from any edge; the Gaussian's sigma is found by bisection so that its noise
// equals the adaptive filter's. Sharpness: the
// contrast across the wall's boundary (edge_contrast). Asserted: at least twice the Gaussian's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr int kSize = 48;
constexpr double kWall = 1.0, kBackground = 0.25;

struct Phantom {
  Index extent{kSize, kSize, kSize, 1};
  std::vector<float> clean, noisy;
  std::vector<char> flat;  // at least 4 voxels from any edge and from the volume's border
};

double ellipsoid_radius(int x, int y, int z, double shrink) {
  const double c = (kSize - 1) / 2.0;
  const double ax = 18 - shrink, ay = 15 - shrink, az = 12 - shrink;
  const double dx = (x - c) / ax, dy = (y - c) / ay, dz = (z - c) / az;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

Phantom make_phantom(uint64_t seed) {
  Phantom p;
  const int64_t n = int64_t{kSize} * kSize * kSize;
  p.clean.resize(n);
  p.noisy.resize(n);
  p.flat.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(1e-12, 1.0);
  const double rayleigh_sigma = std::sqrt(2.0 / 3.14159265358979323846);  // mean 1
  for (int z = 0; z < kSize; ++z)
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x) {
        const int64_t i = (int64_t{z} * kSize + y) * kSize + x;
        const bool wall = ellipsoid_radius(x, y, z, 0) <= 1 && ellipsoid_radius(x, y, z, 5) > 1;
        p.clean[i] = static_cast<float>(wall ? kWall : kBackground);
        const double speckle = rayleigh_sigma * std::sqrt(-2 * std::log(uniform(rng)));
        p.noisy[i] = static_cast<float>(p.clean[i] * speckle);
        // 4 voxels from an edge: the radii of the two ellipsoids 4 voxels in and out.
        const bool far_outside = ellipsoid_radius(x, y, z, -4) > 1;
        const bool far_inside = ellipsoid_radius(x, y, z, 9) <= 1;
        const bool far_from_border = std::min({x, y, z}) >= 4 && std::max({x, y, z}) < kSize - 4;
        p.flat[i] = (far_outside || far_inside) && far_from_border;
      }
  return p;
}

// The noise left by a filter that is linear once its control is fixed: the std of
// filter(noisy) - filter(clean) over the flat regions, over the background level.
double flat_noise(const Phantom& p, const std::vector<float>& noisy_out,
                  const std::vector<float>& clean_out) {
  double sum = 0, sum2 = 0, count = 0;
  for (size_t i = 0; i < noisy_out.size(); ++i)
    if (p.flat[i]) {
      const double r = double{noisy_out[i]} - clean_out[i];
      sum += r;
      sum2 += r * r;
      count += 1;
    }
  const double mean = sum / count;
  return std::sqrt(std::max(0.0, sum2 / count - mean * mean)) / kBackground;
}

// Mean over the wall's voxels next to the background minus the mean over the background's
// voxels next to the wall, over the step height: 1 for a perfectly sharp edge, less as the edge
// spreads. Thousands of voxels on each side average the speckle out.
double edge_contrast(const Phantom& p, const std::vector<float>& v) {
  auto index = [](int x, int y, int z) { return (int64_t{z} * kSize + y) * kSize + x; };
  double wall = 0, wall_count = 0, background = 0, background_count = 0;
  for (int z = 1; z < kSize - 1; ++z)
    for (int y = 1; y < kSize - 1; ++y)
      for (int x = 1; x < kSize - 1; ++x) {
        const int64_t i = index(x, y, z);
        bool next_to_other = false;
        for (int64_t j : {index(x - 1, y, z), index(x + 1, y, z), index(x, y - 1, z),
                          index(x, y + 1, z), index(x, y, z - 1), index(x, y, z + 1)})
          next_to_other = next_to_other || p.clean[j] != p.clean[i];
        if (!next_to_other)
          continue;
        if (p.clean[i] == kWall) {
          wall += v[i];
          wall_count += 1;
        } else {
          background += v[i];
          background_count += 1;
        }
      }
  return (wall / wall_count - background / background_count) / (kWall - kBackground);
}

std::vector<float> gaussian(const Phantom& p, const std::vector<float>& in, double sigma,
                            const Options& options) {
  std::vector<float> out(in.size());
  filter_separable(as_const(make_view(const_cast<float*>(in.data()), 3, p.extent)),
                   gaussian_filter(3, {sigma, sigma, sigma, 0}), make_view(out.data(), 3, p.extent),
                   options);
  return out;
}

TEST(AdaptiveQuality, SharperEdgesThanGaussianAtEqualNoiseReduction) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Phantom p = make_phantom(seed);
  Options options;
  options.backend = Backend::Cpu;
  options.boundary = Boundary::Replicate;
  const AdaptiveParameters parameters;  // the defaults
  // The adaptive filter stage by stage, so that its control tensor (from the noisy volume) can
  // also filter the clean phantom: adaptive(noisy) - that is its noise.
  const ConstVolumeView noisy =
      as_const(make_view(const_cast<float*>(p.noisy.data()), 3, p.extent));
  const ConstVolumeView clean =
      as_const(make_view(const_cast<float*>(p.clean.data()), 3, p.extent));
  std::vector<std::vector<float>> control =
      structure_tensor(noisy, design_quadrature_filters(3, parameters.quadrature), options);
  relax_tensor(control, 3, p.extent, parameters.relaxation_sigma, options);
  control_tensor(control, 3, parameters);
  const auto reconstruction = design_reconstruction_filters(3, parameters.reconstruction);
  std::vector<float> adaptive(p.noisy.size()), adaptive_clean(p.noisy.size());
  poison(adaptive);
  poison(adaptive_clean);
  reconstruct(noisy, control, reconstruction, 0, make_view(adaptive.data(), 3, p.extent), options);
  reconstruct(clean, control, reconstruction, 0, make_view(adaptive_clean.data(), 3, p.extent),
              options);
  std::vector<float> whole(p.noisy.size());
  adaptive_filter(noisy, make_view(whole.data(), 3, p.extent), parameters, options);
  ASSERT_EQ(whole, adaptive) << "the stages differ from adaptive_filter";

  const double noisy_noise = flat_noise(p, p.noisy, p.clean);
  const double adaptive_noise = flat_noise(p, adaptive, adaptive_clean);
  ASSERT_LT(adaptive_noise, 0.5 * noisy_noise) << "the adaptive filter hardly reduces the noise";
  double lo = 0.2, hi = 8.0;  // the Gaussian's noise falls with sigma
  for (int it = 0; it < 30; ++it) {
    const double mid = 0.5 * (lo + hi);
    const double noise =
        flat_noise(p, gaussian(p, p.noisy, mid, options), gaussian(p, p.clean, mid, options));
    (noise > adaptive_noise ? lo : hi) = mid;
  }
  const double sigma = 0.5 * (lo + hi);
  const std::vector<float> smoothed = gaussian(p, p.noisy, sigma, options);
  const double adaptive_edge = edge_contrast(p, adaptive);
  const double gaussian_edge = edge_contrast(p, smoothed);
  std::printf(
      "flat-region noise std / background: speckle %.4f, adaptive %.4f, Gaussian (sigma %.3f "
      "voxels) %.4f\nedge contrast / step: noisy %.4f, adaptive %.4f, Gaussian %.4f (ratio "
      "%.3f)\n",
      noisy_noise, adaptive_noise, sigma,
      flat_noise(p, smoothed, gaussian(p, p.clean, sigma, options)), edge_contrast(p, p.noisy),
      adaptive_edge, gaussian_edge, adaptive_edge / gaussian_edge);
  EXPECT_GT(adaptive_edge, 2.0 * gaussian_edge);
}

}  // namespace
}  // namespace ndconv::test
