// The slab kernel of separable filters: a 3D filter with K taps along each of x, y and z in one
// pass (2.5D blocking).
//
// Why: a separable filter is bound by memory traffic. The column kernel (column_thread.h) needs two
// passes for three filtered axes (x fused into y, then z), so the volume goes through DRAM twice
// each way: 3.6x the memory floor on the H200 for a 17-tap Gaussian on 256^3. Here a block owns a
// tile of kTileX x kTileY outputs in x-y and marches along z through a chunk of planes:
//   - each input plane's tile plus its x-y halo (K - 1 columns and rows) is copied into shared
//     memory (16-byte cp.async; three buffers, so two planes are in flight while one is
//     filtered); the halos are read again by the neighbouring tiles, from L2;
//   - the block filters the plane along x (an item: 4 consecutive x of one raw row, K + 3 reads)
//     into one of two x-filtered tiles (kTileY + K - 1 rows of kTileX), then, in the next march
//     step, along y (a thread: its 4 voxels, one x and 4 consecutive y, K + 3 reads), so each
//     thread holds the x-y filtered values of its own 4 voxels of the plane. One barrier per
//     plane: the x filter of plane n and the y filter of plane n - 1 run between the same two
//     barriers;
//   - each thread keeps the last K of those planes in a ring of registers and emits the z-filtered
//     output plane from them (K FMAs per voxel). The ring's slot is a run-time plane count, but
//     every access to it goes through slab_ring_step, which dispatches to code with the slot as a
//     compile-time constant, so the ring stays in registers;
//   - DRAM traffic is about one read and one write of the volume: a volume with fewer tiles than
//     the device holds blocks is cut into chunks along z, each block re-reading K - 1 planes of
//     the chunk before it; odd chunks march down, so that both chunks sharing planes read them at
//     about the same time (both at their starts or both at their ends), from L2.
// Arithmetic: x, then y, then z, each output of each axis one chain of fmaf over the taps in
// order from 0.0f, rounded to float between axes: exactly what the column passes (x fused into y,
// then z) and the tiled and blocked passes compute, so every GPU plan of a separable filter gives
// the same bits (a block of a volume filtered on its own takes whichever plan its size gets, and
// ndconv.dask's results must equal the whole volume's).
// Taps are kernel parameters (SlabTaps), so every FMA reads its tap as a constant operand. K is a
// compile-time constant (kSlabTapCounts): every loop over taps is unrolled with no padding, and no
// input outside an output's footprint is ever multiplied (an Inf or NaN reaches only the outputs
// whose footprint holds it).
//
// The phases (maps, items, stage, x filter, y filter, ring step, store) are NDCONV_HD functions so
// that the host emulation (tests/gpu/emulate.h) runs them in the order the barriers impose.
//
// Geometry: canonical [x, y, 1, z] (canonical_order(3, 2)); taps at tap_base: z, then y, then x.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/async_copy.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/row_taps.h"
#include "kernels/schedule.h"
#include "kernels/vector_access.h"

