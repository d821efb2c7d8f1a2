// What every kernel family's launcher (tiled/, blocked/, separable/) shares: the resource query
// that feeds the rules, the record of what a launch did, and the per-device global tap buffer.
// CUDA host code, for the launchers' translation units.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/device_facts.h"
#include "cuda/launch.h"
#include "cuda/uploaded_taps.h"
#include "kernels/constant_taps.h"
#include "kernels/schedule.h"

namespace ndconv::cuda_backend {

// A kernel's resources (device_facts.h) in blocks of `threads`: `dynamic_shared_bytes` 0 for its
// own (the tables), or a launch's dynamic shared memory, which lowers the blocks per SM of a kernel
// with a large tile.
inline KernelVariant query_variant(int device, const void* kernel, int ko, int threads,
                                   int dynamic_shared_bytes = 0) {
  return kernel_resources(device, kernel, ko, threads, dynamic_shared_bytes);
}

// can_implement: whether a kernel's constant tap flavour holds `tap_count` floats.
inline bool taps_fit_constant(int64_t tap_count) {
  return tap_count <= kernels::kConstantTapFloats;
}

inline void set_plan_shape(LaunchPlan& plan, const kernels::LaunchShape& s) {
  for (int d = 0; d < 3; ++d) {
    plan.block[d] = s.block[d];
    plan.grid[d] = static_cast<int>(s.grid[d]);
  }
}

// Records which kernel a plan launched and its resources (queried with the launch's shape).
inline void set_plan_kernel(LaunchPlan& plan, int device, const void* kernel, int ko,
                            const kernels::LaunchShape& s, const char* family,
                            int outputs_along_x) {
  plan.family = family;
  plan.outputs_along_x = outputs_along_x;
  plan.resources =
      query_variant(device, kernel, ko, s.block[0] * s.block[1] * s.block[2], s.shared_bytes);
}

inline dim3 to_dim3(const int64_t v[3]) {
  return dim3(static_cast<unsigned>(v[0]), static_cast<unsigned>(v[1]),
              static_cast<unsigned>(v[2]));
}

inline dim3 to_dim3(const int v[3]) {
  return dim3(static_cast<unsigned>(v[0]), static_cast<unsigned>(v[1]),
              static_cast<unsigned>(v[2]));
}

// The blocks of a kernel that `device` holds at once, `blocks_per_sm` on each multiprocessor.
inline int64_t resident_blocks(int device, int blocks_per_sm) {
  return int64_t{device_attributes(device).multiprocessors} * blocks_per_sm;
}

// Copies taps into the device's global tap buffer (shared by the families whose kernels read taps
// from global memory), stream-ordered, and returns it. Pageable sources are staged by the runtime
// before return. Skipped when the buffer already holds these taps (uploaded_taps.h): `stream` then
// waits for the upload that wrote them. Defined in launch.cu.
TapLease upload_global_taps(int device, const std::vector<float>& taps, cudaStream_t stream);

}  // namespace ndconv::cuda_backend
