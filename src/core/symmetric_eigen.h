// Eigen-decomposition of a small symmetric matrix (d <= 4) by cyclic Jacobi rotations, for the
// control tensor (control_voxel.h), on the host and on the GPU.
#pragma once

#include <cmath>

#include "core/host_device.h"
#include "ndconv/types.h"

namespace ndconv {

/// The steps of the Jacobi method shared by symmetric_eigen and its lanes' copy
/// (cpu/jacobi_lanes_kernel.h): `Value` is double or a vector of doubles, one matrix per lane;
/// `Isa`, a type of the caller's instruction set, gives each set's instantiation its own name.
/// The sums of the squared off-diagonal (upper) and diagonal elements of `a`.
template <int d, typename Value, typename Isa = void>
NDCONV_HD void jacobi_sums(const Value* a, Value& off, Value& diag) {
  for (int p = 0; p < d; ++p) {
    diag += a[p * d + p] * a[p * d + p];
    for (int q = p + 1; q < d; ++q)
      off += a[p * d + q] * a[p * d + q];
  }
}

/// The rotation J of the plane (p, q) by cosine c and sine s: A <- J^T A J, V <- V J.
template <int d, typename Value, typename Isa = void>
NDCONV_HD void jacobi_rotate(Value* a, Value* v, int p, int q, const Value& c, const Value& s) {
  for (int k = 0; k < d; ++k) {  // A <- A J (columns p, q)
    const Value akp = a[k * d + p], akq = a[k * d + q];
    a[k * d + p] = c * akp - s * akq;
    a[k * d + q] = s * akp + c * akq;
  }
  for (int k = 0; k < d; ++k) {  // A <- J^T A (rows p, q)
    const Value apk = a[p * d + k], aqk = a[q * d + k];
    a[p * d + k] = c * apk - s * aqk;
    a[q * d + k] = s * apk + c * aqk;
  }
  for (int k = 0; k < d; ++k) {  // V <- V J
    const Value vkp = v[k * d + p], vkq = v[k * d + q];
    v[k * d + p] = c * vkp - s * vkq;
    v[k * d + q] = s * vkp + c * vkq;
  }
}

/// The eigenpairs of a diagonalised `a` (A = V diag(a) V^T, V's columns the vectors), in
/// decreasing order: values[i], and vectors' row i.
template <int d>
NDCONV_HD void eigen_in_order(const double* a, const double* v, double* values, double* vectors) {
  int order[kMaxDims] = {0, 1, 2, 3};
  for (int i = 0; i < d; ++i)
    for (int j = i + 1; j < d; ++j)
      if (a[order[j] * d + order[j]] > a[order[i] * d + order[i]]) {
        const int first = order[i];
        order[i] = order[j];
        order[j] = first;
      }
  for (int i = 0; i < d; ++i) {
    values[i] = a[order[i] * d + order[i]];
    for (int k = 0; k < d; ++k)
      vectors[i * d + k] = v[k * d + order[i]];
  }
}

/// a: d x d symmetric, row-major (destroyed). values: eigenvalues in decreasing order;
/// vectors: row i is the unit eigenvector of values[i]. The size is a template parameter so that
/// the loops unroll and the matrix stays in registers (the control tensor runs one per voxel).
template <int d>
NDCONV_HD void symmetric_eigen(double* a, double* values, double* vectors) {
  static_assert(d >= 1 && d <= kMaxDims, "symmetric_eigen takes 1 x 1 to 4 x 4 matrices");
  double v[d * d] = {};
  for (int i = 0; i < d; ++i)
    v[i * d + i] = 1;
  for (int sweep = 0; sweep < 12; ++sweep) {
    double off = 0, diag = 0;
    jacobi_sums<d>(a, off, diag);
    if (off <= 1e-22 * diag || off == 0)  // off-diagonal below 1e-11 of the diagonal
      break;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) {
        const double apq = a[p * d + q];
        if (apq == 0)
          continue;
        const double theta = (a[q * d + q] - a[p * d + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        const double c = 1 / sqrt(t * t + 1), s = t * c;
        jacobi_rotate<d>(a, v, p, q, c, s);
      }
  }
  eigen_in_order<d>(a, v, values, vectors);
}

}  // namespace ndconv
