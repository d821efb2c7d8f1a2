// Host-side rules of the streaming kernel of separable filters (stream_thread.h), free of CUDA so
// that the CI tests use them too: its compiled tap counts, its layout with the face tiles' halo
// (the tiled kernel's rules: tiled/tiled_plan.h), which problems it can implement, and its one
// pass of a plan (separable_plan.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "cuda/separable/stream_thread.h"
#include "cuda/tensor_map.h"
#include "cuda/tiled/tiled_plan.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// The streaming kernel's compiled tap counts (the same along x, y and z): the sigma 1 and 2
/// Gaussians. K - 1 a multiple of 4 (whole 16-byte window reads), and K / 2 too for a
/// same-region filter's boxes to start on 16-byte boundaries.
using StreamTapCounts = std::integer_sequence<int, 9, 17>;

template <int... Ks, typename Fn>
bool stream_dispatch_in(std::integer_sequence<int, Ks...>, int k, Fn&& fn) {
  return ((Ks == k ? (fn(std::integral_constant<int, Ks>{}), true) : false) || ...);
}

/// Calls fn(std::integral_constant<int, K>{}) for the compiled tap count K equal to k; false when
/// there is none.
template <typename Fn>
bool stream_dispatch(int k, Fn&& fn) {
  return stream_dispatch_in(StreamTapCounts{}, k, fn);
}

/// The most halo elements per thread a streaming launch lists (its face tiles' halo, 2 ints per
/// element and thread in shared memory): a corner tile of 17 taps needs 3.
inline constexpr int kStreamMaxHaloSlots = 8;

/// The streaming kernel's layout for geometry g (a compiled tap count on x) with its face tiles'
/// halo: none under the zero boundary (the copy engine's zeros are the boundary's), else copied
/// within the plane where every halo value lies in its tile's box (replicate, mirror, reflect;
/// tiled_halo_local), else fetched from global memory (periodic). halo.halo_slots is -1 where the
/// halo cannot be listed (more than kStreamMaxHaloSlots, or 32-bit in-plane offsets exceeded).
template <typename S = kernels::StreamShape>
inline kernels::StreamLayout stream_layout_for(const kernels::Geometry& g) {
  kernels::StreamLayout l{};
  stream_dispatch(g.filter_extent[0], [&](auto k) { l = kernels::stream_layout<k.value, S>(g); });
  const int slots =
      tiled_halo_slots(g, l.halo, S::kTileX, S::kTileY, S::kThreads, kStreamMaxHaloSlots);
  if (slots < 0) {
    l.halo.halo_slots = -1;
  } else if (slots > 0) {
    const kernels::TiledHaloMode mode = tiled_halo_local(g, l.halo, S::kTileX, S::kTileY)
                                            ? kernels::TiledHaloMode::kLocal
                                            : kernels::TiledHaloMode::kDirect;
    kernels::tiled_add_halo(l.halo, g, slots, S::kThreads, mode);
    l.total_floats = l.halo.total_floats;
  }
  return l;
}

/// The shared memory a streaming block may use: two blocks per SM of an sm_90 device (228 KiB).
inline constexpr int kStreamMaxSharedBytes = 112 * 1024;

/// Why the streaming kernel cannot implement geometry g (canonical [x, y, 1, z]) on an input at
/// `address` (empty when it can): a compiled tap count on x, y and z; the copy engine able to read
/// the input (bulk_input_unfit: x contiguous, 16-byte aligned rows and planes, boxes starting on
/// 16-byte boundaries, 32-bit coordinates); the face tiles' halo listed; the grid in range.
template <typename S = kernels::StreamShape>
inline std::string stream_unfit(const kernels::Geometry& g, uintptr_t address) {
  const int k = g.filter_extent[0];
  if (!stream_dispatch(k, [](auto) {}) || g.filter_extent[1] != k || g.filter_extent[3] != k ||
      g.filter_extent[2] != 1 || g.in_extent[2] != 1 || g.out_extent[2] != 1)
    return "no streaming kernel for these tap counts";
  const std::string unfit = bulk_input_unfit(g, address);
  if (!unfit.empty())
    return unfit;
  const kernels::StreamLayout l = stream_layout_for<S>(g);
  if (l.halo.halo_slots < 0)
    return "the face tiles' halo is too large to list";
  if (l.total_floats * static_cast<int64_t>(sizeof(float)) > kStreamMaxSharedBytes)
    return "the plane buffers exceed the shared memory of two blocks per SM";
  int64_t tiles[2];
  kernels::plane_tiles<S::kTileX, S::kTileY>(g, tiles);
  if (tiles[1] > kernels::kMaxGridYZ || g.out_extent[3] > kernels::kMaxGridYZ)
    return "too many tiles along y or planes along z for the grid";
  return "";
}

}  // namespace ndconv::cuda_backend
