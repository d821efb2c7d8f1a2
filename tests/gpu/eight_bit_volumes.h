// 8-bit test volumes (integer values 0..255 held as floats), filter taps and the per-voxel accuracy
// measure of issue 49, shared by the tensor-core bank's host emulation test and its GPU test:
// uniform random bytes, dark speckle (most voxels 0..3, a few bright) and an echo-like volume (a
// dark blood pool inside a bright speckled wall on a dim speckled background), each fresh from a
// seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/bank_problem.h"
#include "core/parallel_for.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {

enum class EightBitKind { Uniform, DarkSpeckle, EchoLike };

inline const char* eight_bit_name(EightBitKind k) {
  switch (k) {
    case EightBitKind::Uniform:
      return "uniform";
    case EightBitKind::DarkSpeckle:
      return "dark speckle";
    default:
      return "echo-like";
  }
}

constexpr EightBitKind kEightBitKinds[] = {EightBitKind::Uniform, EightBitKind::DarkSpeckle,
                                           EightBitKind::EchoLike};

/// A 3D volume of extents n (x fastest) of `kind`; a 4D sequence where n[3] > 1 (the echo-like
/// pool's radius changing over time: a beating ventricle).
inline std::vector<float> eight_bit_volume(EightBitKind kind, const Index& n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), dark(0, 3), bright(100, 255);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Speckle: a Rayleigh-distributed multiplier (mean about 1).
  auto rayleigh = [&] { return 0.8 * std::sqrt(-2.0 * std::log(1.0 - unit(rng))); };
  const int64_t frames = std::max<int64_t>(1, n[3]);
  std::vector<float> v(static_cast<size_t>(n[0] * n[1] * n[2] * frames));
  size_t i = 0;
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t z = 0; z < n[2]; ++z)
      for (int64_t y = 0; y < n[1]; ++y)
        for (int64_t x = 0; x < n[0]; ++x, ++i) {
          double value = 0;
          if (kind == EightBitKind::Uniform) {
            value = byte(rng);
          } else if (kind == EightBitKind::DarkSpeckle) {
            value = unit(rng) < 0.03 ? bright(rng) : dark(rng);
          } else {
            // Distance from the centre in units of the half extents: the pool inside 0.45, the wall
            // to 0.7, the background beyond.
            const double dx = (x + 0.5) / n[0] - 0.5, dy = (y + 0.5) / n[1] - 0.5,
                         dz = (z + 0.5) / n[2] - 0.5;
            const double r = 2.0 * std::sqrt(dx * dx + dy * dy + dz * dz);
            const double pool = 0.45 - 0.1 * static_cast<double>(t) / static_cast<double>(frames);
            const double amplitude = r < pool ? 2.0 : r < 0.7 ? 160.0 : 40.0;
            value = std::min(255.0, std::round(amplitude * rayleigh()));
          }
          v[i] = static_cast<float>(value);
        }
  return v;
}

/// The quadrature bank's real 7^d filters (12 in 3D: the bench's bank_3d; 24 in 4D: bank_4d),
/// contiguous, in correlation order as the bank reads them.
inline std::vector<float> quadrature_bank_taps(int dims = 3) {
  QuadratureDesign q;
  q.size = 7;
  std::vector<float> taps;
  for (const DesignedFilter& f : design_quadrature_filters(dims, q)) {
    taps.insert(taps.end(), f.real.begin(), f.real.end());
    taps.insert(taps.end(), f.imag.begin(), f.imag.end());
  }
  return taps;
}

/// Taps of `count` size^dims filters (7^dims unless told): uniform in [-1, 1) with a spread of
/// magnitudes (some taps 1e-4 of the largest), so that every weight digit matters.
inline std::vector<float> spread_taps(int count, uint64_t seed, int dims = 3, int size = 7) {
  const int64_t per = int64_t{size} * size * size * (dims == 4 ? size : 1);
  std::vector<float> taps = random_values(int64_t{count} * per, seed);
  for (size_t i = 0; i < taps.size(); ++i)
    taps[i] *= std::pow(10.0f, -static_cast<float>(i % 5));
  return taps;
}

/// The bank problem of `count` 7^dims filters (`taps`, contiguous) over the 3D (4D) volume `input`
/// of extents n: correlation, zero boundary, `same` region; no outputs yet.
inline detail::BankProblem seven_cubed_bank(const std::vector<float>& input, const Index& n,
                                            int count, const std::vector<float>& taps,
                                            int dims = 3) {
  detail::BankProblem p;
  p.input = make_view(input.data(), dims, n);
  p.filter_extent = {7, 7, 7, dims == 4 ? 7 : 1};
  p.count = count;
  p.taps = taps.data();
  p.offset = {-3, -3, -3, dims == 4 ? -3 : 0};
  p.boundary = Boundary::Zero;
  p.output_extent = n;
  return p;
}

