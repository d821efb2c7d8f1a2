// The filter bank kernels compiled for SSE2 (x86-64 baseline) or the target's 128-bit SIMD, 16
// registers.
// src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA, NDCONV_CPU_LANES
// and NDCONV_CPU_REGISTERS definitions; called only when isa_dispatch.cpp has found this
// instruction set usable.
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_generic() {
  static const BankKernelSet set = generic::bank::make_bank_kernel_set("generic");
  return set;
}

}  // namespace ndconv::cpu
