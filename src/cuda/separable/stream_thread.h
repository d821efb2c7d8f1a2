// The streaming kernel of separable filters: a 3D filter with K taps along each of x, y and z in
// one pass, each block streaming a column of x-y tiles along z through shared memory by bulk
// tensor copies (kernels/bulk_copy.h).
//
// Why: a separable filter is bound by memory traffic. The column kernel's two passes (x fused
// into y, then z: column_thread.h) move the volume through DRAM twice each way (3.6x the memory
// floor on the H200 for a 17-tap Gaussian on 256^3); the slab kernel (slab_thread.h) moves it once
// but stages its planes thread by thread (cp.async), whose instructions cost it more than the
// second pass saves where the column kernel's x tiles are whole. Here a block owns a tile of
// kTileX x kTileY outputs in x-y and a chunk of output planes along z:
//   - one thread copies each input plane's tile plus its x-y halo (a box of (kTileX + K - 1) x
//     (kTileY + K - 1) floats) into shared memory with one bulk tensor copy, kStages planes in
//     flight on shared-memory barriers; the copy engine fills zeros outside the volume, planes
//     along z are read at boundary-resolved coordinates, and a face tile under a boundary other
//     than zero patches the x-y halo as the tiled kernel does (tiled/tiled_halo.h: copied within
//     the plane where its values lie in the box, else fetched from global memory);
//   - the x pass (kXOut outputs per task from a window of kXOut + K - 1 floats, 16-byte shared
//     loads) writes the plane's kTileY + K - 1 x-filtered rows into one of two x buffers; one
//     block barrier per plane; the y pass gives each thread kYRun outputs down one column;
//   - the z pass is a ring of K accumulators per output in registers: each plane's x-y filtered
//     values are fma'd into the K output planes they reach, and the output plane whose last tap
//     came is stored. The ring step is dispatched on the plane mod K to one of K compiled steps
//     (stream_ring_dispatch), so every ring slot is a compile-time index and the ring stays in
//     registers, while the rest of the plane loop is compiled once;
//   - taps are kernel parameters (StreamTaps): every FMA reads its tap as a constant-bank operand,
//     so the ring, the windows and the addresses fit the registers of two blocks per SM (110, no
//     spills). H200, 17-tap Gaussian on 256^3: 0.0894 ms, 2.8x the memory floor, against 0.1168
//     for the column passes (docs/performance.md).
// Arithmetic: each axis sums its taps in ascending order from zero (fmaf from 0.0f), x first, then
// y, then z, as the column passes do (x fused into y, then z), so both plans give the same bits.
// Every tap multiplies the input of its own footprint only (no padding taps), so an Inf or NaN
// reaches only the outputs whose footprint holds it.
//
// The phases (block, plane box, x pass, y pass, ring step, store) are NDCONV_HD functions so that
// the host emulation (tests/gpu/emulate_stream.h) runs them in the order the barriers impose; the
// kernel is stream_kernel.cuh.
//
// Geometry: canonical [x, y, 1, z] (canonical_order(3, 2)), input boxes starting on 16-byte
// boundaries along x (offset[0] a multiple of 4: cuda/tensor_map.h); taps z, then y, then x.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/tiled/tiled_halo.h"
#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/row_taps.h"
#include "kernels/schedule.h"
#include "kernels/vector_access.h"

