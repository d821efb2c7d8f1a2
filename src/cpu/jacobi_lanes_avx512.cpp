// The lanes' Jacobi rotations compiled for the avx512 instruction set (jacobi_lanes_kernel.h).
#include "cpu/jacobi_lanes_kernel.h"

namespace ndconv::cpu {

JacobiLanesFn jacobi_lanes_avx512() {
  return &avx512::jacobi::jacobi_lanes;
}

}  // namespace ndconv::cpu
