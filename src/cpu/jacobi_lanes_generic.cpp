// The lanes' Jacobi rotations compiled for the generic instruction set (jacobi_lanes_kernel.h).
#include "cpu/jacobi_lanes_kernel.h"

namespace ndconv::cpu {

JacobiLanesFn jacobi_lanes_generic() {
  return &generic::jacobi::jacobi_lanes;
}

}  // namespace ndconv::cpu
