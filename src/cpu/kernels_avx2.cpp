// The row kernels compiled for AVX2 + FMA, 256-bit vectors, 16 registers.
// src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA, NDCONV_CPU_LANES
// and NDCONV_CPU_REGISTERS definitions; called only when isa_dispatch.cpp has found this
// instruction set usable.
#include "cpu/row_kernel.h"

namespace ndconv::cpu {

const KernelSet& kernels_avx2() {
  static const KernelSet set = avx2::make_kernel_set("avx2");
  return set;
}

}  // namespace ndconv::cpu
