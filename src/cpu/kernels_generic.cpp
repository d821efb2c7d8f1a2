// The row kernels compiled for SSE2 (x86-64 baseline) or the target's 128-bit SIMD.
// Built with the instruction-set flags of src/cpu/sources.cmake; called only when
// isa_dispatch.cpp has checked that this CPU supports them.
#define NDCONV_CPU_ISA generic
#define NDCONV_CPU_LANES 4
#define NDCONV_CPU_REGISTERS 16
#include "cpu/row_kernel.h"

namespace ndconv::cpu {

const KernelSet& kernels_generic() {
  static const KernelSet set = generic::make_kernel_set("generic");
  return set;
}

}  // namespace ndconv::cpu
