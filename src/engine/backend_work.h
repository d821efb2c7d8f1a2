// What each filter tells the backend choice (backend_choice.h) about a run: one describer per
// filter family, called by the filter's own front end and by the public plan (ndconv/plan.h), so
// that both decide from the same facts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/backend_choice.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// A dense or separable correlation: the cost model's input. `taps_per_output`: the dense
/// filter's taps, or the sum of the separable filter's 1D lengths over `passes` filtered axes.
struct LinearWork {
  int64_t input_voxels = 0;
  int64_t output_voxels = 0;
  double taps_per_output = 1;
  int passes = 1;
  bool separable = false;
  bool slab_passes = false;  ///< separable without taps along the last axis (CostInput's)
  bool dense_4d = false;     ///< dense with taps along a 4th axis (CostInput's)
  std::size_t input_bytes_per_voxel = sizeof(float);
  bool input_pinned = false;
  bool output_pinned = false;
};

BackendWork linear_backend_work(const LinearWork& work, const Options& options);

/// The filter bank with filters of `filter_extent` on a `dims`-dimensional volume.
BackendWork bank_backend_work(const Index& filter_extent, int dims);

/// The median of `radius` over `voxels` voxels.
BackendWork median_backend_work(int dims, const Index& radius, int64_t voxels);

/// The recursive Gaussian over `voxels` voxels.
BackendWork recursive_backend_work(int64_t voxels);

}  // namespace ndconv::detail
