// The filter bank kernels compiled for AVX2 + FMA, 256-bit vectors, 16 registers.
// src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA, NDCONV_CPU_LANES
// and NDCONV_CPU_REGISTERS definitions; called only when isa_dispatch.cpp has found this
// instruction set usable.
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_avx2() {
  static const BankKernelSet set = avx2::bank::make_bank_kernel_set("avx2");
  return set;
}

}  // namespace ndconv::cpu
