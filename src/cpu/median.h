// The CPU median filter: for each output voxel, the median of the window of (2 r_a + 1) voxels per
// axis, selected on SIMD lanes by counting passes over order-preserving keys (median_row_kernel.h
// says why), the window's rows converted to keys once per output row.
#pragma once

#include <functional>

#include "ndconv/types.h"

namespace ndconv::cpu {

/// `output` has the input's extents; `radius[a]` >= 0 per axis (axes >= dims are 0); `outside`
/// is the value of voxels outside the volume where the boundary rule reads none (Zero: 0;
/// Constant: the constant).
void median(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
            Boundary boundary, float outside, int threads,
            const std::function<bool(double)>& progress);

}  // namespace ndconv::cpu
