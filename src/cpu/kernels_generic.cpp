// The row kernels compiled for SSE2 (x86-64 baseline) or the target's 128-bit SIMD.
// src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA, NDCONV_CPU_LANES
// and NDCONV_CPU_REGISTERS definitions; called only when isa_dispatch.cpp has found this
// instruction set usable.
#include "cpu/row_kernel.h"

namespace ndconv::cpu {

const KernelSet& kernels_generic() {
  static const KernelSet set = generic::make_kernel_set("generic");
  return set;
}

}  // namespace ndconv::cpu
