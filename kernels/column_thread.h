// The column pass of a separable filter: a 1D correlation along canonical axis 3 (the filtered
// axis; x stays on axis 0), optionally fused with the x pass.
//
// Why: a separable filter is bound by memory traffic, not by FMAs (17 taps per axis are 17 FMAs per
// voxel and pass, against 8 bytes moved). Three passes that each read and write the volume move 3x
// the floor, and the blocked kernel ran its y and z passes at half the copy bandwidth on the H100
// (one 4-byte load per lane, 16 outputs' accumulators limiting occupancy). Here:
//   - each thread owns kVector = 4 consecutive x (one 128-bit load or store per row) and KO
//     outputs along axis 3; a warp covers 128 consecutive x of one row, 512 contiguous bytes;
//   - the rows a thread's KO outputs share (KO + K - 1) are fetched once, B = 4 at a time, all
//     independent loads, so each lane keeps several 16-byte loads in flight;
//   - the fused form (kFuseX) filters along x on the fly: a warp stages the B raw rows it needs
//     (128 + K0 - 1 columns each, cp.async, double buffered, warp-private: no block barrier) in
//     shared memory, and each lane correlates its 4 x with tiled_row from there. The x-filtered
//     rows never reach global memory, so x and the first other axis cost one read and one write.
//
// Arithmetic: per step of B input rows s0..s0+B-1 and output q, the taps j = s - q that exist
// (0 <= j < K) form one contiguous range of rows; a step where all B rows have a tap for q runs
// 4 * B unconditional FMAs, a step at either end of the band checks each row (warp-uniform), and
// a step without any is skipped. No input outside an output's footprint is ever multiplied, so an
// Inf or NaN reaches only the outputs whose footprint holds it. The taps of a step (KO + B - 1 of
// them, j = s0 - KO + 1 ...) are read from shared memory into registers with 128-bit broadcasts;
// the tap array is padded with KO - 1 zeros in front so that those reads are aligned.
//
// Schedule: ColumnShape (KO, warps per block) is the only tuning; a block is kWarps warps, one row
// of axis 1 each, 128 x wide, KO deep along axis 3. The phases (stage, step, store) are separate
// NDCONV_HD functions so that the host emulation (tests/gpu/emulate.h) runs them in the order the
// warp barriers impose.
//
// Taps: g.tap_base holds the K3 taps along axis 3, followed (fused form) by the K0 taps along x.
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/tiled_thread.h"

