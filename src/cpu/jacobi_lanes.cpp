// The lanes' Jacobi rotations of the row kernels' instruction set (jacobi_lanes.h).
#include "cpu/jacobi_lanes.h"

#include <cstring>

#include "cpu/isa_dispatch.h"

namespace ndconv::cpu {

JacobiLanesFn select_jacobi_lanes() {
#if NDCONV_CPU_X86_KERNELS
  const char* isa = select_kernel_set().isa;
  if (std::strcmp(isa, "avx512") == 0)
    return jacobi_lanes_avx512();
  if (std::strcmp(isa, "avx2") == 0)
    return jacobi_lanes_avx2();
#endif
  return jacobi_lanes_generic();
}

}  // namespace ndconv::cpu