/// The adaptive filter's reconstruction filters (the lowpass and d(d+1)/2 highpass filters of
/// size^dims: 11^4 by default, 9^4 in the echo preset; contiguous, the design's order, which the
/// accuracy measures do not mind).
inline std::vector<float> reconstruction_bank_taps(int size = 11, int dims = 4) {
  ReconstructionDesign r;
  r.size = size;
  std::vector<float> taps;
  for (const DesignedFilter& f : design_reconstruction_filters(dims, r))
    taps.insert(taps.end(), f.real.begin(), f.real.end());
  return taps;
}

/// Per-voxel weights of a weighted sum of `count` filters over `voxels` outputs, as the adaptive
/// filter's: 1 for filter 0 (the lowpass), the others uniform in [-1, 1).
inline std::vector<float> sum_weights(int count, int64_t voxels, uint64_t seed) {
  std::vector<float> w = random_values(int64_t{count} * voxels, seed);
  std::fill(w.begin(), w.begin() + voxels, 1.0f);
  return w;
}

/// Per-voxel accuracy of a bank's outputs: the float64 correlations (zero boundary, `same`
/// region) of each filter and sum_j |w_j| |x_j| at every voxel; a 4D volume where filter[3] > 1.
struct BankReference {
  std::vector<std::vector<double>> values, magnitudes;
};

inline BankReference bank_reference(const std::vector<float>& input, const Index& n,
                                    const Index& filter, int count,
                                    const std::vector<float>& taps) {
  const int dims = filter[3] > 1 ? 4 : 3;
  const ConstVolumeView in = make_view(input.data(), dims, n);
  std::vector<float> magnitude_input(input.size());
  std::transform(input.begin(), input.end(), magnitude_input.begin(),
                 [](float x) { return std::fabs(x); });
  const ConstVolumeView magnitude_in =
      make_view(static_cast<const float*>(magnitude_input.data()), dims, n);
  const int64_t taps_per = filter[0] * filter[1] * filter[2] * std::max<int64_t>(1, filter[3]);
  BankReference r;
  r.values.resize(count);
  r.magnitudes.resize(count);
  // The filters on every hardware thread: a 4D bank's float64 references take minutes on one.
  core::parallel_for(
      core::resolve_thread_count(0), count,
      [&](int64_t begin, int64_t end, int) {
        for (int64_t f = begin; f < end; ++f) {
          const float* w = taps.data() + f * taps_per;
          std::vector<float> magnitude(w, w + taps_per);
          for (float& m : magnitude)
            m = std::fabs(m);
          r.values[f] = reference_dense(in, DenseFilter{dims, filter, w}, Operation::Correlation,
                                        Boundary::Zero, OutputRegion::Same);
          r.magnitudes[f] =
              reference_dense(magnitude_in, DenseFilter{dims, filter, magnitude.data()},
                              Operation::Correlation, Boundary::Zero, OutputRegion::Same);
        }
      },
      {});
  return r;
}

/// The largest |out - reference| / sum |w| |x| over every voxel and filter (`out`: the filters'
/// volumes contiguous); a voxel with sum |w| |x| = 0 must be exactly 0; NaN anywhere gives +Inf.
inline double worst_voxel_error(const BankReference& r, const float* out) {
  double worst = 0;
  int64_t offset = 0;
  for (size_t f = 0; f < r.values.size(); ++f) {
    const std::vector<double>& ref = r.values[f];
    for (size_t v = 0; v < ref.size(); ++v) {
      const double got = out[offset + static_cast<int64_t>(v)];
      const double error = std::fabs(got - ref[v]);
      if (!(error == error))
        return std::numeric_limits<double>::infinity();
      const double scale = r.magnitudes[f][v];
      if (scale == 0) {
        if (error != 0)
          return std::numeric_limits<double>::infinity();
        continue;
      }
      worst = std::max(worst, error / scale);
    }
    offset += static_cast<int64_t>(ref.size());
  }
  return worst;
}

/// The largest |sum - reference| / sum_f |w_f| sum |h_f| |x| of a weighted sum `sum` (one volume)
/// with `weights` (the filters' volumes contiguous) against the float64 responses; NaN gives
/// +Inf, as does a nonzero sum where the measure is 0.
inline double worst_sum_error(const BankReference& r, const std::vector<float>& weights,
                              const float* sum) {
  double worst = 0;
  const size_t voxels = r.values[0].size();
  for (size_t v = 0; v < voxels; ++v) {
    double expected = 0, scale = 0;
    for (size_t f = 0; f < r.values.size(); ++f) {
      const double w = weights[f * voxels + v];
      expected += w * r.values[f][v];
      scale += std::fabs(w) * r.magnitudes[f][v];
    }
    const double error = std::fabs(sum[v] - expected);
    if (!(error == error))
      return std::numeric_limits<double>::infinity();
    if (scale == 0) {
      if (error != 0)
        return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, error / scale);
  }
  return worst;
}

}  // namespace ndconv::test
