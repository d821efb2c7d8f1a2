// The GPU recursive Gaussian (src/cuda/recursive_gaussian/): one thread per line runs the same
// per-line code as the CPU backend (recursive_line.h). Plain C++ interface for the engine's front
// end (src/engine/filters/recursive_gaussian.cpp), compiled only with the CUDA backend.
#pragma once

#include "core/recursive_line.h"
#include "ndconv/types.h"

namespace ndconv::cuda_recursive {

/// Filters `input` into `output` (host views, same extents) along every axis with sigma > 0,
/// with coefficients[a] and margin[a] for axis a, on device `device`; `outside` where the boundary
/// reads no voxel (recursive_line.h). Fills the report's timings and device name.
void run(const ConstVolumeView& input, const VolumeView& output,
         const std::array<double, kMaxDims>& sigma,
         const std::array<recursive::Coefficients, kMaxDims>& coefficients,
         const std::array<int64_t, kMaxDims>& margin, Boundary boundary, float outside, int device,
         RunReport& report);

}  // namespace ndconv::cuda_recursive
