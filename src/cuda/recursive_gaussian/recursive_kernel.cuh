// The GPU recursive Gaussian kernel: thread k of a batch filters line first_line + k along
// `axis` of a contiguous volume, in place (a line is read whole in the causal pass before the
// anti-causal pass writes it). The extended line lives in `scratch`, interleaved across the
// batch's lines so that neighbouring threads touch neighbouring addresses.
#pragma once

#include "core/recursive_line.h"

namespace ndconv::cuda_recursive {

struct LineBatch {
  int64_t extent[4];
  int axis;
  int boundary;
  double outside;  ///< where the boundary reads no voxel
  int64_t margin;
  int64_t first_line, lines;  ///< this batch
};

__global__ void recursive_lines(float* volume, float* scratch, LineBatch b,
                                recursive::Coefficients c) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= b.lines)
    return;
  // The line's first voxel and step: the other axes, in order, index the line number.
  int64_t rest = b.first_line + k, offset = 0, stride = 1, step = 1;
  for (int a = 0; a < 4; ++a) {
    if (a == b.axis) {
      step = stride;
    } else {
      offset += rest % b.extent[a] * stride;
      rest /= b.extent[a];
    }
    stride *= b.extent[a];
  }
  float* line = volume + offset;
  const int64_t lines = b.lines;
  recursive::filter_line(
      c, b.extent[b.axis], b.margin, b.boundary, b.outside,
      [&](int64_t i) { return line[i * step]; },
      [&](int64_t i) -> float& { return scratch[i * lines + k]; },
      [&](int64_t i, double v) { line[i * step] = static_cast<float>(v); });
}

}  // namespace ndconv::cuda_recursive
