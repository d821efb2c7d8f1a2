// The lanes' Jacobi rotations (jacobi_lanes.h), written once and compiled once per instruction set
// (jacobi_lanes_<isa>.cpp; src/cpu/sources.cmake gives the flags and NDCONV_CPU_ISA). Besides
// compiler builtins (row_kernel.h says why) it uses only core/symmetric_eigen.h's steps,
// instantiated with this set's own tag type. A lane whose matrix has converged, or whose
// off-diagonal element is zero, takes the identity rotation (c = 1, s = 0), which leaves its
// values as they are, so each lane computes what the one-matrix code computes.
#pragma once

#include "core/symmetric_eigen.h"
#include "cpu/jacobi_lanes.h"

#if !defined(NDCONV_CPU_ISA)
#error "jacobi_lanes_kernel.h needs NDCONV_CPU_ISA (sources.cmake)"
#endif

namespace ndconv::cpu::NDCONV_CPU_ISA::jacobi {

typedef double Lanes __attribute__((vector_size(kJacobiLanes * sizeof(double))));
typedef decltype(Lanes{} < Lanes{}) Mask;
/// This instruction set's name for the shared Jacobi steps' instantiations.
struct Isa {};

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
    jacobi_sums<d, Lanes, Isa>(a, off, diag);
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
        jacobi_rotate<d, Lanes, Isa>(a, v, p, q, cs, sn);
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