namespace ndconv::kernels {

/// The block tile: kTileX x kTileY outputs, 4 consecutive y of one x per thread (a warp's 32
/// lanes on 32 consecutive x, so that the y filter's shared reads and the stores are whole rows).
/// The product's shape is SlabShape: 32 x 32 at 2 blocks per SM, on the H200 0.2727 ms at 272^3
/// against 0.2900 for 64 x 16 (0.2025 against 0.2154 at 256^3; dev/slab_sweep.cu, x filtered
/// first; the y-first kernel's 64 x 16 took 0.2821 and 0.2093 in the same runs).
template <int kTileX_, int kTileY_, int kMinBlocks_>
struct SlabShapeOf {
  static constexpr int kTileX = kTileX_;
  static constexpr int kTileY = kTileY_;
  static constexpr int kThreads = kTileX * kTileY / 4;
  /// Blocks per SM the compiler must allow (the ring of K x 4 floats and the filters' windows in
  /// 65536 / (kThreads * kMinBlocks) registers).
  static constexpr int kMinBlocks = kMinBlocks_;
  /// Raw plane buffers: the one being filtered and two in flight.
  static constexpr int kBuffers = 3;
  static_assert(kTileX % 32 == 0 && kTileY % 4 == 0, "whole warps along x, whole y items");
};
using SlabShape = SlabShapeOf<32, 32, 2>;

/// Taps per axis of the slab kernel's instantiations (the same count along x, y and z).
inline constexpr int kSlabMaxTaps = 17;

/// A slab launch's taps, as kernel parameters.
struct SlabTaps {
  float x[kSlabMaxTaps];
  float y[kSlabMaxTaps];
  float z[kSlabMaxTaps];
};

/// Compile-time sizes of the K-tap instantiation.
template <int K, typename S = SlabShape>
struct SlabSizes {
  static_assert(K >= 1 && K <= kSlabMaxTaps, "a compiled tap count");
  /// Raw quads per row at most: the tile and halo from any shift (0..3).
  static constexpr int kQuads = (S::kTileX + K + 5) / 4;
  static constexpr int kRows = S::kTileY + K - 1;
  /// Raw quads each thread stages per plane, at most.
  static constexpr int kItems = (kRows * kQuads + S::kThreads - 1) / S::kThreads;
};

/// Raw quads the x filter reads for 4 outputs whose first read is kShift floats into its first
/// quad: kShift + K + 3 floats.
template <int K, int kShift>
inline constexpr int kSlabXQuads = (kShift + K + 2) / 4 + 1;

/// A slab launch's layout (shared memory in floats) and its chunks along z.
struct SlabLayout {
  int k;                ///< taps per axis
  int shift;            ///< offset0 mod 4: raw rows start this many columns before the first read
  int quads;            ///< raw quads per row
  int rows;             ///< raw rows per plane: kTileY + K - 1
  int pitch;            ///< floats per raw row (4 * quads)
  int raw_floats;       ///< one raw plane buffer (rows * pitch), buffers from offset 0
  int filtered;         ///< offset of x-filtered tile 0 (rows rows of kTileX); tile 1 follows it
  int filtered_floats;  ///< one x-filtered tile
  int x_map;            ///< offset of the column map (4 * quads ints)
  int y_map;            ///< offset of the row map (rows ints)
  int total_floats;     ///< shared memory per block
  int chunk;            ///< outputs along z per block (the last chunk may hold fewer)
  bool vector_in;       ///< 16-byte copies of raw quads inside the volume (set by the launcher)
};

template <int K, typename S = SlabShape>
inline SlabLayout slab_layout(const Geometry& g) {
  SlabLayout l{};
  l.k = K;
  l.shift = static_cast<int>(((g.offset[0] % 4) + 4) % 4);
  // The tile and its halo; also every quad the x filter of the tile's last 4 x reads.
  l.quads = (S::kTileX + K - 1 + l.shift + 3) / 4;
  l.rows = S::kTileY + K - 1;
  l.pitch = 4 * l.quads;
  l.raw_floats = l.rows * l.pitch;
  l.filtered = S::kBuffers * l.raw_floats;
  l.filtered_floats = l.rows * S::kTileX;
  l.x_map = l.filtered + 2 * l.filtered_floats;
  l.y_map = l.x_map + 4 * l.quads;
  l.total_floats = (l.y_map + l.rows + 3) / 4 * 4;
  l.chunk = static_cast<int>(g.out_extent[3]);
  l.vector_in = false;
  return l;
}

/// The launch: one block per x-y tile and chunk along z. With `resident_blocks` (the blocks the
/// device holds at once; 0: unknown) a volume of fewer tiles than that is cut into as many chunks
/// as fill the device once, each at least `min_chunk` planes (sets l.chunk).
template <typename S = SlabShape>
inline LaunchShape slab_launch_shape(const Geometry& g, SlabLayout& l, int64_t resident_blocks,
                                     int min_chunk) {
  return plane_march_launch<S::kTileX, S::kTileY>(g, S::kThreads, l.total_floats, resident_blocks,
                                                  min_chunk, 1, l.chunk);
}

/// What a block owns: its tile's origin, its chunk of outputs along z and its march.
struct SlabBlock {
  int64_t tile_x, tile_y;
  int64_t o_lo, o_hi;  ///< outputs along z [o_lo, o_hi)
  int planes;          ///< input planes it reads: o_hi - o_lo + K - 1
  bool down;           ///< marches from o_hi - 1 down to o_lo (odd chunks)
};

template <typename S = SlabShape>
NDCONV_HD SlabBlock slab_block(const Geometry& g, const SlabLayout& l, int64_t bx, int64_t by,
                               int64_t bz) {
  SlabBlock b;
  b.tile_x = bx * S::kTileX;
  b.tile_y = by * S::kTileY;
  b.o_lo = bz * l.chunk;
  b.o_hi = b.o_lo + l.chunk < g.out_extent[3] ? b.o_lo + l.chunk : g.out_extent[3];
  b.planes = static_cast<int>(b.o_hi - b.o_lo) + l.k - 1;
  b.down = (bz & 1) != 0;
  return b;
}

/// Input plane of march step n (boundary applied), -1 for a plane outside.
NDCONV_HD int64_t slab_input_plane(const Geometry& g, const SlabLayout& l, const SlabBlock& b,
                                   int n) {
  const int64_t i = b.down ? b.o_hi - 1 + g.offset[3] + (l.k - 1) - n : b.o_lo + g.offset[3] + n;
  return boundary_index_t<int64_t>(i, g.in_extent[3], g.boundary);
}

/// Output plane that march step n >= K - 1 emits.
NDCONV_HD int64_t slab_output_plane(const SlabLayout& l, const SlabBlock& b, int n) {
  return b.down ? b.o_hi - 1 - (n - (l.k - 1)) : b.o_lo + (n - (l.k - 1));
}

/// First raw column of the block's tile (a multiple of 4).
NDCONV_HD int64_t slab_first_column(const Geometry& g, const SlabLayout& l, const SlabBlock& b) {
  return b.tile_x + g.offset[0] - l.shift;
}

/// Maps phase (all threads, once per block): the input column of each raw column and the input row
/// of each raw row, boundary applied (-1: outside, reads zero).
template <typename S = SlabShape>
NDCONV_HD void slab_maps(const Geometry& g, const SlabLayout& l, const SlabBlock& b, float* shared,
                         int tid) {
  int* x_map = reinterpret_cast<int*>(shared + l.x_map);
  int* y_map = reinterpret_cast<int*>(shared + l.y_map);
  const int64_t x0 = slab_first_column(g, l, b);
  for (int c = tid; c < 4 * l.quads; c += S::kThreads)
    x_map[c] = static_cast<int>(boundary_index_t<int64_t>(x0 + c, g.in_extent[0], g.boundary));
  for (int r = tid; r < l.rows; r += S::kThreads) {
    y_map[r] = static_cast<int>(
        boundary_index_t<int64_t>(b.tile_y + g.offset[1] + r, g.in_extent[1], g.boundary));
  }
}

/// The raw quads a thread stages in every plane: where each lands in a raw buffer and where it
/// comes from in an input plane (>= 0: 16 bytes at that offset; kSlabZero: zeros; kSlabFace: 4
/// floats through the maps; kSlabNone: no quad).
inline constexpr int kSlabZero = -1, kSlabFace = -2, kSlabNone = -3;

template <int K, typename S = SlabShape>
struct SlabItems {
  int source[SlabSizes<K, S>::kItems];
  int destination[SlabSizes<K, S>::kItems];
};

/// Items phase (per thread, after the maps' barrier; fixed for the block's whole march).
template <int K, typename S = SlabShape>
NDCONV_HD SlabItems<K, S> slab_items(const Geometry& g, const SlabLayout& l, const SlabBlock& b,
                                     const float* shared, int tid) {
  const int* y_map = reinterpret_cast<const int*>(shared + l.y_map);
  const int64_t x0 = slab_first_column(g, l, b);
  SlabItems<K, S> it;
  NDCONV_UNROLL
  for (int k = 0; k < SlabSizes<K, S>::kItems; ++k) {
    const int i = tid + k * S::kThreads;
    it.source[k] = kSlabNone;
    it.destination[k] = 0;
    if (i >= l.rows * l.quads)
      continue;
    const int r = i / l.quads, q = i % l.quads;
    it.destination[k] = r * l.pitch + 4 * q;
    const int64_t x = x0 + 4 * q;
    if (y_map[r] < 0)
      it.source[k] = kSlabZero;
    else if (l.vector_in && x >= 0 && x + 4 <= g.in_extent[0])
      it.source[k] = static_cast<int>(y_map[r] * g.in_stride[1] + x);
    else
      it.source[k] = kSlabFace;
  }
  return it;
}

/// Stage phase (per thread): its raw quads of input plane `plane` (nullptr: a plane outside the
/// volume, zeros) into `buffer`, as cp.async copies that the caller commits.
template <int K, typename S = SlabShape>
NDCONV_HD void slab_stage(const Geometry& g, const SlabLayout& l, const SlabItems<K, S>& it,
                          const float* plane, float* buffer, const float* shared) {
  const int* x_map = reinterpret_cast<const int*>(shared + l.x_map);
  const int* y_map = reinterpret_cast<const int*>(shared + l.y_map);
  const float zeros[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  NDCONV_UNROLL
  for (int k = 0; k < SlabSizes<K, S>::kItems; ++k) {
    const int source = it.source[k];
    if (source == kSlabNone)
      continue;
    float* dst = buffer + it.destination[k];
    if (plane == nullptr || source == kSlabZero) {
      vector_store<MemorySpace::Shared>(dst, zeros);
    } else if (source >= 0) {
      vector_copy_async(dst, plane + source);
    } else {
      // A quad at an x face (or a layout without 16-byte copies): each float through the maps.
      const int r = it.destination[k] / l.pitch, c = it.destination[k] % l.pitch;
      const float* row = plane + y_map[r] * g.in_stride[1];
      for (int e = 0; e < 4; ++e) {
        const int x = x_map[c + e];
        if (x < 0)
          dst[e] = 0.0f;
        else
          tiled_copy_valid(dst + e, row + x * g.in_stride[0]);
      }
    }
  }
}

/// X filter of one item with the shift as a compile-time constant: raw row r, quad q of the tile
/// (x 4q .. 4q + 3), whose reads start kShift floats into raw quad q.
template <int K, int kShift, typename S>
NDCONV_HD void slab_filter_x_item(const SlabLayout& l, const SlabTaps& t, const float* raw,
                                  float* filtered, int r, int q) {
  constexpr int kQuadsRead = kSlabXQuads<K, kShift>;
  const float* row = raw + r * l.pitch + 4 * q;
  float w[4 * kQuadsRead];
  NDCONV_UNROLL
  for (int qq = 0; qq < kQuadsRead; ++qq) {
    float f[4];
    tiled_read<4>(f, row + 4 * qq);
    NDCONV_UNROLL
    for (int e = 0; e < 4; ++e)
      w[4 * qq + e] = f[e];
  }
  float v[4];
  NDCONV_UNROLL
  for (int e = 0; e < 4; ++e) {
    float acc = 0.0f;
    NDCONV_UNROLL
    for (int j = 0; j < K; ++j)
      acc = fmaf(t.x[j], w[kShift + e + j], acc);
    v[e] = acc;
  }
  vector_store<MemorySpace::Shared>(filtered + r * S::kTileX + 4 * q, v);
}

/// X filter phase (every thread): the raw plane's rows (the tile's and the y halo's) filtered
/// along x into an x-filtered tile of kTileX columns, 4 x per item, items spread over the threads.
template <int K, typename S = SlabShape>
NDCONV_HD void slab_filter_x(const SlabLayout& l, const SlabTaps& t, const float* raw,
                             float* filtered, int tid) {
  constexpr int kQuadsX = S::kTileX / 4;
  for (int i = tid; i < l.rows * kQuadsX; i += S::kThreads) {
    const int r = i / kQuadsX, q = i % kQuadsX;
    switch (l.shift) {
      case 0:
        slab_filter_x_item<K, 0, S>(l, t, raw, filtered, r, q);
        break;
      case 1:
        slab_filter_x_item<K, 1, S>(l, t, raw, filtered, r, q);
        break;
      case 2:
        slab_filter_x_item<K, 2, S>(l, t, raw, filtered, r, q);
        break;
      default:
        slab_filter_x_item<K, 3, S>(l, t, raw, filtered, r, q);
        break;
    }
  }
}

/// The thread's 4 voxels in the tile: x tid % kTileX, y 4 * (tid / kTileX) .. + 3.
template <typename S = SlabShape>
NDCONV_HD int slab_thread_x(int tid) {
  return tid % S::kTileX;
}
template <typename S = SlabShape>
NDCONV_HD int slab_thread_y(int tid) {
  return 4 * (tid / S::kTileX);
}

/// Y filter phase (every thread, a barrier after the x filter of the same plane): the x-y filtered
/// values of the thread's 4 voxels (K + 3 reads of its column of the x-filtered tile).
template <int K, typename S = SlabShape>
NDCONV_HD void slab_filter_y(const SlabTaps& t, const float* filtered, int tid, float (&v)[4]) {
  const float* column = filtered + slab_thread_y<S>(tid) * S::kTileX + slab_thread_x<S>(tid);
  NDCONV_UNROLL
  for (int m = 0; m < 4; ++m)
    v[m] = 0.0f;
  NDCONV_UNROLL
  for (int r = 0; r < K + 3; ++r) {
    const float f = column[r * S::kTileX];
    NDCONV_UNROLL
    for (int m = 0; m < 4; ++m) {
      const int j = r - m;
      if (j >= 0 && j < K)
        v[m] = fmaf(t.y[j], f, v[m]);
    }
  }
}

/// Ring step (per thread): the x-y filtered values `v` of march step n go to slot u = n mod K;
/// with `emit` (n >= K - 1, every slot filled) `o` receives the z-filtered output, tap j on the
/// plane j planes above the output's first (marching up: slot (u + 1 + j) mod K; down: slot
/// (u - j) mod K). Dispatches on u so that every ring index is a compile-time constant.
template <int K, bool kDown, int U = 0>
NDCONV_HD void slab_ring_step(int u, float (&ring)[K][4], const float (&v)[4], bool emit,
                              const SlabTaps& t, float (&o)[4]) {
  if constexpr (U < K) {
    if (u != U) {
      slab_ring_step<K, kDown, U + 1>(u, ring, v, emit, t, o);
      return;
    }
    NDCONV_UNROLL
    for (int e = 0; e < 4; ++e)
      ring[U][e] = v[e];
    if (!emit)
      return;
    NDCONV_UNROLL
    for (int e = 0; e < 4; ++e)
      o[e] = 0.0f;
    NDCONV_UNROLL
    for (int j = 0; j < K; ++j) {
      const int slot = kDown ? (U - j + K) % K : (U + 1 + j) % K;
      NDCONV_UNROLL
      for (int e = 0; e < 4; ++e)
        o[e] = fmaf(t.z[j], ring[slot][e], o[e]);
    }
  }
}

/// Store phase (per thread): its 4 outputs of output plane `o3` that exist (a warp stores 32
/// consecutive x of a row at a time).
template <typename S = SlabShape>
NDCONV_HD void slab_store(const Geometry& g, const SlabBlock& b, float* out, int64_t o3, int tid,
                          const float (&v)[4]) {
  const int64_t x = b.tile_x + slab_thread_x<S>(tid), y = b.tile_y + slab_thread_y<S>(tid);
  if (x >= g.out_extent[0])
    return;
  float* column = out + o3 * g.out_stride[3] + x * g.out_stride[0];
  for (int e = 0; e < 4; ++e) {
    if (y + e < g.out_extent[1])
      column[(y + e) * g.out_stride[1]] = v[e];
  }
}

}  // namespace ndconv::kernels
