// What the adaptive filter's stage files (orientation.cpp, relaxation.cpp, control.cpp,
// reconstruction.cpp, resident_stages.cpp, pipeline.cpp) share: the tensor's layout, the progress
// split between stages, volume sizes, and the parameter checks that both the host-memory stages
// and the resident GPU path make before any work.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/control_voxel.h"
#include "core/problem.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

using Tensor = std::array<double, kMaxDims * kMaxDims>;

/// The components of a symmetric dims x dims tensor: dims (dims + 1) / 2.
int component_count(int dims);

/// Options whose progress reports map [0, 1] onto [base, base + span] of Options::progress.
Options stage_options(const Options& options, double base, double span);

/// Reports `fraction` to Options::progress; throws Aborted when it asks to stop.
bool report_progress(const Options& options, double fraction);

/// Voxels of one index along the last axis.
int64_t plane_voxels(int dims, const Index& extent);

/// The control mapping of `parameters`, checked (control.cpp).
ControlMapping control_mapping(int dims, const AdaptiveParameters& parameters);

/// The control tensor's first pass over `voxels` voxels of the component arrays `tensor`
/// (control.cpp): the eigenvalue mapping's tensor written over T, the magnitude x of each voxel
/// into `magnitude`; returns the largest x. Progress over [base, base + span] of `progress`.
/// Only the voxels `region` holds count towards the largest.
double control_shape_pass(const ControlMapping& mapping, float* const* tensor, float* magnitude,
                          int64_t voxels, int threads, const std::function<bool(double)>& progress,
                          double base, double span, const MagnitudeRegion& region = {});

/// The largest of `largest` and the magnitudes x of `voxels` voxels of T (the first pass's x),
/// evaluating only the voxels whose bound |T| exceeds the largest found so far, of those `region`
/// holds; overwrites `tensor` and `scratch` (`voxels` floats).
double control_largest_magnitude(const ControlMapping& mapping, float* const* tensor,
                                 float* scratch, int64_t voxels, double largest, int threads,
                                 const MagnitudeRegion& region = {});

/// control_tensor (both passes; only the first without `gain`) with the largest taken over
/// `region`; returns the scale the tensor is (or would be) divided by: the parameters' own, or
/// that largest.
double control_tensor_scaled(std::vector<std::vector<float>>& tensor, int dims,
                             const AdaptiveParameters& parameters, int threads,
                             const std::function<bool(double)>& progress,
                             const MagnitudeRegion& region, bool gain);

/// The region of `parameters`' normalisation box in a volume of `dims` and `extent` (dims 0 where
/// the box is the whole volume); throws InvalidArgument for a box outside the volume, an empty
/// one, or one with the coarse orientation estimate.
MagnitudeRegion magnitude_region(int dims, const Index& extent,
                                 const AdaptiveParameters& parameters);

/// The control tensor's second pass: each voxel's tensor scaled by the magnitude mapping of its x
/// against the image's `largest` x.
void control_gain_pass(const ControlMapping& mapping, float* const* tensor, const float* magnitude,
                       int64_t voxels, double largest, int threads,
                       const std::function<bool(double)>& progress, double base, double span);

/// Throws InvalidArgument unless `tensor` has component_count(dims) components (control.cpp).
void check_components(const std::vector<std::vector<float>>& tensor, int dims);

/// Throws InvalidArgument unless the blend with the input lies in [0, 1] (reconstruction.cpp).
void check_blend(double blend);

/// The estimated CPU seconds of each stage on one volume of `dims` axes and `voxels` voxels with
/// `threads` threads (cost.cpp): the progress bar's shares, and adaptive_estimated_cpu_seconds.
struct AdaptiveStageSeconds {
  double orientation = 0, relaxation = 0, control = 0, reconstruction = 0;
  double total() const { return orientation + relaxation + control + reconstruction; }
};
AdaptiveStageSeconds adaptive_stage_seconds(int dims, double voxels,
                                            const AdaptiveParameters& parameters, int threads);

/// The relaxation's Gaussian: `sigma` voxels along every axis (relaxation.cpp).
SeparableFilter relaxation_gaussian(int dims, double sigma);

}  // namespace ndconv::detail
