// The float64 reference: plain loops written for clarity, straight from the definitions in
// src/ndconv/types.h (Operation, Boundary, OutputRegion). It shares no code with the engine's
// front end or backends, so a mistake there cannot hide here. Used by every test suite.
#pragma once

#include <vector>

#include "ndconv/types.h"

namespace ndconv::test {

/// Reference dense filtering; returns the output (contiguous, x fastest) with the extents of
/// ndconv::output_geometry.
std::vector<double> reference_dense(const ConstVolumeView& input, const DenseFilter& filter,
                                    Operation operation, Boundary boundary, OutputRegion region);

/// Reference separable filtering: the dense reference with the outer product of the 1D filters.
std::vector<double> reference_separable(const ConstVolumeView& input, const SeparableFilter& filter,
                                        Operation operation, Boundary boundary,
                                        OutputRegion region);

/// Reference separable filtering of the `same` region one axis at a time, in float64 (the 1D
/// definitions applied in turn; equal to reference_separable because every boundary extends each
/// axis on its own). For volumes too large for the dense outer product.
std::vector<double> reference_separable_passes(const ConstVolumeView& input,
                                               const SeparableFilter& filter, Operation operation,
                                               Boundary boundary);

/// Reference median of the (2 radius[a] + 1) per axis voxels around each voxel (the window
/// sorted, NaN last, its middle element), outside voxels given by the boundary.
std::vector<double> reference_median(const ConstVolumeView& input, const Index& radius,
                                     Boundary boundary);

/// The same bit for bit as both backends give it: -0 below +0, a NaN median as the quiet NaN, and
/// `outside` where the boundary reads no voxel (Zero).
std::vector<float> reference_median_bits(const ConstVolumeView& input, const Index& radius,
                                         Boundary boundary, float outside);

/// Output extents as the reference computes them (independent of the engine).
Index reference_output_extent(const ConstVolumeView& input, const Index& filter_extent,
                              OutputRegion region);

}  // namespace ndconv::test
