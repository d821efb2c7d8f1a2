// Host-side planning of the fused separable kernel (kernels/separable_fused.h), free of CUDA so
// that the CI emulation uses it too: whether the fused kernel covers a separable problem, its
// geometry ([x, y, z, frame]) and its taps (x, y, z one after the other; an axis without taps gets
// the single tap 1, an exact identity).
#pragma once

#include <string>
#include <vector>

#include "cuda/plan.h"
#include "engine/problem.h"
#include "kernels/geometry.h"
#include "kernels/separable_fused.h"

namespace ndconv::cuda_backend {

/// The fused kernel's only instantiation: 32 x 16 output columns per block (128 threads, 4
/// columns each), two input-plane buffers. 256^3 gives 8 x 16 tiles x 4 z chunks of 64 = 512
/// blocks, one wave at 4 blocks per SM on 132 SMs.
using FusedDefaultShape = kernels::FusedShape<32, 16, 2>;

struct FusedPlan {
  bool usable = false;
  std::string reason;  ///< why not, when not usable
  kernels::Geometry geometry{};
  std::vector<float> taps;  ///< Kx, Ky, Kz taps from tap_base 0
};

/// The fused kernel covers 2D and 3D problems and 4D problems without a filter along t (each
/// frame is then filtered on its own); a 4D filter along t keeps the pass-by-pass path.
inline FusedPlan plan_fused(const detail::SeparableProblem& p) {
  FusedPlan plan;
  const int dims = p.input.dims;
  if (dims < 2 || dims > 4) {
    plan.reason = "the fused kernel needs 2 to 4 dimensions";
    return plan;
  }
  if (dims == 4 && !p.taps[3].empty()) {
    plan.reason = "the fused kernel does not filter along t";
    return plan;
  }
  Index filter_extent{1, 1, 1, 1};
  for (int a = 0; a < 3; ++a) {
    const std::vector<float> one{1.0f};
    const std::vector<float>& t = a < dims && !p.taps[a].empty() ? p.taps[a] : one;
    filter_extent[a] = static_cast<int64_t>(t.size());
    plan.taps.insert(plan.taps.end(), t.begin(), t.end());
  }
  // Skipped axes have offset 0 (problem.h), so their single tap reads the output's own index.
  plan.geometry = make_geometry(p.input, p.output, filter_extent, p.offset, p.boundary,
                                canonical_order(dims, -1));
  plan.geometry.tap_base = 0;
  plan.geometry.tap_pitch = 1;
  plan.usable = true;
  return plan;
}

}  // namespace ndconv::cuda_backend
