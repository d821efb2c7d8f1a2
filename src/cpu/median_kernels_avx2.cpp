// The median's selection compiled for AVX2, 8 lanes. src/cpu/sources.cmake gives the
// instruction-set flags and the NDCONV_CPU_ISA and NDCONV_CPU_LANES definitions.
#include "cpu/median_row_kernel.h"

namespace ndconv::cpu {

const MedianKernelSet& median_kernels_avx2() {
  static const MedianKernelSet set = avx2::median::make_median_kernel_set("avx2");
  return set;
}

}  // namespace ndconv::cpu
