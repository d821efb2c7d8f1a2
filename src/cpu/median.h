// The CPU median filter: for each output voxel, a selection (std::nth_element) over the window of
// (2 r_a + 1) voxels per axis, the rows of the volume shared among all threads.
#pragma once

#include <functional>

#include "ndconv/types.h"

namespace ndconv::cpu {

/// `output` has the input's extents; `radius[a]` >= 0 per axis (axes >= dims are 0).
void median(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
            Boundary boundary, int threads, const std::function<bool(double)>& progress);

}  // namespace ndconv::cpu
