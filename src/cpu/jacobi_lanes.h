// The Jacobi eigen-decomposition of core/symmetric_eigen.h on kJacobiLanes small symmetric
// matrices at once, one per lane of a vector, for the adaptive filter's control tensor (one
// decomposition per voxel, engine/adaptive/control_batch.h). Compiled once per instruction set
// (jacobi_lanes_kernel.h, jacobi_lanes_<isa>.cpp) and chosen at run time with the row kernels.
#pragma once

namespace ndconv::cpu {

inline constexpr int kJacobiLanes = 8;

/// a[(i * d + j) * kJacobiLanes + lane]: lane's d x d symmetric matrix (2 <= d <= 4), diagonalised
/// in place; v, in the same layout, receives the rotations' product (A = V diag(a) V^T). Each lane
/// runs the rotations of symmetric_eigen, in the same order and with the same arithmetic (no
/// contraction into fused multiply-adds), until its own matrix has converged.
using JacobiLanesFn = void (*)(int d, double* a, double* v);

/// The function of the instruction set the row kernels use (isa_dispatch.h).
JacobiLanesFn select_jacobi_lanes();

JacobiLanesFn jacobi_lanes_generic();
JacobiLanesFn jacobi_lanes_avx2();
JacobiLanesFn jacobi_lanes_avx512();

}  // namespace ndconv::cpu