namespace ndconv::kernels {

/// Compile-time shape of the column kernel: KO outputs along axis 3 per thread, kWarps warps
/// (rows of axis 1) per block.
template <int KO_, int kWarps_>
struct ColumnShape {
  static constexpr int KO = KO_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kVector = 4;       ///< consecutive x per thread (one 128-bit access)
  static constexpr int kRowsPerStep = 4;  ///< B: input rows along axis 3 fetched per step
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTileX = 32 * kVector;  ///< x per block (and per warp)
  /// Taps of one step in registers: KO + B - 1, rounded up for 128-bit reads.
  static constexpr int kTapWindow = (KO + kRowsPerStep - 1 + 3) / 4 * 4;
  /// Blocks per SM the compiler must allow: KO 16 keeps 64 accumulators, a 20-tap window and 16
  /// inputs (127 registers at 4 blocks, CUDA 13 ptxas); KO 8 half the accumulators (90 at 5; at 6,
  /// 80 registers, it spilled 4 bytes).
  static constexpr int kMinBlocks = KO >= 16 ? 4 : 5;
  /// The fused form also stages rows and filters them along x: 3 blocks (168 registers; at 128,
  /// KO 8 spilled 136 bytes, CUDA 13 ptxas).
  static constexpr int kMinBlocksFused = 3;
  static_assert(KO % 4 == 0, "KO must allow whole steps of taps");
};

/// Shared-memory layout of the column kernel for one geometry: the padded taps along axis 3, the
/// x taps (fused form) and, per warp, two staging buffers of B raw rows (fused form).
struct ColumnLayout {
  int steps;         ///< steps of B input rows: ceil((KO + K3 - 1) / B)
  int tap_floats;    ///< axis-3 taps: taps_s[KO - 1 + j] = tap j (zero outside 0..K3-1)
  int x_taps;        ///< offset of the x taps (fused form), padded to a multiple of 4
  int x_tap_floats;  ///< 0 when not fused
  int columns;       ///< raw columns a warp stages per row: kTileX + K0 - 1
  int pitch;         ///< floats per staged row (tiled_row reads up to 4 past its last tap block)
  int stage;         ///< offset of warp 0's staging buffers
  int stage_floats;  ///< per warp: 2 buffers x B rows x pitch (0 when not fused)
  int total_floats;
  /// 128-bit global accesses: x contiguous and every row start 16-byte aligned (set by the
  /// launcher, which knows the pointers; the kernel falls back to 4-byte accesses otherwise).
  bool vector_in;
  bool vector_out;
};

template <typename S>
NDCONV_HD ColumnLayout column_layout(const Geometry& g, bool fuse_x) {
  constexpr int B = S::kRowsPerStep;
  ColumnLayout l;
  const int k3 = g.filter_extent[3];
  l.steps = (S::KO + k3 - 1 + B - 1) / B;
  // Step b reads kTapWindow taps from taps_s + b * B.
  l.tap_floats = (l.steps - 1) * B + S::kTapWindow;
  l.x_taps = l.tap_floats;
  const int k0 = fuse_x ? g.filter_extent[0] : 1;
  l.x_tap_floats = fuse_x ? (k0 + 3) / 4 * 4 : 0;
  l.columns = S::kTileX + k0 - 1;
  // tiled_row over F = (K0 - 1) / 4 full blocks reads F + 2 vectors from a lane's start, and the
  // last lane starts at kTileX - 4.
  l.pitch = S::kTileX - 4 + ((k0 - 1) / 4 + 2) * 4;
  l.stage = l.x_taps + l.x_tap_floats;
  l.stage_floats = fuse_x ? 2 * B * l.pitch : 0;
  l.total_floats = l.stage + S::kWarps * l.stage_floats;
  l.vector_in = false;
  l.vector_out = false;
  return l;
}

/// Block tiles along each launch dimension: x tiles, axis-1 tiles, (axis-2 index, KO chunk).
template <typename S>
NDCONV_HD void column_block_counts(const Geometry& g, int64_t counts[3]) {
  counts[0] = (g.out_extent[0] + S::kTileX - 1) / S::kTileX;
  counts[1] = (g.out_extent[1] + S::kWarps - 1) / S::kWarps;
  counts[2] = g.out_extent[2] * ((g.out_extent[3] + S::KO - 1) / S::KO);
}

/// What one lane of one warp owns in a block tile.
struct ColumnOrigin {
  int64_t tile_x;  ///< first x of the warp
  int64_t x0;      ///< first of the lane's kVector outputs along x
  int64_t o1, o2, o3;
  bool active;  ///< the warp's row exists (warp-uniform)
};

template <typename S>
NDCONV_HD ColumnOrigin column_origin(const Geometry& g, int64_t bx, int64_t by, int64_t bz,
                                     int warp, int lane) {
  // 32-bit division (a 64-bit one is a subroutine call): the plan keeps axis 2 x the KO chunks
  // below 2^31 (kColumnMaxExtent).
  const unsigned chunks3 = static_cast<unsigned>((g.out_extent[3] + S::KO - 1) / S::KO);
  const unsigned tile = static_cast<unsigned>(bz);
  ColumnOrigin o;
  o.tile_x = bx * S::kTileX;
  o.x0 = o.tile_x + lane * S::kVector;
  o.o1 = by * S::kWarps + warp;
  o.o2 = tile / chunks3;
  o.o3 = static_cast<int64_t>(tile % chunks3) * S::KO;
  o.active = o.o1 < g.out_extent[1];
  return o;
}

/// Load phase (all threads, once per block): the padded axis-3 taps and the x taps.
template <typename S>
NDCONV_HD void column_load_taps(const Geometry& g, const ColumnLayout& l, const float* taps,
                                float* taps_s, int tid) {
  const int k3 = g.filter_extent[3], k0 = g.filter_extent[0];
  for (int i = tid; i < l.stage; i += S::kThreads) {
    float t = 0.0f;
    if (i < l.tap_floats) {
      const int j = i - (S::KO - 1);
      if (j >= 0 && j < k3)
        t = taps[g.tap_base + j];
    } else if (i - l.x_taps < k0) {
      t = taps[g.tap_base + k3 + (i - l.x_taps)];
    }
    taps_s[i] = t;
  }
}

/// Input index along axis 3 of row s of the lane's outputs (boundary resolved; -1: a zero row,
/// also for the rows past KO + K3 - 1 that the last step rounds up to). In 32 bits: the plan
/// gives this kernel only extents below kColumnMaxExtent.
NDCONV_HD int column_row_index(const Geometry& g, const ColumnOrigin& o, int s, int rows) {
  if (s >= rows)
    return -1;
  return boundary_index_t<int>(static_cast<int>(o.o3 + g.offset[3]) + s,
                               static_cast<int>(g.in_extent[3]), g.boundary);
}

/// Staging phase of the fused form (all lanes of a warp): the raw input rows of step b (columns
/// tile_x + offset0 .. + l.columns - 1, boundary resolved) into `buffer` (B rows of l.pitch),
/// asynchronously on the GPU (tiled_commit / tiled_wait complete it).
template <typename S>
NDCONV_HD void column_stage(const Geometry& g, const ColumnLayout& l, const float* in,
                            float* buffer, const ColumnOrigin& o, int b, int lane) {
  constexpr int B = S::kRowsPerStep;
  const int rows = S::KO + g.filter_extent[3] - 1;
  const int64_t x_first = o.tile_x + g.offset[0];
  const bool x_inside = x_first >= 0 && x_first + l.columns <= g.in_extent[0];
  const float* base = in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2];
  const int64_t s0 = g.in_stride[0];
  NDCONV_UNROLL
  for (int i = 0; i < B; ++i) {
    float* dst = buffer + i * l.pitch;
    const int i3 = column_row_index(g, o, b * B + i, rows);
    if (i3 < 0) {
      for (int c = lane; c < l.columns; c += 32)
        dst[c] = 0.0f;
      continue;
    }
    const float* row = base + i3 * g.in_stride[3];
    if (x_inside) {
      const float* from = row + (x_first + lane) * s0;
      for (int c = lane; c < l.columns; c += 32, from += 32 * s0)
        tiled_copy_valid(dst + c, from);
      continue;
    }
    for (int c = lane; c < l.columns; c += 32) {
      const int ix = boundary_index_t<int>(static_cast<int>(x_first) + c,
                                           static_cast<int>(g.in_extent[0]), g.boundary);
      if (ix >= 0)
        tiled_copy_valid(dst + c, row + ix * s0);
      else
        dst[c] = 0.0f;
    }
  }
}

