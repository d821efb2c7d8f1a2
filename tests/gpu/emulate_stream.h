// Host emulation of the streaming kernel of separable filters (cuda/separable/stream_thread.h,
// stream_kernel.cuh) for the CI tests, phase by phase as its barriers order them.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/separable/stream_plan.h"
#include "kernels/geometry.h"

namespace ndconv::test {

/// Runs the streaming kernel over its whole grid: per block, all threads fill the plane table, the
/// first kStages planes are copied (the copy engine's zeros outside the volume), a face tile lists
/// its halo and patches its first plane; per plane p, all threads run their x tasks and patch plane
/// p + 1's halo, then plane p + kStages is copied into the buffer p was read from, then all run
/// their y pass, ring step and store. `resident_blocks` (0: one chunk, or chunks of at most
/// kStreamMaxChunk planes) and `min_chunk` cut the volume along z as the launcher does. Shared
/// memory is one NaN-poisoned host buffer per block.
inline void emulate_stream(const kernels::Geometry& g, const float* in, float* out,
                           const float* taps, int64_t resident_blocks, int min_chunk) {
  using S = kernels::StreamShape;
  const int k = g.filter_extent[0];
  kernels::StreamLayout l = cuda_backend::stream_layout_for<S>(g);
  if (l.halo.halo_slots < 0)
    throw std::invalid_argument("the streaming kernel cannot list this halo");
  const kernels::LaunchShape s = kernels::stream_launch_shape<S>(g, l, resident_blocks, min_chunk);
  kernels::StreamTaps t{};
  for (int j = 0; j < k; ++j) {
    t.z[j] = taps[g.tap_base + j];
    t.y[j] = taps[g.tap_base + k + j];
    t.x[j] = taps[g.tap_base + 2 * k + j];
  }
  const kernels::TensorMap map{};
  const bool compiled = cuda_backend::stream_dispatch(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    constexpr int kThreads = S::kThreads, kRun = S::kYRun;
    using Ring = float[K][kRun];
    for (int bz = 0; bz < s.grid[2]; ++bz)
      for (int by = 0; by < s.grid[1]; ++by)
        for (int bx = 0; bx < s.grid[0]; ++bx) {
          std::vector<float> shared(static_cast<size_t>(l.total_floats),
                                    std::numeric_limits<float>::quiet_NaN());
          float* const sh = shared.data();
          const kernels::StreamBlock b = kernels::stream_block<S>(g, l, bx, by, bz);
          for (int tid = 0; tid < kThreads; ++tid)
            kernels::stream_plane_table(g, l, b, sh, tid, kThreads);
          for (int p = 0; p < S::kStages && p < b.planes; ++p)
            kernels::stream_load_plane(g, l, map, in, b, sh, p, sh + p * l.plane_floats, nullptr);
          const bool halo = kernels::tiled_halo_needed(l.halo, b.t);
          if (halo) {
            for (int tid = 0; tid < kThreads; ++tid) {
              kernels::tiled_halo_list<S>(g, l.halo, b.t, sh, tid);
              kernels::stream_patch_halo<S>(g, l, in, sh, sh, b, 0, tid);
            }
          }
          std::vector<Ring> rings(kThreads);
          std::vector<kernels::StreamColumn> columns;
          for (int tid = 0; tid < kThreads; ++tid) {
            for (auto& slot : rings[tid])
              std::fill(std::begin(slot), std::end(slot), 0.0f);
            columns.push_back(kernels::stream_output_column<S>(g, b, out, tid));
          }
          for (int p = 0; p < b.planes; ++p) {
            float* const plane = sh + (p % S::kStages) * l.plane_floats;
            float* const xb = sh + l.xbuf + (p & 1) * l.xbuf_floats;
            for (int tid = 0; tid < kThreads; ++tid) {
              kernels::stream_filter_x<K, S>(t, plane, xb, tid);
              if (halo && p + 1 < b.planes) {
                kernels::stream_patch_halo<S>(
                    g, l, in, sh, sh + ((p + 1) % S::kStages) * l.plane_floats, b, p + 1, tid);
              }
            }
            if (p + S::kStages < b.planes)
              kernels::stream_load_plane(g, l, map, in, b, sh, p + S::kStages, plane, nullptr);
            for (int tid = 0; tid < kThreads; ++tid) {
              float v[kRun], o[kRun];
              kernels::stream_filter_y<K, S>(t, xb, tid, v);
              kernels::stream_ring_dispatch<K, S>(p % K, rings[tid], v, t.z, o);
              if (p >= K - 1)
                kernels::stream_store<S>(g, columns[tid], o);
            }
          }
        }
  });
  if (!compiled)
    throw std::invalid_argument("no streaming kernel for " + std::to_string(k) + " taps");
}

}  // namespace ndconv::test
