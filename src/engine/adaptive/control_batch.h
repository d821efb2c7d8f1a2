// The control tensor's first pass (core/control_voxel.h) on kControlLanes voxels at once, for the
// CPU: the Jacobi eigen-decomposition of core/symmetric_eigen.h with every voxel in its own lane
// of a vector, so that the voxels' rotations (each a chain of square roots and divisions) overlap
// instead of waiting on one another. A lane whose matrix has converged, or whose rotation would
// not rotate (a zero off-diagonal), takes the identity rotation (c = 1, s = 0), which leaves its
// values as they are: each lane computes what the one-voxel code computes, in the same order.
#pragma once

#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/control_voxel.h"
#include "core/symmetric_eigen.h"

namespace ndconv::detail {

inline constexpr int kControlLanes = 8;
using ControlLanes = double __attribute__((vector_size(kControlLanes * sizeof(double))));
using ControlMask = decltype(ControlLanes{} < ControlLanes{});

// In place: a function returning a vector wider than the baseline's registers would change the
// ABI between instruction sets (GCC's -Wpsabi). On x86-64 two lanes per SSE2 instruction (the
// baseline; std::sqrt per lane would check errno on every call); its arguments here are >= 1.
inline void lanes_sqrt(ControlLanes& x) {
#if defined(__SSE2__)
  for (int l = 0; l < kControlLanes; l += 2) {
    const __m128d pair = _mm_sqrt_pd(_mm_set_pd(x[l + 1], x[l]));
    x[l] = _mm_cvtsd_f64(pair);
    x[l + 1] = _mm_cvtsd_f64(_mm_unpackhi_pd(pair, pair));
  }
#else
  for (int l = 0; l < kControlLanes; ++l)
    x[l] = std::sqrt(x[l]);
#endif
}

/// `t[k][lane]`: T's component k of each lane's voxel; `c[k][lane]` receives the first pass's
/// tensor, `x[lane]` the magnitude (control_shape_of).
template <int d>
void control_shape_lanes(const ControlMapping& m, const ControlLanes* t, ControlLanes* c,
                         double* x) {
  constexpr int components = d * (d + 1) / 2;
  ControlLanes a[d * d], v[d * d];
  for (int i = 0, k = 0; i < d; ++i)
    for (int j = i; j < d; ++j, ++k)
      a[i * d + j] = a[j * d + i] = t[k];
  const ControlLanes zero = {}, one = zero + 1.0;
  for (int i = 0; i < d * d; ++i)
    v[i] = i % (d + 1) == 0 ? one : zero;
  ControlMask active = zero == zero;  // every lane
  for (int sweep = 0; sweep < 12; ++sweep) {
    ControlLanes off = zero, diag = zero;
    for (int p = 0; p < d; ++p) {
      diag += a[p * d + p] * a[p * d + p];
      for (int q = p + 1; q < d; ++q)
        off += a[p * d + q] * a[p * d + q];
    }
    active = active & ~((off <= 1e-22 * diag) | (off == 0));
    bool any = false;
    for (int l = 0; l < kControlLanes; ++l)
      any = any || active[l] != 0;
    if (!any)
      break;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) {
        const ControlLanes apq = a[p * d + q];
        const ControlMask rotate = active & (apq != 0);
        const ControlLanes theta = (a[q * d + q] - a[p * d + p]) / (2 * apq);
        const ControlLanes sign = theta >= 0 ? one : -one;
        ControlLanes hyp = theta * theta + 1;
        lanes_sqrt(hyp);
        const ControlLanes tan = sign / ((theta < 0 ? -theta : theta) + hyp);
        ControlLanes cos_rotation = tan * tan + 1;
        lanes_sqrt(cos_rotation);
        cos_rotation = 1 / cos_rotation;
        const ControlLanes cs = rotate ? cos_rotation : one;
        const ControlLanes sn = rotate ? tan * cos_rotation : zero;
        for (int k = 0; k < d; ++k) {  // A <- A J (columns p, q)
          const ControlLanes akp = a[k * d + p], akq = a[k * d + q];
          a[k * d + p] = cs * akp - sn * akq;
          a[k * d + q] = sn * akp + cs * akq;
        }
        for (int k = 0; k < d; ++k) {  // A <- J^T A (rows p, q)
          const ControlLanes apk = a[p * d + k], aqk = a[q * d + k];
          a[p * d + k] = cs * apk - sn * aqk;
          a[q * d + k] = sn * apk + cs * aqk;
        }
        for (int k = 0; k < d; ++k) {  // V <- V J
          const ControlLanes vkp = v[k * d + p], vkq = v[k * d + q];
          v[k * d + p] = cs * vkp - sn * vkq;
          v[k * d + q] = sn * vkp + cs * vkq;
        }
      }
  }
  // Per lane: the eigenpairs in order and the mappings, as the one-voxel code.
  for (int l = 0; l < kControlLanes; ++l) {
    double al[d * d], vl[d * d], tl[components], values[d], vectors[d * d], cl[components];
    for (int i = 0; i < d * d; ++i) {
      al[i] = a[i][l];
      vl[i] = v[i][l];
    }
    for (int k = 0; k < components; ++k)
      tl[k] = t[k][l];
    double unused[d * d];
    const double norm = control_matrix<d>(tl, unused);
    eigen_in_order<d>(al, vl, values, vectors);
    x[l] = control_from_eigen<d>(m, values, vectors, norm, cl);
    for (int k = 0; k < components; ++k)
      c[k][l] = cl[k];
  }
}

}  // namespace ndconv::detail