namespace ndconv::kernels {

/// The block's shape: a tile of kTileX x kTileY outputs per plane, kThreads threads, kStages
/// planes in flight, and the blocks per SM the compiler must allow (registers: 65536 /
/// (kThreads * kMinBlocks)). The product's is StreamShape; dev/stream_sweep.cu times others.
template <int kTileX_, int kTileY_, int kThreads_, int kStages_, int kMinBlocks_, int kXOut_ = 4,
          bool kZTapRegisters_ = false>
struct StreamShapeOf {
  static constexpr int kTileX = kTileX_;
  static constexpr int kTileY = kTileY_;
  static constexpr int kThreads = kThreads_;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;
  /// Outputs per task of the x pass (consecutive x of one row; 16-byte reads and stores).
  static constexpr int kXOut = kXOut_;
  /// The ring's taps in registers (loaded from shared memory once per block) rather than as
  /// constant-bank operands: K more registers (dev/stream_sweep.cu times both).
  static constexpr bool kZTapRegisters = kZTapRegisters_;
  /// The tile's rows, under the name the tiled halo's functions read (tiled_halo_list).
  static constexpr int BY = kTileY;
  /// Outputs per thread down one column of the tile (the y pass, the ring, the stores).
  static constexpr int kYRun = kTileX * kTileY / kThreads;
  static_assert(kTileX % 4 == 0 && kThreads % kTileX == 0 && kTileX * kTileY % kThreads == 0,
                "threads cover the tile in whole columns");
  static_assert(kXOut % 4 == 0 && kTileX % kXOut == 0, "x tasks of whole 16-byte groups");
  static_assert(kStages >= 2, "a plane in flight while one is filtered");
};
using StreamShape = StreamShapeOf<32, 32, 256, 4, 2>;

/// Taps per axis of the streaming kernel's instantiations, at most.
inline constexpr int kStreamMaxTaps = 17;

/// The most output planes along z a block emits (the plane table's size).
inline constexpr int kStreamMaxChunk = 256;

/// A streaming launch's taps, as kernel parameters.
struct StreamTaps {
  float x[kStreamMaxTaps];
  float y[kStreamMaxTaps];
  float z[kStreamMaxTaps];
};

/// A streaming launch's layout (shared memory in floats from a 128-byte aligned start) and its
/// chunks along z.
struct StreamLayout {
  int k;             ///< taps per axis
  int box_x, box_y;  ///< the plane box: kTileX + K - 1 columns (its row pitch), kTileY + K - 1 rows
  int plane_floats;  ///< one stage buffer (the box, rounded up to 128 bytes); buffers from 0
  int xbuf;          ///< the two x-filtered buffers (box_y rows of kTileX each)
  int xbuf_floats;   ///< one x-filtered buffer
  int barriers;      ///< kStages 8-byte barriers, one per stage buffer
  int planes;        ///< the plane table (stream_plane_table): kStreamMaxChunk + K - 1 ints
  int taps;          ///< the z taps (K floats) for shapes with kZTapRegisters
  int total_floats;  ///< shared memory per block
  int chunk;         ///< output planes along z per block (the last chunk may hold fewer)
  /// The face tiles' halo (tiled/tiled_halo.h) in the tiled kernel's terms: pitch box_x, rows
  /// box_y, columns box_x, no lead; halo_slots 0 (zero boundary, or no tile reads outside the
  /// volume along x or y) or the slots, mode and lists that tiled_add_halo set.
  TiledLayout halo;
};

template <int K, typename S = StreamShape>
inline StreamLayout stream_layout(const Geometry& g) {
  static_assert(K >= 1 && K <= kStreamMaxTaps && (K - 1) % 4 == 0,
                "windows of whole 16-byte reads: K + 3 floats");
  (void)g;
  StreamLayout l{};
  l.k = K;
  l.box_x = S::kTileX + K - 1;
  l.box_y = S::kTileY + K - 1;
  l.plane_floats = (l.box_x * l.box_y + 31) / 32 * 32;
  l.xbuf = S::kStages * l.plane_floats;
  l.xbuf_floats = l.box_y * S::kTileX;
  l.barriers = l.xbuf + 2 * l.xbuf_floats;
  l.planes = l.barriers + 2 * S::kStages;
  l.taps = l.planes + kStreamMaxChunk + K - 1;
  l.total_floats = l.taps + K;
  l.chunk = 1;
  l.halo = TiledLayout{};
  l.halo.pitch = l.box_x;
  l.halo.rows = l.box_y;
  l.halo.columns = l.box_x;
  l.halo.lead = 0;
  l.halo.halo_slots = 0;
  l.halo.halo_offset = l.total_floats;
  l.halo.total_floats = l.total_floats;
  l.halo.inner[0] = l.halo.inner[1] = l.halo.inner[2] = l.halo.inner[3] = -1;
  return l;
}

/// The launch: one block per x-y tile and chunk along z. With `resident_blocks` (the blocks the
/// device holds at once; 0: one chunk) the volume is cut into as many chunks as fill the device
/// once, each at least `min_chunk` output planes (a chunk reads K - 1 planes more than it emits and
/// filters them along x and y) and at most kStreamMaxChunk: sets l.chunk.
template <typename S = StreamShape>
inline LaunchShape stream_launch_shape(const Geometry& g, StreamLayout& l, int64_t resident_blocks,
                                       int min_chunk) {
  const int64_t least = (g.out_extent[3] + kStreamMaxChunk - 1) / kStreamMaxChunk;
  return plane_march_launch<S::kTileX, S::kTileY>(g, S::kThreads, l.total_floats, resident_blocks,
                                                  min_chunk, least, l.chunk);
}

/// What a block owns: its tile's first output (the tiled halo's origin: o[0], o[1]; o[3] its
/// first output plane) and its output planes [o_lo, o_hi), from `planes` input planes.
struct StreamBlock {
  TileOrigin t;
  int o_lo, o_hi;
  int planes;
};

template <typename S = StreamShape>
NDCONV_HD StreamBlock stream_block(const Geometry& g, const StreamLayout& l, int bx, int by,
                                   int bz) {
  StreamBlock b;
  b.t.o[0] = bx * S::kTileX;
  b.t.o[1] = by * S::kTileY;
  b.t.o[2] = 0;
  b.o_lo = bz * l.chunk;
  b.o_hi =
      b.o_lo + l.chunk < g.out_extent[3] ? b.o_lo + l.chunk : static_cast<int>(g.out_extent[3]);
  b.t.o[3] = b.o_lo;
  b.planes = b.o_hi - b.o_lo + l.k - 1;
  return b;
}

/// Planes phase (every thread, once per block, before a block barrier): the boundary-resolved
/// input plane along z of each of the block's input planes (-1, a plane of zeros, outside under
/// the zero boundary) into the plane table, so that the thread issuing the copies works out no
/// boundary in the plane loop (its division code took registers there that the ring needs).
/// 32-bit: stream_can_implement.
NDCONV_HD void stream_plane_table(const Geometry& g, const StreamLayout& l, const StreamBlock& b,
                                  float* shared, int tid, int threads) {
  int* const table = reinterpret_cast<int*>(shared + l.planes);
  for (int p = tid; p < b.planes; p += threads) {
    table[p] = boundary_index_t<int>(b.o_lo + static_cast<int>(g.offset[3]) + p,
                                     static_cast<int>(g.in_extent[3]), g.boundary);
  }
}

/// Load phase (one thread, after the plane table's barrier): input plane p of block b into stage
/// buffer `plane`, completing `barrier`: the box at the tile's first input column and row (the
/// copy engine fills zeros outside the volume) and the plane table's plane. The host form (the
/// emulation) copies the box itself, with zeros outside the volume.
NDCONV_HD void stream_load_plane(const Geometry& g, const StreamLayout& l, const TensorMap& map,
                                 const float* in, const StreamBlock& b, const float* shared, int p,
                                 float* plane, uint64_t* barrier) {
  const int c[4] = {b.t.o[0] + static_cast<int>(g.offset[0]),
                    b.t.o[1] + static_cast<int>(g.offset[1]), 0,
                    reinterpret_cast<const int*>(shared + l.planes)[p]};
#ifdef __CUDA_ARCH__
  (void)in;
  bulk_copy_box(map, c, plane, barrier, l.box_x * l.box_y * static_cast<int>(sizeof(float)));
#else
  (void)map, (void)barrier;
  bulk_copy_box_host(g, in, c, l.box_x, l.box_y, plane);
#endif
}

/// Halo phase (every thread, face tiles of a launch with halo slots), once plane p's copy in
/// `plane` has landed: this thread's halo elements of it, copied within the plane (local) or
/// fetched from input plane p (direct; l.halo.halo_staged is never set). A block barrier must
/// follow before the x pass reads the plane.
template <typename S = StreamShape>
NDCONV_HD void stream_patch_halo(const Geometry& g, const StreamLayout& l, const float* in,
                                 float* shared, float* plane, const StreamBlock& b, int p,
                                 int tid) {
  if (l.halo.halo_local) {
    tiled_halo_copy_local<S>(l.halo, shared, plane, tid);
  } else {
    tiled_halo_fetch<S>(g, l.halo, in, shared, b.t, 0, p, 0, plane, tid);
    tiled_wait(0);
  }
  bulk_fence_shared();  // these writes come before the copy engine refills the buffer
}

/// X pass (every thread, between the plane's barrier and the next): the box's rows filtered along
/// x into x buffer `xb` (box_y rows of kTileX), kXOut outputs per task from a window of
/// kXOut + K - 1 floats.
template <int K, typename S = StreamShape>
NDCONV_HD void stream_filter_x(const StreamTaps& t, const float* plane, float* xb, int tid) {
  constexpr int kX = S::kXOut, kGroups = S::kTileX / kX;
  constexpr int kBoxX = S::kTileX + K - 1, kBoxY = S::kTileY + K - 1;
  constexpr int kTasks = kBoxY * kGroups, kWindow = kX + K - 1;
  for (int task = tid; task < kTasks; task += S::kThreads) {
    const int row = task / kGroups, x = task % kGroups * kX;
    float w[kWindow];
    tiled_read<kWindow>(w, plane + row * kBoxX + x);
    float a[kX];
    NDCONV_UNROLL
    for (int e = 0; e < kX; ++e)
      a[e] = 0.0f;
    NDCONV_UNROLL
    for (int j = 0; j < K; ++j) {
      NDCONV_UNROLL
      for (int e = 0; e < kX; ++e)
        a[e] = fmaf(t.x[j], w[e + j], a[e]);
    }
    NDCONV_UNROLL
    for (int e = 0; e < kX; e += 4)
      vector_store<MemorySpace::Shared>(xb + row * S::kTileX + x + e, a + e);
  }
}

/// The thread's column of the tile and its first row (the y pass, the ring, the stores).
template <typename S = StreamShape>
NDCONV_HD int stream_column(int tid) {
  return tid % S::kTileX;
}
template <typename S = StreamShape>
NDCONV_HD int stream_first_row(int tid) {
  return tid / S::kTileX * S::kYRun;
}

/// Y pass (every thread, after the plane's barrier): the thread's kYRun x-y filtered values down
/// its column, from x buffer `xb`.
template <int K, typename S = StreamShape>
NDCONV_HD void stream_filter_y(const StreamTaps& t, const float* xb, int tid,
                               float (&v)[S::kYRun]) {
  const float* col = xb + stream_first_row<S>(tid) * S::kTileX + stream_column<S>(tid);
  NDCONV_UNROLL
  for (int i = 0; i < S::kYRun; ++i)
    v[i] = 0.0f;
  // Row m feeds outputs i = m - j for taps j; each output still sums its taps in ascending order.
  NDCONV_UNROLL
  for (int m = 0; m < S::kYRun + K - 1; ++m) {
    const float w = col[m * S::kTileX];
    NDCONV_UNROLL
    for (int i = 0; i < S::kYRun; ++i) {
      if (m - i >= 0 && m - i < K)
        v[i] = fmaf(t.y[m - i], w, v[i]);
    }
  }
}

/// Ring step (per thread) for plane p with slot R = p mod K (compile-time: stream_ring_dispatch):
/// the plane's values `v` fma'd into the K outputs they reach (output p - j, ring slot
/// (R - j) mod K, tap j: each output gets its taps in ascending order, the slot zeroed before its
/// first); then the output whose last tap came (p - K + 1, slot (R + 1) mod K) into `o`, and its
/// slot zeroed for output p + 1. Slots of outputs before the block's first receive terms that are
/// zeroed before their own outputs start.
template <int K, typename S, int R, typename ZTaps>
NDCONV_HD void stream_ring_step(float (&ring)[K][S::kYRun], const float (&v)[S::kYRun],
                                const ZTaps& tz, float (&o)[S::kYRun]) {
  NDCONV_UNROLL
  for (int j = 0; j < K; ++j) {
    const int slot = (R - j + K) % K;
    NDCONV_UNROLL
    for (int i = 0; i < S::kYRun; ++i)
      ring[slot][i] = fmaf(tz[j], v[i], ring[slot][i]);
  }
  constexpr int kDone = (R + 1) % K;
  NDCONV_UNROLL
  for (int i = 0; i < S::kYRun; ++i) {
    o[i] = ring[kDone][i];
    ring[kDone][i] = 0.0f;
  }
}

/// The ring step for run-time slot r = p mod K in [Lo, Hi), dispatched by halving the range to the
/// step compiled for it (about log2 K compares), so that every ring index is a compile-time
/// constant (the ring stays in registers) while the rest of the plane loop is compiled once: with
/// the whole loop unrolled by K instead (one copy of the x and y passes per slot) the kernel was
/// 283 KB of code, and ran 1.44x slower than this (H200, 256^3: 0.1274 against 0.0885 ms).
template <int K, typename S, int Lo = 0, int Hi = K, typename ZTaps>
NDCONV_HD void stream_ring_dispatch(int r, float (&ring)[K][S::kYRun], const float (&v)[S::kYRun],
                                    const ZTaps& tz, float (&o)[S::kYRun]) {
  if constexpr (Hi - Lo == 1) {
    (void)r;
    stream_ring_step<K, S, Lo>(ring, v, tz, o);
  } else {
    constexpr int kMid = (Lo + Hi) / 2;
    if (r < kMid)
      stream_ring_dispatch<K, S, Lo, kMid>(r, ring, v, tz, o);
    else
      stream_ring_dispatch<K, S, kMid, Hi>(r, ring, v, tz, o);
  }
}

/// The thread's outputs: where its first output of the block's next output plane goes, and how
/// many of its kYRun rows exist (0 for a column past the volume).
struct StreamColumn {
  float* next;
  int rows;
};

/// The thread's column of outputs in block b (per thread, once): at the block's first output plane.
template <typename S = StreamShape>
NDCONV_HD StreamColumn stream_output_column(const Geometry& g, const StreamBlock& b, float* out,
                                            int tid) {
  const int64_t x = b.t.o[0] + stream_column<S>(tid), y = b.t.o[1] + stream_first_row<S>(tid);
  const int64_t rows = g.out_extent[1] - y < S::kYRun ? g.out_extent[1] - y : S::kYRun;
  StreamColumn c;
  c.rows = x < g.out_extent[0] && rows > 0 ? static_cast<int>(rows) : 0;
  c.next = out + b.o_lo * g.out_stride[3] + y * g.out_stride[1] + x * g.out_stride[0];
  return c;
}

/// Store phase (per thread): its outputs `o` of the next output plane that exist, then the column
/// steps on to the plane after. A running pointer: with the plane's address worked out per step,
/// the compiler kept one per unrolled step in registers (72 more than the ring leaves).
template <typename S = StreamShape>
NDCONV_HD void stream_store(const Geometry& g, StreamColumn& c, const float (&o)[S::kYRun]) {
  NDCONV_UNROLL
  for (int i = 0; i < S::kYRun; ++i) {
    if (i < c.rows)
      c.next[i * g.out_stride[1]] = o[i];
  }
  c.next += g.out_stride[3];
}

}  // namespace ndconv::kernels
