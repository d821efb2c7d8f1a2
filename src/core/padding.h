// Boundary-padded copies: the drivers materialise the input extended by the boundary condition
// (problem.h, boundary_index) so that the row kernels never test an index. Rows are zero-filled
// past their useful length, up to the length the caller's kernels may read (the CPU backend's
// padded_row_length, cpu/kernel_set.h).
#pragma once

#include <cstdint>
#include <memory>

#include "ndconv/types.h"
#include "core/parallel_for.h"

namespace ndconv::core {

/// line[p] = src_b[p + offset] for p in [0, count), zeros for p in [count, length), where src_b
/// is the line of `n` elements at `src` (element stride `stride`) extended by `boundary`.
void gather_line(const float* src, int64_t stride, int64_t n, int64_t offset, int64_t count,
                 int64_t length, Boundary boundary, float* line);

/// One row of build_padded's volume: line[q0] = in_b[q + offset] (canonical axes) for
/// q0 < x_count, zeros up to row_length, for the row (q1, q2, q3).
void pad_row(const float* in, const Index& in_extent, const Index& in_stride, const Index& offset,
             int64_t q1, int64_t q2, int64_t q3, int64_t x_count, int64_t row_length,
             Boundary boundary, float* line);

/// A volume in four canonical axes (x, two middle axes, the blocked axis), x contiguous.
struct PaddedVolume {
  Index extent{1, 1, 1, 1};          ///< padded extents; extent[0] is the row length with its tail
  std::unique_ptr<float[]> storage;  ///< not value-initialised: build_padded writes it all
  const float* row(int64_t i1, int64_t i2, int64_t i3) const {
    return storage.get() + ((i3 * extent[2] + i2) * extent[1] + i1) * extent[0];
  }
};

/// The input extended by the boundary: padded.row(i1, i2, i3)[q0] = in_b[q + offset] (canonical
/// axes) for q0 < x_count, zeros up to row_length; rows for every (i1, i2, i3) < extent[1..3].
/// `in_extent` and `in_stride` are canonical too. Runs on `threads` threads.
void build_padded(const float* in, const Index& in_extent, const Index& in_stride,
                  const Index& offset, const Index& extent, int64_t x_count, int64_t row_length,
                  Boundary boundary, int threads, const ProgressSpan& progress,
                  PaddedVolume& padded);

}  // namespace ndconv::core
