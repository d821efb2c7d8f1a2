// The filter bank kernels compiled for AVX2 + FMA, 256-bit vectors, 16 registers.
// Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has found this instruction set usable.
#define NDCONV_CPU_ISA avx2
#define NDCONV_CPU_LANES 8
#define NDCONV_CPU_REGISTERS 16
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_avx2() {
  static const BankKernelSet set = avx2::bank::make_bank_kernel_set("avx2");
  return set;
}

}  // namespace ndconv::cpu
