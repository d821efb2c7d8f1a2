// The filter bank kernels compiled for AVX-512F, 512-bit vectors, 32 registers.
// src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA, NDCONV_CPU_LANES
// and NDCONV_CPU_REGISTERS definitions; called only when isa_dispatch.cpp has found this
// instruction set usable.
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_avx512() {
  static const BankKernelSet set = avx512::bank::make_bank_kernel_set("avx512");
  return set;
}

}  // namespace ndconv::cpu
