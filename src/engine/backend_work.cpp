// The describers of backend_work.h.
#include "engine/backend_work.h"

#include "core/parallel_for.h"
#include "cuda/bank/bank_backend.h"
#include "cuda/median/median.h"

namespace ndconv::detail {

BackendWork linear_backend_work(const LinearWork& work, const Options& options) {
  BackendWork w;
  w.filter = work.separable ? "separable filter" : "dense filter";
  if (options.backend == Backend::Auto) {
    CostInput cost;
    cost.input_voxels = work.input_voxels;
    cost.output_voxels = work.output_voxels;
    cost.taps_per_output = work.taps_per_output;
    cost.passes = work.passes;
    cost.separable = work.separable;
    cost.slab_passes = work.slab_passes;
    cost.dense_4d = work.dense_4d;
    cost.input_bytes_per_voxel = static_cast<double>(work.input_bytes_per_voxel);
    cost.input_pinned = work.input_pinned;
    cost.output_pinned = work.output_pinned;
    cost.cpu_threads = core::resolve_thread_count(options.threads);
    w.cost = cost;
  }
  return w;
}

BackendWork bank_backend_work(const Index& filter_extent, int dims) {
  BackendWork w;
  w.filter = "filter bank";
  w.kernel_cannot = cuda_bank::bank_cannot_implement(filter_extent, dims);
  return w;
}

BackendWork median_backend_work(int dims, const Index& radius, int64_t voxels) {
  BackendWork w;
  w.filter = "median";
  cuda_median::can_implement(dims, radius, w.kernel_cannot);
  // The input, the output and the staged rows of the kernel's tiles.
  w.device_bytes = 2.2 * static_cast<double>(voxels) * 4;
  return w;
}

BackendWork recursive_backend_work(int64_t voxels) {
  BackendWork w;
  w.filter = "recursive Gaussian";
  // The volume in place, and the lines' scratch of at most 320 MiB.
  w.device_bytes = static_cast<double>(voxels) * 4 + (320 << 20);
  return w;
}

}  // namespace ndconv::detail
