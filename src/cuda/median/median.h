// The GPU median (src/cuda/median/): a selection per output voxel, not a multiply-add, so it has
// its own kernel beside the convolution families. Plain C++ interface (no CUDA types) for the
// engine's front end (src/engine/filters/median.cpp), compiled only with the CUDA backend.
#pragma once

#include <string>

#include "cuda/tuning.h"
#include "ndconv/types.h"

namespace ndconv::cuda_median {

/// Whether the kernel can filter with this radius; `why` says why not.
bool can_implement(int dims, const Index& radius, std::string& why);

// `outside`: the value of voxels outside the volume where the boundary rule reads none (Zero: 0;
// the engine passes Boundary::Constant as Zero with its value).

/// Uploads `input`, filters on device `device`, downloads into `output` (both host views with the
/// same extents; strided views are staged). Fills the report's timings and device name.
void run(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
         Boundary boundary, float outside, int device, RunReport& report);

/// median_filter_device (ndconv/device.h): checks that both views are contiguous volumes in the
/// memory of options.cuda_device, selects it and enqueues the filter on `stream` (launch_device).
void run_device(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
                Boundary boundary, float outside, const Options& options, void* stream,
                RunReport& report);

/// Filters `input` into `output`, both contiguous device volumes of `extent` (`dims` axes), on the
/// current device, enqueued on `stream` (a cudaStream_t; nullptr: the default stream) without
/// waiting for it: for callers that keep their data on the device (the bench). Throws
/// InvalidArgument when the window is too large (can_implement). `tuning`: the kernels' choices
/// (the library's defaults; the sweep sets them).
void launch_device(const float* input, float* output, int dims, const Index& extent,
                   const Index& radius, Boundary boundary, float outside, void* stream,
                   const cuda_backend::Tuning& tuning = cuda_backend::Tuning{});

}  // namespace ndconv::cuda_median
