// The median's selection compiled for AVX-512F, 16 lanes. src/cpu/sources.cmake gives the
// instruction-set flags and the NDCONV_CPU_ISA and NDCONV_CPU_LANES definitions.
#include "cpu/median_row_kernel.h"

namespace ndconv::cpu {

const MedianKernelSet& median_kernels_avx512() {
  static const MedianKernelSet set = avx512::median::make_median_kernel_set("avx512");
  return set;
}

}  // namespace ndconv::cpu
