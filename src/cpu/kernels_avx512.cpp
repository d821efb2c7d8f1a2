// The row kernels compiled for AVX-512F, 512-bit vectors, 32 registers.
// Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has checked that this CPU supports them.
#define NDCONV_CPU_ISA avx512
#define NDCONV_CPU_LANES 16
#define NDCONV_CPU_REGISTERS 32
#include "cpu/row_kernel.h"

namespace ndconv::cpu {

const KernelSet& kernels_avx512() {
  static const KernelSet set = avx512::make_kernel_set("avx512");
  return set;
}

}  // namespace ndconv::cpu
