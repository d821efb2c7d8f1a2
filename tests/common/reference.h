// The float64 reference: plain loops written for clarity, straight from the definitions in
// src/ndconv/types.h (Operation, Boundary, OutputRegion). It shares no code with the engine's
// front end or backends, so a mistake there cannot hide here. Used by every test suite.
#pragma once

#include <cstdint>
#include <vector>

#include "ndconv/types.h"

namespace ndconv::test {

/// Every boundary the engine offers.
inline constexpr Boundary kEveryBoundary[] = {Boundary::Zero,    Boundary::Replicate,
                                              Boundary::Mirror,  Boundary::Periodic,
                                              Boundary::Reflect, Boundary::Constant};

/// The value outside under `b` for a test case of `seed`: under Boundary::Constant a fresh one in
/// [-4, 4] away from 0 (so that the separable passes' own padding shows), else 0.
inline float test_boundary_value(Boundary b, uint64_t seed) {
  if (b != Boundary::Constant)
    return 0.0f;
  const float magnitude = 0.5f + static_cast<float>(seed % 15) * 0.25f;
  return seed % 2 == 0 ? magnitude : -magnitude;
}

/// Reference dense filtering; returns the output (contiguous, x fastest) with the extents of
/// ndconv::output_geometry. `boundary_value`: the value outside under Boundary::Constant.
std::vector<double> reference_dense(const ConstVolumeView& input, const DenseFilter& filter,
                                    Operation operation, Boundary boundary, OutputRegion region,
                                    double boundary_value = 0);

/// Reference separable filtering: the dense reference with the outer product of the 1D filters;
/// under Boundary::Constant with a value other than 0, the 1D passes in turn along
/// filter.pass_order, each padding its own input with the value (scipy.ndimage's semantics, which
/// differ from padding the volume once where the 1D taps do not sum to 1).
std::vector<double> reference_separable(const ConstVolumeView& input, const SeparableFilter& filter,
                                        Operation operation, Boundary boundary, OutputRegion region,
                                        double boundary_value = 0);

/// Reference separable filtering of the `same` region one pass at a time along
/// filter.pass_order, in float64 (the 1D definitions applied in turn; equal to
/// reference_separable). For volumes too large for the dense outer product.
std::vector<double> reference_separable_passes(const ConstVolumeView& input,
                                               const SeparableFilter& filter, Operation operation,
                                               Boundary boundary, double boundary_value = 0);

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
