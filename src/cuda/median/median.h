// The GPU median (src/cuda/median/): a selection per output voxel, not a multiply-add, so it has
// its own kernel beside the convolution families. Plain C++ interface (no CUDA types) for the
// engine's front end (src/engine/filters/median.cpp), compiled only with the CUDA backend.
#pragma once

#include <string>

#include "ndconv/types.h"

namespace ndconv::cuda_median {

/// Whether the kernel can filter with this radius; `why` says why not.
bool can_implement(int dims, const Index& radius, std::string& why);

/// Uploads `input`, filters on device `device`, downloads into `output` (both host views with the
/// same extents; strided views are staged). Fills the report's timings and device name.
void run(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
         Boundary boundary, int device, RunReport& report);

}  // namespace ndconv::cuda_median
