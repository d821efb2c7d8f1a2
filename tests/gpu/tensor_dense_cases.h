// The tensor-core dense filter's test cases (src/cuda/tensor_dense/), shared by its host emulation
// test and its GPU test: 8-bit volumes as bytes, the float64 correlation with the boundary applied
// and the per-voxel accuracy measure of issue 49 (max |error| / sum |w| |x|).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <limits>
#include <vector>

#include "core/problem.h"
#include "eight_bit_volumes.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::test {

/// An 8-bit 3D volume of `kind` (eight_bit_volume) as bytes.
inline std::vector<uint8_t> eight_bit_bytes(EightBitKind kind, const Index& n, uint64_t seed) {
  const std::vector<float> v = eight_bit_volume(kind, n, seed);
  std::vector<uint8_t> bytes(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    bytes[i] = static_cast<uint8_t>(v[i]);
  return bytes;
}

/// The `same` correlation of `bytes` (extents n, x fastest) with a size^3 filter under
/// `boundary`, in float64, and sum |w| |x| per voxel.
struct DenseReference {
  std::vector<double> value, magnitude;
};
inline DenseReference dense_reference(const std::vector<uint8_t>& bytes, const Index& n,
                                      const std::vector<float>& taps, int size, Boundary boundary) {
  DenseReference r;
  const int64_t voxels = n[0] * n[1] * n[2];
  r.value.assign(static_cast<size_t>(voxels), 0);
  r.magnitude.assign(static_cast<size_t>(voxels), 0);
  const int h = size / 2;
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x) {
        double v = 0, m = 0;
        for (int c = 0; c < size; ++c) {
          const int64_t iz = detail::boundary_index(z + c - h, n[2], boundary);
          for (int b = 0; b < size; ++b) {
            const int64_t iy = detail::boundary_index(y + b - h, n[1], boundary);
            for (int a = 0; a < size; ++a) {
              const int64_t ix = detail::boundary_index(x + a - h, n[0], boundary);
              if (ix < 0 || iy < 0 || iz < 0)
                continue;
              const double w = taps[static_cast<size_t>((c * size + b) * size + a)];
              const double in = bytes[static_cast<size_t>((iz * n[1] + iy) * n[0] + ix)];
              v += w * in;
              m += std::fabs(w) * in;
            }
          }
        }
        const size_t i = static_cast<size_t>((z * n[1] + y) * n[0] + x);
        r.value[i] = v;
        r.magnitude[i] = m;
      }
  return r;
}

/// Max over voxels of |out - reference| / sum |w| |x| (voxels where that sum is 0 must be exact);
/// infinity for a NaN.
inline double worst_dense_error(const DenseReference& r, const float* out) {
  double worst = 0;
  for (size_t i = 0; i < r.value.size(); ++i) {
    const double e = std::fabs(static_cast<double>(out[i]) - r.value[i]);
    if (!std::isfinite(e))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, r.magnitude[i] > 0
                                ? e / r.magnitude[i]
                                : (e > 0 ? std::numeric_limits<double>::infinity() : 0.0));
  }
  return worst;
}

/// "tensor cores vs FP32" errors for a test's recorded properties.
inline std::string error_pair(double tensor_cores, double fp32) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3g vs %.3g", tensor_cores, fp32);
  return text;
}

}  // namespace ndconv::test
