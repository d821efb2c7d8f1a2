// The recursive (IIR) Gaussian of Young, van Vliet and van Ginkel (2002): a causal and an
// anti-causal third-order recursion per line, its poles scaled so that the filter's variance is
// sigma^2 exactly; the cost per voxel does not grow with sigma.
// Each line is extended by the boundary over a margin of `recursive_margin(sigma)` voxels on
// both sides before the recursions run, which makes every boundary condition exact up to the
// margin's cut-off, at the price of (n + 2 margin) / n more work on lines shorter than sigma.
#pragma once

#include <functional>

#include "core/recursive_line.h"
#include "ndconv/types.h"

namespace ndconv::cpu {

/// Filters `input` into `output` (same extents) along every axis with sigma_voxels[a] > 0;
/// `outside`: the value where the boundary reads no voxel (zero, or the constant boundary's).
void recursive_gaussian(const ConstVolumeView& input, const VolumeView& output,
                        const std::array<double, kMaxDims>& sigma_voxels, Boundary boundary,
                        float outside, int threads, const std::function<bool(double)>& progress);

/// The recursion's coefficients for one sigma (>= 0.5 voxels).
recursive::Coefficients young_van_vliet(double sigma_voxels);

/// Voxels of boundary extension on each side of a line.
int64_t recursive_margin(double sigma_voxels);

}  // namespace ndconv::cpu
