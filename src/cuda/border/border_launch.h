// The pad and border kernels' launchers (pad_thread.h, border_thread.h): the helpers a tiled
// launch calls when its face tiles cannot take their halo from the bulk copy.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cuda/uploaded_taps.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

struct PaddedInput;  // border_plan.h

/// Pads the input of a launch on lg into `padded` (pad_tiled_input's layout), on `stream`.
/// Throws std::logic_error for the zero boundary (nothing to pad), CudaError on a failed launch.
void launch_pad(const PaddedInput& pi, const kernels::Geometry& lg, const float* in, float* padded,
                cudaStream_t stream);

/// Copies the border kernel's taps (tiled_tap_rows, at most kernels::kConstantTapFloats) into its
/// constant memory on `stream`; skipped when they are there already. Hold the lease until
/// launch_border has been called (uploaded_taps.h).
TapLease border_upload_taps(int device, const std::vector<float>& taps, cudaStream_t stream);

/// Launches the border kernel on g, right after the tiled kernel that left zeros in its face
/// tiles' halo; its taps (in g's layout: tiled_geometry's, without lead taps) went up with
/// border_upload_taps.
void launch_border(int device, const kernels::Geometry& g, const float* in, float* out,
                   cudaStream_t stream);

}  // namespace ndconv::cuda_backend
