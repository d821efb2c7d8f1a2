// The median's selection compiled for SSE2 (the x86-64 baseline) or the target's 128-bit SIMD, 4
// lanes. src/cpu/sources.cmake gives the instruction-set flags and the NDCONV_CPU_ISA and
// NDCONV_CPU_LANES definitions.
#include "cpu/median_row_kernel.h"

namespace ndconv::cpu {

const MedianKernelSet& median_kernels_generic() {
  static const MedianKernelSet set = generic::median::make_median_kernel_set("generic");
  return set;
}

}  // namespace ndconv::cpu