/// The lane's kVector inputs of one row from global memory (zeros for i3 < 0): one 128-bit load
/// when allowed, else one load per x that exists.
template <typename S>
NDCONV_HD void column_fetch(const Geometry& g, const ColumnLayout& l, const float* in,
                            const ColumnOrigin& o, int i3, float (&v)[S::kVector]) {
  NDCONV_UNROLL
  for (int x = 0; x < S::kVector; ++x)
    v[x] = 0.0f;
  if (i3 < 0)
    return;
  const float* row = in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2] + i3 * g.in_stride[3];
  if (l.vector_in && o.x0 + S::kVector <= g.in_extent[0]) {
#ifdef __CUDA_ARCH__
    const float4 f = __ldg(reinterpret_cast<const float4*>(row + o.x0));
    v[0] = f.x;
    v[1] = f.y;
    v[2] = f.z;
    v[3] = f.w;
#else
    NDCONV_UNROLL
    for (int x = 0; x < S::kVector; ++x)
      v[x] = row[o.x0 + x];
#endif
    return;
  }
  NDCONV_UNROLL
  for (int x = 0; x < S::kVector; ++x) {
    if (o.x0 + x < g.in_extent[0])
      v[x] = row[(o.x0 + x) * g.in_stride[0]];
  }
}

/// Adds step b's B input rows v to the KO accumulators (see the header: the exact tap band).
template <typename S>
NDCONV_HD void column_accumulate(float (&acc)[S::KO][S::kVector],
                                 const float (&v)[S::kRowsPerStep][S::kVector], const float* taps_s,
                                 int b, int k3) {
  constexpr int B = S::kRowsPerStep, KO = S::KO, V = S::kVector;
  float t[S::kTapWindow];  // t[m] = tap b * B - (KO - 1) + m
  tiled_read<S::kTapWindow>(t, taps_s + b * B);
  const int s0 = b * B;
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q) {
    const int lo = q - s0, hi = q - s0 + k3 - 1;  // rows i in [lo, hi] have a tap for q
    if (hi < 0 || lo > B - 1)
      continue;
    if (lo <= 0 && hi >= B - 1) {
      NDCONV_UNROLL
      for (int i = 0; i < B; ++i) {
        NDCONV_UNROLL
        for (int x = 0; x < V; ++x)
          acc[q][x] = fmaf(t[i - q + KO - 1], v[i][x], acc[q][x]);
      }
      continue;
    }
    NDCONV_UNROLL
    for (int i = 0; i < B; ++i) {
      if (i < lo || i > hi)
        continue;
      NDCONV_UNROLL
      for (int x = 0; x < V; ++x)
        acc[q][x] = fmaf(t[i - q + KO - 1], v[i][x], acc[q][x]);
    }
  }
}

