// The control tensor of one voxel (the adaptive filter's step 4, docs/adaptive.md), written once
// for the CPU (the engine's control_tensor) and the GPU (src/cuda/bank/control.cu).
//
// Two passes, because the magnitude mapping needs the largest magnitude in the volume: the first
// decomposes T = sum_i l_i e_i e_i^T and returns sum_i mu(l_i / l_1) e_i e_i^T with the voxel's
// magnitude x (l_1, or |T| with the norm normalisation); the second scales that by
// gamma(x / largest x).
#pragma once

#include <cmath>

#include "core/symmetric_eigen.h"
#include "core/host_device.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// The mappings' parameters (AdaptiveParameters' magnitude and eigenvalue mapping).
struct ControlMapping {
  int dims = 3;
  bool by_norm = false;  ///< TensorNormalisation::Norm
  double eigen_alpha = 0.5, eigen_beta = 2.0;
  double magnitude_sigma_beta = 0.09;  ///< magnitude_sigma ^ magnitude_beta
  double magnitude_beta = 2.0;
};

/// The voxels whose magnitudes count towards the largest x (the normalising scale): the box
/// [lo, hi) of a volume of `extent` (x fastest), the voxel v of a buffer being the volume's voxel
/// first + v. dims 0: every voxel counts. A block of a larger image takes the largest over its own
/// voxels, not its halo's, whose tensor the cut falsifies (ndconv.dask, docs/scale-out.md).
struct MagnitudeRegion {
  int dims = 0;
  int64_t extent[kMaxDims] = {1, 1, 1, 1};
  int64_t lo[kMaxDims] = {0, 0, 0, 0};
  int64_t hi[kMaxDims] = {1, 1, 1, 1};
  int64_t first = 0;

  NDCONV_HD bool holds(int64_t v) const {
    int64_t i = first + v;
    for (int a = 0; a < dims; ++a) {
      const int64_t c = i % extent[a];
      i /= extent[a];
      if (c < lo[a] || c >= hi[a])
        return false;
    }
    return true;
  }
};

/// x^b, with the common b = 2 without pow.
NDCONV_HD double control_power(double x, double b) {
  return b == 2.0 ? x * x : pow(x, b);
}

NDCONV_HD bool control_finite(double v) {
#ifdef __CUDA_ARCH__
  return isfinite(v);
#else
  return std::isfinite(v);
#endif
}

/// T's d x d matrix from its d(d+1)/2 components `t`; returns |T|^2 (the norm normalisation's).
template <int d>
NDCONV_HD double control_matrix(const double* t, double* a) {
  double norm = 0;
  for (int i = 0, k = 0; i < d; ++i)
    for (int j = i; j < d; ++j, ++k) {
      a[i * d + j] = a[j * d + i] = t[k];
      norm += (i == j ? 1.0 : 2.0) * t[k] * t[k];
    }
  return norm;
}

/// The rest of the first pass once T = sum_i values[i] e_i e_i^T is decomposed (values in
/// decreasing order, vectors' row i = e_i): `c` receives sum_i mu(l_i / l_1) e_i e_i^T; returns
/// the magnitude x.
template <int d>
NDCONV_HD double control_from_eigen(const ControlMapping& m, const double* values,
                                    const double* vectors, double norm, double* c) {
  double full[d * d] = {};
  double x = 0;
  if (values[0] > 0 && control_finite(values[0])) {
    x = m.by_norm ? sqrt(norm) : values[0];
    const double alpha = m.eigen_alpha, beta = m.eigen_beta;
    for (int i = 0; i < d; ++i) {
      double r = values[i] / values[0];
      r = r < 0 ? 0.0 : r > 1 ? 1.0 : r;
      const double p = control_power(r * (1 - alpha), beta),
                   q = control_power(alpha * (1 - r), beta);
      const double mu = p + q > 0 ? p / (p + q) : 0.0;
      for (int row = 0; row < d; ++row)
        for (int col = row; col < d; ++col)
          full[row * d + col] += mu * vectors[i * d + row] * vectors[i * d + col];
    }
  }
  for (int i = 0, k = 0; i < d; ++i)
    for (int j = i; j < d; ++j, ++k)
      c[k] = full[i * d + j];
  return x;
}

/// First pass on one voxel, for a `d` x `d` tensor (control_shape dispatches on m.dims).
template <int d>
NDCONV_HD double control_shape_of(const ControlMapping& m, const double* t, double* c) {
  double a[d * d] = {}, values[d] = {}, vectors[d * d] = {};
  const double norm = control_matrix<d>(t, a);
  symmetric_eigen<d>(a, values, vectors);
  return control_from_eigen<d>(m, values, vectors, norm, c);
}

/// First pass on one voxel: `t` holds T's d(d+1)/2 components (upper triangle, row by row), `c`
/// receives sum_i mu(l_i / l_1) e_i e_i^T in the same order; returns the magnitude x (0 where T
/// has no positive eigenvalue: C = 0). d = m.dims, 2 to 4.
NDCONV_HD double control_shape(const ControlMapping& m, const double* t, double* c) {
  switch (m.dims) {
    case 2:
      return control_shape_of<2>(m, t, c);
    case 3:
      return control_shape_of<3>(m, t, c);
    default:
      return control_shape_of<4>(m, t, c);
  }
}

/// Second pass: the factor gamma(x / largest) of a voxel of magnitude x (0 when largest is 0).
NDCONV_HD double control_gain(const ControlMapping& m, double x, double largest) {
  const double xb = largest > 0 ? control_power(x / largest, m.magnitude_beta) : 0;
  return xb / (xb + m.magnitude_sigma_beta);
}

}  // namespace ndconv::detail
