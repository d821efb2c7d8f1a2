// The CPU median's hot loops as the driver (median.cpp) sees them: the selection of one output
// row's medians from its window's rows of keys (core/median_key.h), and the conversion of floats
// to keys. Compiled once per instruction set (median_row_kernel.h, median_kernels_<isa>.cpp) and
// chosen at run time with the row kernels (isa_dispatch.h).
#pragma once

#include <cstdint>

namespace ndconv::cpu {

/// One output row: nx medians along x, each of the window whose rows are `rows` (keys, x
/// contiguous, already mapped by the boundary rule along x): output x reads rows[i][x + dx] for
/// dx in [0, span). Every row must be readable up to round_up(nx, kMaxLanes) + span - 1 keys.
struct MedianRow {
  const uint32_t* const* rows = nullptr;
  int64_t row_count = 0;
  int span = 1;        ///< 2 r0 + 1 keys per row of the window
  int centre_row = 0;  ///< the row of the window that holds the output voxel
  int64_t nx = 0;
  float* out = nullptr;
  int64_t out_stride = 1;  ///< floats between neighbouring outputs
};

struct MedianKernelSet {
  const char* isa = "";
  int lanes = 0;                                             ///< outputs selected at once
  void (*row)(const MedianRow&) = nullptr;                   ///< the medians of one output row
  void (*keys)(const float*, int64_t, uint32_t*) = nullptr;  ///< n contiguous floats to keys
};

/// The sets compiled for each instruction set (the x86 ones only with NDCONV_CPU_X86_KERNELS).
const MedianKernelSet& median_kernels_generic();
const MedianKernelSet& median_kernels_avx2();
const MedianKernelSet& median_kernels_avx512();

}  // namespace ndconv::cpu
