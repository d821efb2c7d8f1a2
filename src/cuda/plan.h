// Host-side planning shared by the CUDA kernel families, free of CUDA so that the CI tests use it
// too: rewriting a CorrelationProblem onto the kernels' canonical axes (kernels/geometry.h) and
// laying out the taps by rows along the blocked axis. Each family's own rules are in its folder
// (tiled/tiled_plan.h, separable/separable_plan.h, border/border_plan.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/problem.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// Original axis for each canonical slot (-1: a unit axis): the axes other than `blocked` in
/// memory order, unit axes, then `blocked` in slot 3. With blocked = -1 (the x-row kernel), x
/// takes slot 0 and the others follow: [0, 1, 2, 3] with unit slots at the end.
inline std::array<int, kernels::kAxes> canonical_order(int dims, int blocked) {
  std::array<int, kernels::kAxes> order{-1, -1, -1, -1};
  int slot = 0;
  for (int a = 0; a < dims; ++a) {
    if (a != blocked)
      order[slot++] = a;
  }
  if (blocked >= 0)
    order[kernels::kAxes - 1] = blocked;
  return order;
}

/// The canonical geometry of a correlation from `in` to `out` (strides in elements, as given)
/// with `filter_extent` and `offset` per original axis. Taps fields are left for the caller.
template <typename In, typename Out>
kernels::Geometry make_geometry(const In& in, const Out& out, const Index& filter_extent,
                                const Index& offset, Boundary boundary,
                                const std::array<int, kernels::kAxes>& order) {
  kernels::Geometry g{};
  for (int s = 0; s < kernels::kAxes; ++s) {
    const int a = order[s];
    g.in_extent[s] = a < 0 ? 1 : in.extent[a];
    g.in_stride[s] = a < 0 ? 0 : in.stride[a];
    g.out_extent[s] = a < 0 ? 1 : out.extent[a];
    g.out_stride[s] = a < 0 ? 0 : out.stride[a];
    g.filter_extent[s] = a < 0 ? 1 : static_cast<int>(filter_extent[a]);
    g.offset[s] = a < 0 ? 0 : offset[a];
  }
  g.boundary = static_cast<int>(boundary);
  return g;
}

/// Geometry of a dense problem for the blocked kernel (taps at 0, laid out by dense_tap_rows).
inline kernels::Geometry dense_geometry(const detail::CorrelationProblem& p) {
  const int dims = p.input.dims;
  kernels::Geometry g = make_geometry(p.input, p.output, p.filter_extent, p.offset, p.boundary,
                                      canonical_order(dims, dims - 1));
  g.tap_base = 0;
  g.tap_pitch = g.filter_extent[3];
  return g;
}

/// The dense taps in the blocked kernel's layout: one row per combination of the filter's other
/// axes (x fastest), each holding the taps along the last axis contiguously.
inline std::vector<float> dense_tap_rows(const detail::CorrelationProblem& p) {
  const int dims = p.input.dims;
  const int64_t k_last = p.filter_extent[dims - 1];
  int64_t rows = 1;
  for (int a = 0; a + 1 < dims; ++a)
    rows *= p.filter_extent[a];
  std::vector<float> layout(static_cast<size_t>(rows * k_last));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k_last; ++j)
      layout[r * k_last + j] = p.taps[r + j * rows];
  }
  return layout;
}

/// Without opting in to more, a block may use 48 KiB of shared memory.
inline constexpr int kTiledMaxSharedBytes = 48 * 1024;

}  // namespace ndconv::cuda_backend
