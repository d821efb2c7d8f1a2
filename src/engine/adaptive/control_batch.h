// The control tensor's first pass (core/control_voxel.h) on cpu::kJacobiLanes voxels at once, for
// the CPU: the voxels' Jacobi eigen-decompositions run side by side in the lanes of the
// instruction set's vectors (cpu/jacobi_lanes.h), so that their rotations (each a chain of square
// roots and divisions) overlap instead of waiting on one another; then, per voxel, the eigenpairs
// in order and the mappings, as the one-voxel code. Each lane computes what that code computes.
#pragma once

#include "core/control_voxel.h"
#include "core/symmetric_eigen.h"
#include "cpu/jacobi_lanes.h"

namespace ndconv::detail {

inline constexpr int kControlLanes = cpu::kJacobiLanes;

/// `t[k * kControlLanes + lane]`: T's component k of each lane's voxel; `c` receives the first
/// pass's tensor in the same layout, `x[lane]` the magnitude (control_shape_of).
template <int d>
void control_shape_lanes(cpu::JacobiLanesFn jacobi, const ControlMapping& m, const double* t,
                         double* c, double* x) {
  constexpr int lanes = kControlLanes, components = d * (d + 1) / 2;
  double a[d * d * lanes], v[d * d * lanes];
  for (int i = 0, k = 0; i < d; ++i)
    for (int j = i; j < d; ++j, ++k)
      for (int l = 0; l < lanes; ++l)
        a[(i * d + j) * lanes + l] = a[(j * d + i) * lanes + l] = t[k * lanes + l];
  jacobi(d, a, v);
  for (int l = 0; l < lanes; ++l) {
    double al[d * d], vl[d * d], tl[components], unused[d * d], values[d], vectors[d * d],
        cl[components];
    for (int i = 0; i < d * d; ++i) {
      al[i] = a[i * lanes + l];
      vl[i] = v[i * lanes + l];
    }
    for (int k = 0; k < components; ++k)
      tl[k] = t[k * lanes + l];
    const double norm = control_matrix<d>(tl, unused);
    eigen_in_order<d>(al, vl, values, vectors);
    x[l] = control_from_eigen<d>(m, values, vectors, norm, cl);
    for (int k = 0; k < components; ++k)
      c[k * lanes + l] = cl[k];
  }
}

}  // namespace ndconv::detail
