// The row kernels compiled for AVX2 + FMA, 256-bit vectors, 16 registers.
// Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has checked that this CPU supports them.
#define NDCONV_CPU_ISA avx2
#define NDCONV_CPU_LANES 8
#define NDCONV_CPU_REGISTERS 16
#include "cpu/row_kernel.h"

namespace ndconv::cpu {

const KernelSet& kernels_avx2() {
  static const KernelSet set = avx2::make_kernel_set("avx2");
  return set;
}

}  // namespace ndconv::cpu
