// The __global__ entry points of the separable passes' own kernels: the column kernel
// (column_thread.h) and the x-row kernel (row_tile.h). Include from exactly one translation unit
// (separable_launch.cu). The x passes that the tiled kernel serves and the blocked passes are
// launched through their families' launchers (src/cuda/tiled/, src/cuda/blocked/).
#pragma once

#include <cuda_runtime.h>

#include "cuda/separable/column_thread.h"
#include "cuda/separable/row_tile.h"
#include "cuda/separable/slab_thread.h"
#include "kernels/async_copy.h"
#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"
#include "kernels/tap_memory.cuh"

namespace ndconv::kernels {

/// The block tiles of the column kernel (column_thread.h) in form F, walked as column_next_tile
/// orders them. kDirect has no barrier after the taps. kStaged copies the next tile's raw rows
/// into the other of its two tiles while the column pass reads this one (each warp its steps of
/// kFilterRows rows). kFusedX x-filters the tile's raw rows into its one tile, each warp staging
/// its next step while it filters the current (two staging buffers per warp), and loads its first
/// step of the next tile during the column pass; a tile that follows the one before it in the
/// same column first copies that tile's last rows (column_reuse_rows) and filters only the rest.
/// kBulk (fused only, ColumnLayout::bulk_rows): each step's raw rows arrive by bulk copy
/// (column_stage_bulk), and each lane waits on its step buffer's barrier before filtering.
template <typename S, ColumnForm F, bool kBulk>
__device__ __forceinline__ void column_tiles(const Geometry& g, const ColumnLayout& l,
                                             const TensorMap& map, const float* __restrict__ in,
                                             float* __restrict__ out, float* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float* const staged = shared + l.stage + warp * l.stage_floats;  // two steps' raw rows
  const int step_floats = S::kFilterRows * l.pitch;
  // Fused with bulk rows: the warp's barrier and face buffer per staging buffer, and the parity
  // each barrier's next completion has (bit b for buffer b).
  auto barrier = [&](int b) {
    return reinterpret_cast<uint64_t*>(shared + l.barriers) + 2 * warp + b;
  };
  auto faces = [&](int b) { return shared + l.faces + (2 * warp + b) * kFaceColumns; };
  unsigned phases = 0;
  // Fused: the steps of kFilterRows rows that x-filter a tile from row `first` on
  // (column_first_staged_row: the rows before it come from the previous tile).
  auto steps_from = [&](int first) {
    return (l.rows - first + S::kFilterRows - 1) / S::kFilterRows;
  };
  const int last_x = tiled_last_block_taps<S::kFilterX>(g.filter_extent[0]);
  int64_t counts[3];
  column_block_counts<S>(g, counts);
  int64_t by = blockIdx.y, bz = blockIdx.z;
  if (by >= counts[1] || bz >= counts[2])
    return;
  // The block's x tile is fixed, and so is how it stages its columns.
  const StagedColumns columns = staged_columns<S>(g, l, int64_t(blockIdx.x) * S::kTileX, lane);
  // Fused: stages step buffer b (raw rows r, r + 1 of the tile at `origin`) and closes the
  // lane's group of copies.
  auto stage_step = [&](int b, const ColumnOrigin& origin, int r) {
    float* const buffer = staged + b * step_floats;
    if constexpr (kBulk) {
      column_stage_bulk<S>(g, l, map, in, buffer, faces(b), barrier(b), origin, r, lane, columns);
    } else {
      column_stage<S>(g, l, in, buffer, origin, r, lane, columns);
    }
    tiled_commit();
  };
  // The first tile's rows: all of them (staged), this warp's first step (fused).
  if constexpr (F == ColumnForm::kStaged) {
    column_stage_tile<S>(g, l, in, shared + l.filtered,
                         column_origin<S>(g, blockIdx.x, by, bz, warp, lane), warp, lane, columns);
    tiled_commit();
  }
  if constexpr (F == ColumnForm::kFusedX) {
    const int first = column_first_staged_row<S>(g, l, bz, gridDim.z);
    if (warp < steps_from(first)) {
      stage_step(0, column_origin<S>(g, blockIdx.x, by, bz, warp, lane),
                 first + warp * S::kFilterRows);
    }
  }
  // The block's tile after (by, bz), in (next_y, next_z); false when there is none. Evaluated
  // where it is needed rather than kept across the column pass (the direct form spilled).
  int64_t next_y, next_z;
  auto next_tile = [&]() {
    next_y = by;
    next_z = bz;
    return column_next_tile(counts, blockIdx.z, gridDim.y, gridDim.z, next_y, next_z);
  };
  for (int i = 0;; ++i) {
    const ColumnOrigin o = column_origin<S>(g, blockIdx.x, by, bz, warp, lane);
    float* const tile =
        shared + l.filtered + (F == ColumnForm::kStaged ? (i & 1) : 0) * l.tile_floats;
    if constexpr (F == ColumnForm::kStaged) {
      if (next_tile()) {
        // The other tile was last read by the previous tile's column pass, which ended with a
        // barrier.
        column_stage_tile<S>(g, l, in, shared + l.filtered + ((i + 1) & 1) * l.tile_floats,
                             column_origin<S>(g, blockIdx.x, next_y, next_z, warp, lane), warp,
                             lane, columns);
        tiled_commit();
        tiled_wait(1);  // this thread's copies of this tile are done
      } else {
        tiled_wait(0);
      }
      __syncthreads();  // ... and every thread's
    }
    if constexpr (F == ColumnForm::kFusedX) {
      const int first = column_first_staged_row<S>(g, l, bz, gridDim.z);
      const int steps = steps_from(first);
      if (first > 0) {
        // The previous tile's column pass has ended (the barrier closing its iteration).
        column_reuse_rows<S>(tile, first, threadIdx.x);
        __syncthreads();  // the rows are copied before the x pass below overwrites them
      }
      // Steps warp, warp + kWarps, ... (the first already staged): stage the next while
      // filtering the current.
      for (int p = warp, s = 0; p < steps; p += S::kWarps, ++s) {
        const int b = s & 1;
        if (p + S::kWarps < steps) {
          // The other buffer was last read in the previous step, which ended with a warp barrier.
          stage_step(b ^ 1, o, first + (p + S::kWarps) * S::kFilterRows);
          tiled_wait(1);  // this lane's copies of step p are done
        } else {
          tiled_wait(0);
        }
        if constexpr (kBulk) {
          bulk_wait(barrier(b), (phases >> b) & 1u);  // the copy engine's rows have landed
          phases ^= 1u << b;
          column_fix_faces(g, staged + b * step_floats, faces(b), lane, columns);
        }
        __syncwarp();  // ... and every lane's
        column_filter_rows<S>(last_x, g, l, staged + b * step_floats, shared, tile,
                              first + p * S::kFilterRows, lane);
        __syncwarp();  // step p's buffer is free for step p + 2 * kWarps
      }
      __syncthreads();  // the x-filtered tile is complete
      if (next_tile()) {
        // Both staging buffers are free (the last step ended with a warp barrier): the next
        // tile's first step arrives during the column pass.
        const int next_first = column_first_staged_row<S>(g, l, next_z, gridDim.z);
        if (warp < steps_from(next_first)) {
          stage_step(0, column_origin<S>(g, blockIdx.x, next_y, next_z, warp, lane),
                     next_first + warp * S::kFilterRows);
        }
      }
    }
    if (o.active) {
      float acc[S::KO][S::kVector];
      column_pass<S, F != ColumnForm::kDirect>(g, l, in, shared, tile, o, acc);
      column_store<S>(g, l, out, o, acc);
    }
    if (!next_tile())
      return;
    if constexpr (F != ColumnForm::kDirect)
      __syncthreads();  // this tile is free for the tile after next (staged), the next (fused)
    by = next_y;
    bz = next_z;
  }
}

/// The column kernel of separable passes (column_thread.h) in form F: a block stages the taps
/// once (kFusedX: along axis 3, then along x), then walks its tiles.
/// __launch_bounds__(threads, S::kMinBlocks): see ColumnShape.
template <typename S, ColumnForm F, bool kBulk = false>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    column_kernel(Geometry g, ColumnLayout l, const __grid_constant__ TensorMap map,
                  const float* __restrict__ in, float* __restrict__ out,
                  const float* __restrict__ taps) {
  extern __shared__ __align__(128) float4 column_shared_words[];  // bulk copies: 128-byte aligned
  float* shared = reinterpret_cast<float*>(column_shared_words);
  column_load_taps<S>(g, l, taps, shared, threadIdx.x);
  if (kBulk && threadIdx.x < 2 * S::kWarps)
    bulk_barrier_init(reinterpret_cast<uint64_t*>(shared + l.barriers) + threadIdx.x);
  __syncthreads();
  column_tiles<S, F, kBulk>(g, l, map, in, out, shared);
}

/// The slab kernel of separable filters (slab_thread.h): K taps along x, y and z in one pass. A
/// block builds its maps, then marches along z through its chunk: per input plane, wait for its
/// raw tile (every thread's copies, then the step's one barrier), start the copy of the plane two
/// steps ahead, filter it along x, then filter the previous plane along y into the ring and emit
/// an output plane once the ring is full. The ring slot is dispatched in slab_ring_step.
/// kPhases (dev/slab_sweep.cu's profile; the product runs all): bit 0 the x filter, bit 1 the y
/// filter, bit 2 the ring; a phase left out passes its input through (wrong outputs, same traffic).
template <int K, typename S = SlabShape, int kPhases = 7>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    slab_kernel(Geometry g, SlabLayout l, SlabTaps t, const float* __restrict__ in,
                float* __restrict__ out) {
  extern __shared__ __align__(16) float4 slab_shared_words[];
  float* shared = reinterpret_cast<float*>(slab_shared_words);
  const int tid = threadIdx.x;
  const SlabBlock b = slab_block<S>(g, l, blockIdx.x, blockIdx.y, blockIdx.z);
  slab_maps<S>(g, l, b, shared, tid);
  __syncthreads();
  const SlabItems<K, S> items = slab_items<K, S>(g, l, b, shared, tid);
  auto stage = [&](int n) {
    if (n < b.planes) {
      const int64_t z = slab_input_plane(g, l, b, n);
      slab_stage<K, S>(g, l, items, z < 0 ? nullptr : in + z * g.in_stride[3],
                       shared + (n % S::kBuffers) * l.raw_floats, shared);
    }
    tiled_commit();  // a group per step, empty or not, so that tiled_wait(1) finds step n's
  };
  stage(0);
  stage(1);
  float ring[K][4];
  // Step n: plane n's x filter, plane n - 1's y filter and ring step (its x-filtered tile was
  // written in step n - 1, before this step's barrier).
  for (int n = 0; n <= b.planes; ++n) {
    tiled_wait(1);    // this thread's copies of plane n are done
    __syncthreads();  // ... and every thread's; step n - 1's readers of the buffers below are done
    if (n < b.planes) {
      stage(n + 2);  // into the buffer plane n - 1 was filtered from
      float* raw = shared + (n % S::kBuffers) * l.raw_floats;
      float* filtered = shared + l.filtered + (n & 1) * l.filtered_floats;
      if constexpr ((kPhases & 1) != 0) {
        slab_filter_x<K, S>(l, t, raw, filtered, tid);
      } else {
        for (int i = tid; i < l.rows * S::kTileX / 4; i += S::kThreads) {
          const int r = i / (S::kTileX / 4), q = i % (S::kTileX / 4);
          float f[4];
          tiled_read<4>(f, raw + r * l.pitch + 4 * q);
          vector_store<MemorySpace::Shared>(filtered + r * S::kTileX + 4 * q, f);
        }
      }
    }
    if (n == 0)
      continue;
    const int m = n - 1;
    float v[4], o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const float* filtered = shared + l.filtered + (m & 1) * l.filtered_floats;
    if constexpr ((kPhases & 2) != 0) {
      slab_filter_y<K, S>(t, filtered, tid, v);
    } else {
      for (int e = 0; e < 4; ++e)
        v[e] = filtered[(slab_thread_y<S>(tid) + e) * S::kTileX + slab_thread_x<S>(tid)];
    }
    const bool emit = m >= K - 1;
    if constexpr ((kPhases & 4) == 0) {
      for (int e = 0; e < 4; ++e)
        o[e] = v[e];
    } else if (b.down) {
      slab_ring_step<K, true>(m % K, ring, v, emit, t, o);
    } else {
      slab_ring_step<K, false>(m % K, ring, v, emit, t, o);
    }
    if (emit)
      slab_store<S>(g, b, out, slab_output_plane(l, b, m), tid, o);
  }
}

/// The x-row kernel of separable filters (taps always in constant memory: at most 1023).
__global__ void __launch_bounds__(256)
    row_kernel(Geometry g, const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ float tile[];
  const int threads = blockDim.x;
  const int64_t x0 = static_cast<int64_t>(blockIdx.x) * threads;
  const int64_t rows = row_count(g);
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    int64_t in_offset = 0, out_offset = 0;
    row_offsets(g, row, in_offset, out_offset);
    row_tile_load(g, in + in_offset, tile, x0, threadIdx.x, threads);
    __syncthreads();
    row_tile_compute(g, tile, out + out_offset, ConstantTaps{}, x0, threadIdx.x);
    __syncthreads();  // the next row's load must not overwrite a tile still being read
  }
}

}  // namespace ndconv::kernels
