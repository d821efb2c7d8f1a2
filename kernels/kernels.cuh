// The __global__ entry points: thin wrappers that hand CUDA's built-in coordinates to the
// per-thread functions of the blocked, tiled, column and row kernels. Include from exactly one
// translation unit (src/cuda/launch.cu). The pad and border kernels are in src/cuda/border/.
#pragma once

#include <cuda_runtime.h>

#include "kernels/blocked_thread.h"
#include "kernels/column_thread.h"
#include "kernels/geometry.h"
#include "kernels/grid_dependency.h"
#include "kernels/row_tile.h"
#include "kernels/tap_memory.cuh"
#include "kernels/tiled_halo.h"
#include "kernels/tiled_thread.h"

namespace ndconv::kernels {

__device__ __forceinline__ ThreadCoord thread_coord() {
  ThreadCoord c;
  c.block[0] = blockIdx.x;
  c.block[1] = blockIdx.y;
  c.block[2] = blockIdx.z;
  c.block_dim[0] = blockDim.x;
  c.block_dim[1] = blockDim.y;
  c.block_dim[2] = blockDim.z;
  c.thread[0] = threadIdx.x;
  c.thread[1] = threadIdx.y;
  c.thread[2] = threadIdx.z;
  c.grid_dim[0] = gridDim.x;
  c.grid_dim[1] = gridDim.y;
  c.grid_dim[2] = gridDim.z;
  return c;
}

/// The register-blocked kernel; kConstantTaps selects the tap memory. Launched with 128 threads
/// per block, but deliberately without __launch_bounds__: with it, ptxas (CUDA 13, sm_90) capped
/// the registers at 48-64 and spilled 16-60 bytes in 8 of the 10 instantiations; without it none
/// spills (docs/gpu-validation.md has the resource report).
template <int KO, bool kConstantTaps>
__global__ void blocked_kernel(Geometry g, const float* __restrict__ in, float* __restrict__ out,
                               const float* __restrict__ global_taps) {
  if constexpr (kConstantTaps) {
    blocked_block_thread<KO>(g, in, out, ConstantTaps{}, thread_coord());
  } else {
    blocked_block_thread<KO>(g, in, out, GlobalTaps{global_taps}, thread_coord());
  }
}

/// The tiled kernel (tiled_thread.h): a block stages every tap once, then walks its block tiles
/// (blockIdx.x, blockIdx.x + gridDim.x, ...: tiled_origin) plane by plane with two shared buffers:
/// while plane p is used, the next is copied in. Taps come from global memory (read once per block
/// into shared memory; `taps_laid_out`: already in the shared layout, tiled_lay_out_taps). Planes
/// arrive one of two ways, chosen per launch (`loads`, a TiledPlaneLoads, block-uniform):
///   - bulk (sm_90, layouts a tensor map describes, boxes 16-byte aligned; tensor_map.h): one bulk
///     tensor copy per plane by thread 0 (`tensor_maps`; with wrap boxes, a face tile's plane
///     brings its opposite faces' boxes too), which completes on the buffer's barrier; every
///     thread waits on that barrier instead of a block barrier. The copies run on from one tile
///     to the next: the next tile's first plane arrives while the last plane of this one is used
///     (the launcher sizes the grid to the blocks the device holds at once, so that a block walks
///     several tiles). Only thread 0 works out where the next plane lies: for short filters a
///     plane is only a few hundred FMAs per thread, so a dozen instructions more per plane in
///     every thread would show. With kTiledBulk and halo slots (tiled_halo.h), the halo of plane
///     p + 1 of a face tile is patched over the copy's zeros at the end of iteration p, before the
///     barrier that frees plane p's buffer (a barrier of its own per plane would stall every face
///     tile's plane loop): copied within the plane (local: replicate, mirror; wrap: periodic, from
///     the boxes of the opposite faces in the buffer), or from the staging
///     buffer it was fetched into an iteration earlier, plane p + 2's then fetched (staged).
///     Compiled with H = kWithin (the copy within the plane alone), a face tile's first plane is
///     patched when the tile starts, behind a barrier of its own (one per face tile).
///   - copy: every thread copies its share of the plane (cp.async), then a block barrier; each
///     tile starts with its maps and its first plane.
/// __launch_bounds__(threads, S::kMinBlocks): without a bound ptxas took 144-168 registers for
/// KO 4-8, which allowed only 3 blocks of 128 threads per SM; KO 4 now runs at 5 blocks (96 of
/// 102 registers, no spill); TX 8 x KO 8 and TX 16 x KO 2 spilled 8 and 24 bytes at 128 registers
/// once the last tap block became compile-time and the stores 128-bit, so they get 3; KO 1 x TX 8
/// gets 8 blocks (64 registers). TiledShape::kMinBlocks has the measurements.
/// Launched on the pad kernel's output, it may start before that kernel ends (grid_dependency.h):
/// the taps load overlaps its end, the first plane waits for the padded input.
/// R: the row code of every filter width, or of one (TiledRowsFixed; the host checks
/// tiled_rows_fit). H: the halo code (TiledHaloCode; the host checks tiled_halo_code_fits).
template <typename S, typename R = TiledRowsAny, TiledHaloCode H = TiledHaloCode::kAny>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    tiled_kernel(Geometry g, TiledLayout l, const float* __restrict__ in, float* __restrict__ out,
                 const float* __restrict__ taps, const __grid_constant__ TiledMaps tensor_maps,
                 int loads, int taps_laid_out) {
  extern __shared__ __align__(1024) float4 shared_words[];
  float* taps_s = reinterpret_cast<float*>(shared_words);
  // Plane buffer b (0 or 1) starts at tile0 + b * l.tile_floats (arithmetic, not an array of two
  // pointers: a run-time index into one would put it in local memory); its barrier is barriers[b].
  float* const tile0 = taps_s + l.tile_offset;
  int* const maps = reinterpret_cast<int*>(taps_s + l.map_offset);
  uint64_t* const barriers = reinterpret_cast<uint64_t*>(taps_s + l.barrier_offset);
  const int tid = threadIdx.x;
  const int tx = tid % S::BX, ty = tid / S::BX;
  const bool bulk = loads != kTiledThreadCopies;
  const int tiles = l.tiles;
  const int planes = tiled_planes<S>(g);
  const int grid = static_cast<int>(gridDim.x);
  int tile = blockIdx.x;
  if (tile >= tiles)
    return;
  if (bulk && tid == 0) {
    bulk_barrier_init(&barriers[0]);
    bulk_barrier_init(&barriers[1]);
  }
  // Published by the first barrier below. Laid out on the host (tiled_lay_out_taps) or here.
  if (taps_laid_out)
    tiled_copy_taps<S>(l, taps, taps_s, tid);
  else
    tiled_load_taps<S>(g, l, taps, taps_s, tid);
  grid_dependency_wait();  // the input may be the previous kernel's output (a padded copy)
  TileOrigin t = tiled_origin<S>(l, tile);
  // Planes used so far: the plane in hand is in buffer step & 1, whose barrier completes its
  // phase of parity (step >> 1) & 1 (one counter for both: the KO 4 shape spilled with two).
  unsigned step = 0;
  if (bulk) {
    if (tid == 0)
      tiled_bulk_load_plane<S>(g, l, tensor_maps, in, tile0, &barriers[0], t, 0, 0);
    // The halo of the block's first plane (and, staged, the fetch of its second; the loop's end
    // does this for the plane after next), once every thread sees the initialised barriers.
    if constexpr (H == TiledHaloCode::kAny) {
      if (l.halo_staged && tiled_halo_needed(l, t)) {
        tiled_halo_list<S>(g, l, t, taps_s, tid);
        tiled_halo_fetch<S>(g, l, in, taps_s, t, 0, 0, 0, nullptr, tid);
      }
      if (l.halo_slots > 0) {
        __syncthreads();  // the barriers' initialisation (block-uniform branch)
        tiled_halo_advance<S>(g, l, in, taps_s, tile0, barriers, t, grid, tile, 0, 0, step, tid);
      }
    }
  }
  const int per_slice = tiled_slice_planes<S>(g), slices = g.filter_extent[2];
  for (;;) {
    float acc[S::KO][S::TX];
#pragma unroll
    for (int q = 0; q < S::KO; ++q)
#pragma unroll
      for (int x = 0; x < S::TX; ++x)
        acc[q][x] = 0.0f;
    if (!bulk) {
      tiled_load_maps<S>(g, l, t, maps, tid);
      __syncthreads();  // the maps, and the first time the taps
      tiled_load_plane<S>(g, l, in, tile0 + (step & 1) * l.tile_floats, maps, t, 0, tid);
      tiled_commit();
    } else if (tile == static_cast<int>(blockIdx.x)) {
      __syncthreads();  // the taps, the barriers and the first plane's halo
    }
    // kWithin: whether this tile has a halo, once; if so its first plane patched now.
    [[maybe_unused]] bool face = false;
    if constexpr (H == TiledHaloCode::kWithin) {
      face = tiled_halo_needed(l, t);
      if (face) {
        tiled_halo_start_within<S>(g, l, t, taps_s, tile0 + (step & 1) * l.tile_floats,
                                   &barriers[step & 1], (step >> 1) & 1u, tid);
        __syncthreads();  // the patch, before any thread computes the plane
      }
    }
    // Plane p = j2 * per_slice + s of the tile (the loop counts j2 and s instead of dividing p).
    for (int j2 = 0, s = 0; j2 < slices; ++step) {
      // Buffer `next` was last read in the previous iteration, which ended with a barrier.
      const int current = step & 1, next = current ^ 1;
      float* const tile_current = tile0 + current * l.tile_floats;
      if (bulk) {
        // The plane after this one: the next of this tile, or the next tile's first.
        if (tid == 0) {
          const int p = j2 * per_slice + s + 1;
          const bool last = p == planes;
          const int next2 = l.slice_planes.quotient(p);
          if (!last || tile + grid < tiles) {
            tiled_bulk_load_plane<S>(g, l, tensor_maps, in, tile0 + next * l.tile_floats,
                                     &barriers[next], last ? tiled_origin<S>(l, tile + grid) : t,
                                     last ? 0 : next2,
                                     last ? 0 : l.slice_planes.remainder(p, next2));
          }
        }
        bulk_wait(&barriers[current], (step >> 1) & 1u);
      } else {
        const int p = j2 * per_slice + s;
        if (p + 1 < planes) {
          tiled_load_plane<S>(g, l, in, tile0 + next * l.tile_floats, maps, t, p + 1, tid);
          tiled_commit();
          tiled_wait(1);  // this thread's copies of plane p are done
        } else {
          tiled_wait(0);
        }
        __syncthreads();  // ... and every thread's
      }
      tiled_compute_plane<S, R>(g, l, taps_s, tile_current, acc, j2, s, tx, ty);
      if (++s == per_slice) {
        s = 0;
        ++j2;
      }
      if constexpr (H == TiledHaloCode::kAny) {
        if (l.halo_slots > 0)  // the next plane's halo (staged: the one after's fetched)
          tiled_halo_advance<S>(g, l, in, taps_s, tile0, barriers, t, grid, tile, j2, s, step + 1,
                                tid);
      } else if constexpr (H == TiledHaloCode::kWithin) {
        if (face && j2 < slices)  // the tile's next plane (its first: when the next tile starts)
          tiled_halo_patch_within<S>(l, taps_s, tile0 + next * l.tile_floats, &barriers[next],
                                     ((step + 1) >> 1) & 1u, tid);
      }
      __syncthreads();  // plane p's buffer is free for the plane after next
    }
    tiled_store<S>(g, out, t, acc, tx, ty);
    tile += grid;
    if (tile >= tiles)
      return;
    t = tiled_origin<S>(l, tile);
  }
}

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
