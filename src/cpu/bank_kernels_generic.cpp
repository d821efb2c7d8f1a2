// The filter bank kernels compiled for SSE2 (x86-64 baseline) or the target's 128-bit SIMD, 16
// registers. Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has found this instruction set usable.
#define NDCONV_CPU_ISA generic
#define NDCONV_CPU_LANES 4
#define NDCONV_CPU_REGISTERS 16
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_generic() {
  static const BankKernelSet set = generic::bank::make_bank_kernel_set("generic");
  return set;
}

}  // namespace ndconv::cpu
