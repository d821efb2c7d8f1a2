// Gathering with the boundary condition, row by row: the interior of a row is a plain copy, only
// the few elements beyond the edges go through boundary_index.
#include "core/padding.h"

#include <algorithm>
#include <cstring>

#include "core/problem.h"

namespace ndconv::core {

void gather_line(const float* src, int64_t stride, int64_t n, int64_t offset, int64_t count,
                 int64_t length, Boundary boundary, float* line) {
  // Interior: p + offset in [0, n).
  const int64_t first = std::clamp<int64_t>(-offset, 0, count);
  const int64_t last = std::clamp<int64_t>(n - offset, first, count);
  for (int64_t p = 0; p < first; ++p) {
    const int64_t i = detail::boundary_index(p + offset, n, boundary);
    line[p] = i < 0 ? 0.0f : src[i * stride];
  }
  if (stride == 1) {
    if (last > first)
      std::memcpy(line + first, src + first + offset, (last - first) * sizeof(float));
  } else {
    for (int64_t p = first; p < last; ++p)
      line[p] = src[(p + offset) * stride];
  }
  for (int64_t p = last; p < count; ++p) {
    const int64_t i = detail::boundary_index(p + offset, n, boundary);
    line[p] = i < 0 ? 0.0f : src[i * stride];
  }
  std::fill(line + count, line + length, 0.0f);
}

void pad_row(const float* in, const Index& in_extent, const Index& in_stride, const Index& offset,
             int64_t q1, int64_t q2, int64_t q3, int64_t x_count, int64_t row_length,
             Boundary boundary, float* line) {
  const int64_t i1 = detail::boundary_index(q1 + offset[1], in_extent[1], boundary);
  const int64_t i2 = detail::boundary_index(q2 + offset[2], in_extent[2], boundary);
  const int64_t i3 = detail::boundary_index(q3 + offset[3], in_extent[3], boundary);
  if (i1 < 0 || i2 < 0 || i3 < 0) {
    std::fill(line, line + row_length, 0.0f);
    return;
  }
  const float* src = in + i1 * in_stride[1] + i2 * in_stride[2] + i3 * in_stride[3];
  gather_line(src, in_stride[0], in_extent[0], offset[0], x_count, row_length, boundary, line);
}

void build_padded(const float* in, const Index& in_extent, const Index& in_stride,
                  const Index& offset, const Index& extent, int64_t x_count, int64_t row_length,
                  Boundary boundary, int threads, const ProgressSpan& progress,
                  PaddedVolume& padded) {
  padded.extent = extent;
  padded.extent[0] = row_length;
  const int64_t rows = extent[1] * extent[2] * extent[3];
  // No value-initialisation: every element is written below, by the thread that will read it.
  padded.storage.reset(new float[rows * row_length]);
  parallel_for(
      threads, rows,
      [&](int64_t begin, int64_t end, int) {
        for (int64_t r = begin; r < end; ++r)
          pad_row(in, in_extent, in_stride, offset, r % extent[1], (r / extent[1]) % extent[2],
                  r / (extent[1] * extent[2]), x_count, row_length, boundary,
                  padded.storage.get() + r * row_length);
      },
      progress);
}

}  // namespace ndconv::core
