// The geometry every ndconv kernel works on: a problem rewritten onto four canonical axes.
// Canonical axis 0 is x (fastest in memory, where warps lie), axis 3 is the blocked axis (the
// axis along which each thread computes KO outputs and reuses its loads), axes 1 and 2 are the
// others in memory order; unused axes have extent 1. A 2D image is [x, 1, 1, y], a 3D volume
// [x, y, 1, z], a 4D volume [x, y, z, t]; a separable pass along y of a 3D volume is
// [x, z, 1, y]. So one kernel template serves every dimension and every separable axis: only the
// strides change. Passed to kernels by value.
#pragma once

#include <cstdint>

namespace ndconv::kernels {

inline constexpr int kAxes = 4;

struct Geometry {
  int64_t in_extent[kAxes];
  int64_t in_stride[kAxes];
  int64_t out_extent[kAxes];
  int64_t out_stride[kAxes];
  int filter_extent[kAxes];
  int64_t offset[kAxes];  ///< out[o] reads in_b[o + offset + j] along each axis
  int boundary;           ///< a BoundaryCode
  /// Taps: one row per combination of the filter's axes 0..2 (x fastest); each row holds the
  /// k3 taps along axis 3 contiguously, so row r, tap j sits at tap_base + r * tap_pitch + j.
  int tap_base;
  int tap_pitch;
};

}  // namespace ndconv::kernels
