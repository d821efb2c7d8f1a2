// Copies between strided views and contiguous buffers, and sub-views along the last axis: what
// the GPU's staging and the stored-type conversion share (x fastest everywhere).
#pragma once

#include <cstdint>

#include "ndconv/types.h"

namespace ndconv::detail {

/// Calls f(offset into data, linear index) for every voxel of a view, x fastest.
template <typename View, typename F>
void for_each_voxel(const View& v, F f) {
  int64_t linear = 0;
  for (int64_t t = 0; t < v.extent[3]; ++t)
    for (int64_t z = 0; z < v.extent[2]; ++z)
      for (int64_t y = 0; y < v.extent[1]; ++y) {
        const int64_t base = t * v.stride[3] + z * v.stride[2] + y * v.stride[1];
        for (int64_t x = 0; x < v.extent[0]; ++x)
          f(base + x * v.stride[0], linear++);
      }
}

/// A view's voxels into a contiguous buffer (x fastest).
inline void gather(const ConstVolumeView& v, float* dst) {
  for_each_voxel(v, [&](int64_t off, int64_t i) { dst[i] = v.data[off]; });
}

/// A contiguous buffer into a view's voxels.
inline void scatter(const float* src, const VolumeView& v) {
  for_each_voxel(v, [&](int64_t off, int64_t i) { v.data[off] = src[i]; });
}

/// The sub-view of rows [first, first + rows) along the last axis.
template <typename T>
BasicVolumeView<T> last_axis_rows(const BasicVolumeView<T>& v, int64_t first, int64_t rows) {
  BasicVolumeView<T> s = v;
  const int last = v.dims - 1;
  s.data = v.data + first * v.stride[last];
  s.extent[last] = rows;
  return s;
}

}  // namespace ndconv::detail