/// The fused form's x filter of the B staged rows of a step at the lane's kVector outputs: v[i][x]
/// = sum_j0 taps[j0] * row_i[x + j0], K0 = full * 4 + kLastX taps. Per block of 4 taps, one
/// 128-bit tap read serves all B rows, and each row reads its two 4-float window halves
/// (tiled_tap_block multiplies only the kTaps taps that exist). Rows advance together so that only
/// B accumulators, one tap block and one window are live (tiled_row per row kept each row's
/// window and the compiler spilled at 128 registers).
template <typename S, int kLastX>
NDCONV_HD void column_filter_x(float (&v)[S::kRowsPerStep][S::kVector], const float* rows,
                               int pitch, const float* taps, int full) {
  constexpr int B = S::kRowsPerStep, V = S::kVector;
  NDCONV_UNROLL
  for (int i = 0; i < B; ++i) {
    NDCONV_UNROLL
    for (int x = 0; x < V; ++x)
      v[i][x] = 0.0f;
  }
  float t[V], lo[V], hi[V];
  // Not unrolled: an unrolled copy would load the next blocks' windows early, and registers, not
  // latency, limit this kernel (each iteration already has 2 * B + 1 independent loads).
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int jb = 0; jb < full * V; jb += V) {
    tiled_read<V>(t, taps + jb);
    NDCONV_UNROLL
    for (int i = 0; i < B; ++i) {
      tiled_read<V>(lo, rows + i * pitch + jb);
      tiled_read<V>(hi, rows + i * pitch + jb + V);
      tiled_tap_block<V, V>(v[i], lo, hi, t);
    }
  }
  const int jb = full * V;
  tiled_read<V>(t, taps + jb);
  NDCONV_UNROLL
  for (int i = 0; i < B; ++i) {
    tiled_read<V>(lo, rows + i * pitch + jb);
    tiled_read<V>(hi, rows + i * pitch + jb + V);
    tiled_tap_block<V, kLastX>(v[i], lo, hi, t);
  }
}

/// One step (all lanes of a warp): the B input rows of step b, either fetched (kLastX = 0) or
/// x-filtered from `staged` (the fused form, kLastX = taps in the last x block, 1..4), added to
/// the lane's accumulators.
template <typename S, int kLastX>
NDCONV_HD void column_step(const Geometry& g, const ColumnLayout& l, const float* in,
                           const float* shared, const float* staged, const ColumnOrigin& o, int b,
                           int lane, float (&acc)[S::KO][S::kVector]) {
  constexpr int B = S::kRowsPerStep;
  const int k3 = g.filter_extent[3];
  float v[B][S::kVector];
  if constexpr (kLastX == 0) {
    const int rows = S::KO + k3 - 1;
    NDCONV_UNROLL
    for (int i = 0; i < B; ++i)
      column_fetch<S>(g, l, in, o, column_row_index(g, o, b * B + i, rows), v[i]);
  } else {
    (void)in;
    column_filter_x<S, kLastX>(v, staged + lane * S::kVector, l.pitch, shared + l.x_taps,
                               (g.filter_extent[0] - 1) / 4);
  }
  column_accumulate<S>(acc, v, shared, b, k3);
}

/// Stores the lane's outputs that exist: 128-bit where allowed, else one by one.
template <typename S>
NDCONV_HD void column_store(const Geometry& g, const ColumnLayout& l, float* out,
                            const ColumnOrigin& o, const float (&acc)[S::KO][S::kVector]) {
  float* base = out + o.o1 * g.out_stride[1] + o.o2 * g.out_stride[2];
  const bool vector = l.vector_out && o.x0 + S::kVector <= g.out_extent[0];
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    if (o.o3 + q >= g.out_extent[3])
      break;
    float* row = base + (o.o3 + q) * g.out_stride[3];
    if (vector) {
      tiled_write<S::kVector>(row + o.x0, acc[q]);
      continue;
    }
    NDCONV_UNROLL
    for (int x = 0; x < S::kVector; ++x) {
      if (o.x0 + x < g.out_extent[0])
        row[(o.x0 + x) * g.out_stride[0]] = acc[q][x];
    }
  }
}

}  // namespace ndconv::kernels
