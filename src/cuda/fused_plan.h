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

/// The fused kernel's instantiations, both with two input-plane buffers and 4 columns per thread.
/// The default: 32 x 32 output columns per block (256 threads): the x pass computes BYo + Ky - 1
/// rows for BYo outputs, so for 17 taps 48 rows per 32 (1.5x) instead of 32 per 16 (2x), and the
/// plane tile holds 2.25 instead of 3 input floats per output; ~102 KiB of shared memory for a
/// 17-tap Gaussian, 2 blocks (16 warps) per SM; 256^3 gives 8 x 8 tiles x 4 z chunks of 64 = 256
/// blocks, one wave on 132 SMs. NDCONV_CUDA_FUSED_ROWS=16 selects 32 x 16 (128 threads, ~56 KiB,
/// 4 blocks per SM, 512 blocks) for comparisons in one run.
using FusedDefaultShape = kernels::FusedShape<32, 32, 2>;
using FusedShortShape = kernels::FusedShape<32, 16, 2>;

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
