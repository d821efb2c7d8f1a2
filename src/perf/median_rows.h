// The median bench rows (median2d_r3, median3d_r1, median3d_r3): ndconv's GPU median, a selection
// per output voxel (src/cuda/median/), on data already on the device, validated against the CPU
// median, and the whole ndconv::median_filter call on host buffers. The boundary is replicate,
// the median's usual one (ITK's and fslmaths'); scripts/peers.py times CuPy's
// cupyx.scipy.ndimage.median_filter on the same shapes with the same boundary (mode 'nearest').
#pragma once

#include <cstdint>
#include <vector>

#include "perf/bench.h"
#include "perf/check.h"
#include "perf/gpu.h"

namespace ndconv::perf {

/// Appends the median rows to the bench's workload list.
void add_median_workloads(std::vector<Workload>& list);

/// The median's check: the windows of choose_windows (the window's voxel count standing for the
/// cost per voxel), each computed by the CPU median on the input's box widened by the radius. For
/// the zero, replicate and mirror boundaries that is exactly the whole volume's result: a halo is
/// cut short only where the volume ends. Throws InvalidArgument for the periodic boundary.
CheckPlan median_check(const Shape& volume, const std::vector<float>& input, const Index& radius,
                       Boundary boundary, double budget);

/// Runs a median row on `device` (timer and ceilings of the same run): validation, device time
/// against the memory floor, and the whole call.
Json median_gpu_row(const Workload& w, const BenchConfig& cfg, int device, gpu::Timer& timer,
                    const gpu::Ceilings& ceilings, uint64_t seed, int& failures);

}  // namespace ndconv::perf
