#include "perf/phantom.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace ndconv::perf {

namespace {

constexpr double kPi = 3.14159265358979323846;

// splitmix64: a fast, well-mixed generator; one per slice, seeded from (seed, t, z), so that the
// result does not depend on how the slices are shared among threads.
struct SliceRandom {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform_open() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
};

// Speckle of one slice: a complex Gaussian field smoothed by a 3x3 binomial filter (the
// resolution cell spans a few voxels), its magnitude scaled to mean 1.
void speckle_slice(int64_t nx, int64_t ny, SliceRandom& rng, std::vector<float>& out) {
  const int64_t px = nx + 2, py = ny + 2;
  std::vector<float> re(static_cast<std::size_t>(px * py)), im(re.size());
  for (std::size_t i = 0; i < re.size(); ++i) {
    // Box-Muller: two independent unit normals.
    const double r = std::sqrt(-2.0 * std::log(rng.uniform_open()));
    const double a = 2.0 * kPi * rng.uniform_open();
    re[i] = static_cast<float>(r * std::cos(a));
    im[i] = static_cast<float>(r * std::sin(a));
  }
  // Each component after the [1 2 1]/4 x [1 2 1]/4 filter has variance (6/16)^2; a Rayleigh
  // amplitude of parameter s has mean s * sqrt(pi / 2).
  const double mean = (6.0 / 16.0) * std::sqrt(kPi / 2.0);
  const float scale = static_cast<float>(1.0 / mean);
  auto smooth = [&](const std::vector<float>& f, int64_t x, int64_t y) {
    const float* r0 = &f[static_cast<std::size_t>(y * px + x)];
    const float* r1 = r0 + px;
    const float* r2 = r1 + px;
    const float row0 = r0[0] + 2 * r0[1] + r0[2], row1 = r1[0] + 2 * r1[1] + r1[2],
                row2 = r2[0] + 2 * r2[1] + r2[2];
    return (row0 + 2 * row1 + row2) * (1.0f / 16.0f);
  };
  out.resize(static_cast<std::size_t>(nx * ny));
  for (int64_t y = 0; y < ny; ++y) {
    for (int64_t x = 0; x < nx; ++x) {
      const float a = smooth(re, x, y), b = smooth(im, x, y);
      out[static_cast<std::size_t>(y * nx + x)] = std::sqrt(a * a + b * b) * scale;
    }
  }
}

}  // namespace

double echo_amplitude(const Shape& s, int64_t x, int64_t y, int64_t z, int64_t t) {
  // Normalised coordinates in [-1, 1]; the probe sits at the top of the volume (z = 0).
  const double u = 2.0 * (x + 0.5) / s.extent[0] - 1.0;
  const double v = 2.0 * (y + 0.5) / s.extent[1] - 1.0;
  const double depth = (z + 0.5) / s.extent[2];
  // Sector: a pyramid of half-angle ~45 degrees from the probe, about half the volume.
  const double half_width = 0.15 + depth;
  if (std::abs(u) > half_width || std::abs(v) > half_width || depth < 0.04)
    return 0.0;
  const int64_t frames = s.dims == 4 ? s.extent[3] : 1;
  const double phase = 2.0 * kPi * static_cast<double>(t) / static_cast<double>(frames);
  const double beat = 1.0 + 0.12 * std::sin(phase);  // contraction and relaxation
  // The left ventricle: an ellipsoid centred at mid-depth, long axis along z.
  const double cx = u / (0.38 * beat), cy = v / (0.34 * beat), cz = (depth - 0.55) / (0.36 * beat);
  const double r = std::sqrt(cx * cx + cy * cy + cz * cz);
  const double wall = 0.28;  // relative thickness of the myocardium
  const double shell = std::exp(-std::pow((r - 1.0 - 0.5 * wall) / (0.5 * wall), 4));
  const double blood = r < 1.0 ? 0.06 : 0.25;  // blood pool dark, other tissue dim
  // Attenuation with depth, partly compensated by the scanner's gain.
  const double gain = 1.0 - 0.35 * depth;
  return std::min(1.0, gain * std::max(blood, shell));
}

std::vector<uint8_t> make_echo_sequence(const Shape& shape, uint64_t seed) {
  if (shape.dims != 3 && shape.dims != 4)
    throw std::invalid_argument("make_echo_sequence: a 3D or 4D shape is needed");
  const int64_t nx = shape.extent[0], ny = shape.extent[1], nz = shape.extent[2];
  const int64_t frames = shape.dims == 4 ? shape.extent[3] : 1;
  std::vector<uint8_t> out(static_cast<std::size_t>(shape.count()));
  const int64_t slices = nz * frames;
  auto work = [&](int64_t first, int64_t step) {
    std::vector<float> speckle;
    for (int64_t s = first; s < slices; s += step) {
      const int64_t z = s % nz, t = s / nz;
      SliceRandom rng{seed ^ (0x632BE59BD9B4E019ULL * static_cast<uint64_t>(s + 1))};
      speckle_slice(nx, ny, rng, speckle);
      uint8_t* dst = &out[static_cast<std::size_t>(s * nx * ny)];
      for (int64_t y = 0; y < ny; ++y) {
        for (int64_t x = 0; x < nx; ++x) {
          const double a = echo_amplitude(shape, x, y, z, t);
          const double g = kEchoFullScale * a * speckle[static_cast<std::size_t>(y * nx + x)];
          dst[y * nx + x] = static_cast<uint8_t>(std::min(255.0, std::round(g)));
        }
      }
    }
  };
  const int64_t threads = std::max<int64_t>(
      1, std::min<int64_t>(slices, static_cast<int64_t>(std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i)
    pool.emplace_back(work, i, threads);
  work(0, threads);
  for (auto& th : pool)
    th.join();
  return out;
}

}  // namespace ndconv::perf
