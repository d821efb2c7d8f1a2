// The tiled kernel's __global__ entry point (tiled_thread.h, tiled_halo.h). Include from exactly
// one translation unit (tiled_launch.cu).
#pragma once

#include <cuda_runtime.h>

#include "cuda/tiled/tiled_halo.h"
#include "cuda/tiled/tiled_thread.h"
#include "kernels/geometry.h"
#include "kernels/grid_dependency.h"

namespace ndconv::kernels {

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

}  // namespace ndconv::kernels
