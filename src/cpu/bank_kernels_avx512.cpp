// The filter bank kernels compiled for AVX-512F, 512-bit vectors, 32 registers.
// Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has found this instruction set usable.
#define NDCONV_CPU_ISA avx512
#define NDCONV_CPU_LANES 16
#define NDCONV_CPU_REGISTERS 32
#include "cpu/bank_row_kernel.h"

namespace ndconv::cpu {

const BankKernelSet& bank_kernels_avx512() {
  static const BankKernelSet set = avx512::bank::make_bank_kernel_set("avx512");
  return set;
}

}  // namespace ndconv::cpu
