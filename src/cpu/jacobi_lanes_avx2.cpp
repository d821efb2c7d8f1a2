// The lanes' Jacobi rotations compiled for the avx2 instruction set (jacobi_lanes_kernel.h).
#include "cpu/jacobi_lanes_kernel.h"

namespace ndconv::cpu {

JacobiLanesFn jacobi_lanes_avx2() {
  return &avx2::jacobi::jacobi_lanes;
}

}  // namespace ndconv::cpu
