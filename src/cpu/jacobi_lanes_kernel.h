// The lanes' Jacobi rotations (jacobi_lanes.h), written once and compiled once per instruction set
// (jacobi_lanes_<isa>.cpp; src/cpu/sources.cmake gives the flags and NDCONV_CPU_ISA). Only
// compiler builtins are used, as in row_kernel.h. A lane whose matrix has converged, or whose
// off-diagonal element is zero, takes the identity rotation (c = 1, s = 0), which leaves its
// values as they are, so each lane computes what the one-matrix code computes.
#pragma once

#include "cpu/jacobi_lanes.h"

#if !defined(NDCONV_CPU_ISA)
#error "jacobi_lanes_kernel.h needs NDCONV_CPU_ISA (sources.cmake)"
#endif

namespace ndconv::cpu::NDCONV_CPU_ISA::jacobi {

typedef double Lanes __attribute__((vector_size(kJacobiLanes * sizeof(double))));
typedef decltype(Lanes{} < Lanes{}) Mask;

// In place (a function returning a vector wider than the baseline's registers would change the
// ABI): the units are built with -fno-math-errno, so this is one square-root instruction per lane
// or per vector.
inline void lanes_sqrt(Lanes& x) {
  for (int l = 0; l < kJacobiLanes; ++l)
    x[l] = __builtin_sqrt(x[l]);
}

template <int d>
void rotate_lanes(double* a_out, double* v_out) {
  Lanes a[d * d], v[d * d];
  __builtin_memcpy(a, a_out, sizeof a);
  const Lanes zero = {}, one = zero + 1.0;
  for (int i = 0; i < d * d; ++i)
    v[i] = i % (d + 1) == 0 ? one : zero;
  Mask active = zero == zero;  // every lane
  for (int sweep = 0; sweep < 12; ++sweep) {
    Lanes off = zero, diag = zero;
    for (int p = 0; p < d; ++p) {
      diag += a[p * d + p] * a[p * d + p];
      for (int q = p + 1; q < d; ++q)
        off += a[p * d + q] * a[p * d + q];
    }
    active = active & ~((off <= 1e-22 * diag) | (off == 0));
    bool any = false;
    for (int l = 0; l < kJacobiLanes; ++l)
      any = any || active[l] != 0;
    if (!any)
      break;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) {
        const Lanes apq = a[p * d + q];
        const Mask rotate = active & (apq != 0);
        const Lanes theta = (a[q * d + q] - a[p * d + p]) / (2 * apq);
        const Lanes sign = theta >= 0 ? one : -one;
        Lanes hyp = theta * theta + 1;
        lanes_sqrt(hyp);
        const Lanes tan = sign / ((theta < 0 ? -theta : theta) + hyp);
        Lanes cos_rotation = tan * tan + 1;
        lanes_sqrt(cos_rotation);
        cos_rotation = 1 / cos_rotation;
        const Lanes cs = rotate ? cos_rotation : one;
        const Lanes sn = rotate ? tan * cos_rotation : zero;
        for (int k = 0; k < d; ++k) {  // A <- A J (columns p, q)
          const Lanes akp = a[k * d + p], akq = a[k * d + q];
          a[k * d + p] = cs * akp - sn * akq;
          a[k * d + q] = sn * akp + cs * akq;
        }
        for (int k = 0; k < d; ++k) {  // A <- J^T A (rows p, q)
          const Lanes apk = a[p * d + k], aqk = a[q * d + k];
          a[p * d + k] = cs * apk - sn * aqk;
          a[q * d + k] = sn * apk + cs * aqk;
        }
        for (int k = 0; k < d; ++k) {  // V <- V J
          const Lanes vkp = v[k * d + p], vkq = v[k * d + q];
          v[k * d + p] = cs * vkp - sn * vkq;
          v[k * d + q] = sn * vkp + cs * vkq;
        }
      }
  }
  __builtin_memcpy(a_out, a, sizeof a);
  __builtin_memcpy(v_out, v, sizeof v);
}

inline void jacobi_lanes(int d, double* a, double* v) {
  switch (d) {
    case 2:
      return rotate_lanes<2>(a, v);
    case 3:
      return rotate_lanes<3>(a, v);
    default:
      return rotate_lanes<4>(a, v);
  }
}

}  // namespace ndconv::cpu::NDCONV_CPU_ISA::jacobi
