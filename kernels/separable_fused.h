// The fused separable kernel: the x, y and z passes of a separable filter in one launch that reads
// the input once and writes the output once (canonical axes [x, y, z, frame]; 2D images are
// [x, y, 1, 1] with one z tap, 4D volumes without a t filter run their frames independently).
//
// Why: three passes that each read and write the volume move at least 3x the memory floor, the
// issue's whole budget for the separable row; fused, the intermediate volumes stay on chip.
//
// A block owns BXo x BYo output columns of one frame and a chunk of `chunk` outputs along z. It
// walks the input planes z0 + offset .. z0 + offset + chunk + Kz - 2; per plane:
//   1. load: the (BXo + Kx - 1) x (BYo + Ky - 1) input tile into shared memory with the boundary
//      resolved (cp.async, kStages buffers: planes p + 1 .. p + kStages - 1 are in flight while
//      plane p is used, so the global latency overlaps the compute); 16-byte copies for rows that
//      lie inside the volume and start 16-byte aligned (the Gaussian's offset of -8), else 4-byte;
//   2. x pass: every tile row into a shared buffer of BXo columns, 8 outputs per thread with the
//      dense tiled kernel's sliding window (fused_row: 128-bit shared loads, taps as broadcasts);
//   3. y pass: each thread owns 4 consecutive columns (x) at one y and correlates them along the
//      buffer's rows (one 128-bit load and 4 FMAs per tap); the result goes into the thread's own
//      ring of Kz + 1 planes in shared memory (private to the thread, so no barrier guards it);
//   4. z pass: every second plane, once the ring holds the Kz + 1 planes of two outputs, the thread
//      correlates its ring along z for both (each 128-bit ring read feeds 8 FMAs: the shared-memory
//      traffic, not the issue rate, bounds this kernel) and stores its 2 x 4 outputs (128-bit
//      stores where aligned); an odd last output of a chunk goes alone.
// Two barriers per plane: after the load (plane ready, x buffer free) and after the x pass.
//
// The arithmetic (load, x pass, y/z step, store) are NDCONV_HD functions, so the host emulation
// (tests/gpu/emulate_fused.h) runs them in barrier order; the tile sizes are FusedShape's template
// parameters and the chunk along z a run-time layout field (the host sizes it to fill the GPU).
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/tiled_thread.h"  // TileOrigin, cp.async and 128-bit shared access helpers

namespace ndconv::kernels {

/// Compile-time shape of the fused kernel: BXo x BYo output columns per block, kStages input-plane
/// buffers. Threads: one per 4 columns along x (the y/z passes' unit), BXo / 4 x BYo.
template <int BXo_, int BYo_, int kStages_>
struct FusedShape {
  static constexpr int BXo = BXo_;
  static constexpr int BYo = BYo_;
  static constexpr int kStages = kStages_;
  static constexpr int kXTile = 8;    ///< x-pass outputs per thread (fused_row's window)
  static constexpr int kColumns = 4;  ///< y/z-pass columns per thread (one 128-bit access)
  static constexpr int kThreads = BXo / kColumns * BYo;
  static constexpr int kXUnitsPerRow = BXo / kXTile;
  /// Register cap 65536 / (kThreads * kMinBlocks): 128 registers at 128 threads.
  static constexpr int kMinBlocks = 512 / kThreads;
  static_assert(BXo % kXTile == 0, "x-pass units tile a row");
  static_assert(kThreads % 32 == 0, "a block is whole warps");
  static_assert(kStages >= 2, "at least one plane in flight while one is used");
};

/// Shared-memory layout and z chunk of the fused kernel for one geometry. Offsets in floats, all
/// multiples of 4 (16-byte aligned).
struct FusedLayout {
  int kx_padded;    ///< Kx rounded up to a multiple of 8 (fused_row reads taps 8 at a time)
  int tap_y;        ///< offset of the y taps
  int tap_z;        ///< offset of the z taps
  int pitch;        ///< input tile row pitch, = 4 mod 8 (a quarter warp's loads span 32 banks)
  int rows;         ///< input tile rows: BYo + Ky - 1
  int columns;      ///< input columns the x pass multiplies: BXo + Kx - 1
  int tile_floats;  ///< one input-plane buffer
  int xbuf_pitch;   ///< x-pass buffer row pitch
  int ring_stride;  ///< floats per ring plane: kThreads * 4
  int tile0;        ///< offset of input buffer 0 (buffer s at tile0 + s * tile_floats)
  int xbuf;         ///< offset of the x-pass buffer (rows x BXo)
  int ring;         ///< offset of the ring (Kz + 1 planes: two outputs' z pass at a time)
  int total_floats;
  int chunk;  ///< outputs along z per block
};

NDCONV_HD int fused_round4(int n) {
  return (n + 3) / 4 * 4;
}

template <typename S>
NDCONV_HD FusedLayout fused_layout(const Geometry& g, int chunk) {
  const int kx = g.filter_extent[0], ky = g.filter_extent[1], kz = g.filter_extent[2];
  FusedLayout l;
  const int blocks = (kx + S::kXTile - 1) / S::kXTile;
  l.kx_padded = blocks * S::kXTile;
  l.tap_y = l.kx_padded;
  l.tap_z = fused_round4(l.tap_y + ky);
  // The last x-pass unit's window ends at (units + blocks) * 8 - 1.
  const int needed = (S::kXUnitsPerRow + blocks) * S::kXTile;
  l.pitch = (needed + 7) / 8 * 8 + 4;
  l.rows = S::BYo + ky - 1;
  l.columns = S::BXo + kx - 1;
  l.tile_floats = fused_round4(l.pitch * l.rows);
  l.xbuf_pitch = S::BXo + 4;
  l.ring_stride = S::kThreads * S::kColumns;
  l.tile0 = fused_round4(l.tap_z + kz);
  l.xbuf = l.tile0 + S::kStages * l.tile_floats;
  l.ring = l.xbuf + l.rows * l.xbuf_pitch;
  l.total_floats = l.ring + (kz + 1) * l.ring_stride;
  l.chunk = chunk;
  return l;
}

/// Block tiles: x tiles, y tiles, (frame, z chunk).
template <typename S>
NDCONV_HD void fused_block_counts(const Geometry& g, const FusedLayout& l, int64_t counts[3]) {
  counts[0] = (g.out_extent[0] + S::BXo - 1) / S::BXo;
  counts[1] = (g.out_extent[1] + S::BYo - 1) / S::BYo;
  counts[2] = g.out_extent[3] * ((g.out_extent[2] + l.chunk - 1) / l.chunk);
}

/// The z chunk that fills `slots` resident blocks (SMs x blocks per SM) with one wave where the
/// volume allows, but keeps chunks of at least max(8, 2 (Kz - 1)) outputs, so that the Kz - 1
/// extra planes a chunk walks cost at most half its own planes.
template <typename S>
NDCONV_HD int fused_chunk(const Geometry& g, int64_t slots) {
  const int64_t nz = g.out_extent[2];
  const int64_t columns = ((g.out_extent[0] + S::BXo - 1) / S::BXo) *
                          ((g.out_extent[1] + S::BYo - 1) / S::BYo) * g.out_extent[3];
  const int64_t min_chunk = 2 * (g.filter_extent[2] - 1) > 8 ? 2 * (g.filter_extent[2] - 1) : 8;
  int64_t chunks = slots / columns;
  const int64_t most = (nz + min_chunk - 1) / min_chunk;
  if (chunks > most)
    chunks = most;
  if (chunks < 1)
    chunks = 1;
  return static_cast<int>((nz + chunks - 1) / chunks);
}

/// Where a block tile starts: output x, y, z and the frame.
template <typename S>
NDCONV_HD TileOrigin fused_origin(const Geometry& g, const FusedLayout& l, int64_t bx, int64_t by,
                                  int64_t bz) {
  const int64_t chunks = (g.out_extent[2] + l.chunk - 1) / l.chunk;
  TileOrigin t;
  t.o[0] = bx * S::BXo;
  t.o[1] = by * S::BYo;
  t.o[2] = (bz % chunks) * l.chunk;
  t.o[3] = bz / chunks;
  return t;
}

/// Input planes a block tile walks: its outputs along z plus Kz - 1.
NDCONV_HD int fused_planes(const Geometry& g, const FusedLayout& l, const TileOrigin& t) {
  const int64_t left = g.out_extent[2] - t.o[2];
  const int outputs = static_cast<int>(left < l.chunk ? left : l.chunk);
  return outputs + g.filter_extent[2] - 1;
}

/// Load phase 1 (all threads, once per block): x taps zero-padded to kx_padded (the padding is
/// never multiplied), then the y and z taps. `taps` holds Kx, Ky, Kz taps from g.tap_base.
template <typename S>
NDCONV_HD void fused_load_taps(const Geometry& g, const FusedLayout& l, const float* taps,
                               float* shared, int tid) {
  const int kx = g.filter_extent[0], ky = g.filter_extent[1], kz = g.filter_extent[2];
  const float* t = taps + g.tap_base;
  for (int i = tid; i < l.kx_padded; i += S::kThreads)
    shared[i] = i < kx ? t[i] : 0.0f;
  for (int i = tid; i < ky; i += S::kThreads)
    shared[l.tap_y + i] = t[kx + i];
  for (int i = tid; i < kz; i += S::kThreads)
    shared[l.tap_z + i] = t[kx + ky + i];
}

/// 16 bytes from global to shared memory (both 16-byte aligned), asynchronously (cp.async; waited
/// for by fused_wait), or zeros when `src` is null (a plain store: no source address to align).
NDCONV_HD void fused_copy16(float* dst, const float* src) {
#ifdef __CUDA_ARCH__
  if (src == nullptr) {
    *reinterpret_cast<float4*>(dst) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    return;
  }
  const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address), "l"(src));
#else
  for (int m = 0; m < 4; ++m)
    dst[m] = src != nullptr ? src[m] : 0.0f;
#endif
}

/// Waits until at most `kPending` groups of this thread's copies are in flight.
template <int kPending>
NDCONV_HD void fused_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

/// Shared-memory offset of the input buffer that holds plane p.
template <typename S>
NDCONV_HD int fused_stage(const FusedLayout& l, int p) {
  return l.tile0 + static_cast<int>(static_cast<unsigned>(p) % S::kStages) * l.tile_floats;
}

/// Load phase 2 (all threads): input plane p of the block tile t into its buffer, boundary
/// resolved (zeros where the boundary gives zero). Each lane copies quads (4 floats) of one row;
/// a row of up to 32 quads takes that many lanes and a warp covers 32 / quads rows at once (48
/// columns: 12 lanes, 2 rows per instruction instead of 1, so the per-row address work is paid
/// once per 2 rows). Lanes of a row read consecutive x (coalesced). Only the `columns` the x pass
/// multiplies are written (16-byte copies may write up to 3 more, still within the pitch).
template <typename S>
NDCONV_HD void fused_load_plane(const Geometry& g, const FusedLayout& l, const float* in,
                                float* shared, const TileOrigin& t, int p, int tid) {
  const int quads = (l.columns + 3) / 4;
  const int row_lanes = quads < 32 ? quads : 32;
  const int rows_per_warp = 32 / row_lanes;
  const int lane = tid % 32;
  const int lane_row = lane / row_lanes, lane_quad = lane % row_lanes;
  if (lane_row >= rows_per_warp)
    return;  // lanes past the last whole row of the warp
  float* tile = shared + fused_stage<S>(l, p);
  const int64_t iz = boundary_index_hd(t.o[2] + g.offset[2] + p, g.in_extent[2], g.boundary);
  const int64_t x_first = t.o[0] + g.offset[0];
  const int64_t s0 = g.in_stride[0];
  // A row inside the volume along x (with the 3 floats a last 16-byte copy may add), contiguous
  // and 16-byte aligned is copied 4 floats at a time without per-element mapping.
  const bool inside = x_first >= 0 && x_first + l.columns <= g.in_extent[0];
  const bool wide_inside = s0 == 1 && x_first >= 0 && x_first + 4 * quads <= g.in_extent[0];
  const int row_step = S::kThreads / 32 * rows_per_warp;
  for (int r = tid / 32 * rows_per_warp + lane_row; r < l.rows; r += row_step) {
    float* dst = tile + r * l.pitch;
    const int64_t iy = boundary_index_hd(t.o[1] + g.offset[1] + r, g.in_extent[1], g.boundary);
    if (iy < 0 || iz < 0) {
      for (int q = lane_quad; q < quads; q += row_lanes)
        fused_copy16(dst + 4 * q, nullptr);
      continue;
    }
    const float* src = in + iy * g.in_stride[1] + iz * g.in_stride[2] + t.o[3] * g.in_stride[3];
    if (wide_inside && reinterpret_cast<uintptr_t>(src + x_first) % 16 == 0) {
      for (int q = lane_quad; q < quads; q += row_lanes)
        fused_copy16(dst + 4 * q, src + x_first + 4 * q);
      continue;
    }
    for (int q = lane_quad; q < quads; q += row_lanes) {
      for (int c = 4 * q; c < 4 * q + 4 && c < l.columns; ++c) {
        const int64_t ix =
            inside ? x_first + c : boundary_index_hd(x_first + c, g.in_extent[0], g.boundary);
        tiled_copy(dst + c, ix >= 0 ? src + ix * s0 : nullptr, in);
      }
    }
  }
}

/// acc[x] += sum_j taps[j] * row[x + j], x < 8, for Kx = full * 8 + kLast taps: a window of 16
/// registers slides over the row segment 8 taps at a time, its halves swapping roles (no register
/// moves); per block of 8 taps 2 + 2 LDS.128 (window half, taps as a broadcast) feed 64 FMAs. Row
/// and taps are 16-byte aligned and readable up to the next multiple of 8 (the dense tiled
/// kernel's loop, for one output row and one tap row).
template <int kLast>
NDCONV_HD void fused_row(float (&acc)[8], const float* row, const float* taps, int full) {
  float a[8], b[8], t[8];
  tiled_read<8>(a, row);
  for (int jb = 0;; jb += 16, full -= 2) {
    tiled_read<8>(b, row + jb + 8);
    tiled_read<8>(t, taps + jb);
    if (full == 0) {
      tiled_tap_block<8, 0, kLast>(acc, a, b, t);
      return;
    }
    tiled_tap_block<8, 0, 8>(acc, a, b, t);
    tiled_read<8>(a, row + jb + 16);
    tiled_read<8>(t, taps + jb + 8);
    if (full == 1) {
      tiled_tap_block<8, 0, kLast>(acc, b, a, t);
      return;
    }
    tiled_tap_block<8, 0, 8>(acc, b, a, t);
  }
}

/// x pass of one tile row segment for kLast taps in the last block of 8 (1..8).
template <typename S, int kLast>
NDCONV_HD void fused_x_pass_last(const Geometry& g, const FusedLayout& l, float* shared,
                                 const float* tile, int tid) {
  const int full = (g.filter_extent[0] - 1) / S::kXTile;
  const int units = l.rows * S::kXUnitsPerRow;
  for (int u = tid; u < units; u += S::kThreads) {
    const int r = u / S::kXUnitsPerRow, x = (u % S::kXUnitsPerRow) * S::kXTile;
    float acc[S::kXTile];
    NDCONV_UNROLL
    for (int m = 0; m < S::kXTile; ++m)
      acc[m] = 0.0f;
    fused_row<kLast>(acc, tile + r * l.pitch + x, shared, full);
    tiled_write<S::kXTile>(shared + l.xbuf + r * l.xbuf_pitch + x, acc);
  }
}

/// Picks fused_x_pass_last for a run-time last-block size (warp-uniform), counting down from 8.
template <typename S, int kLast = S::kXTile>
NDCONV_HD void fused_x_pass_dispatch(int last, const Geometry& g, const FusedLayout& l,
                                     float* shared, const float* tile, int tid) {
  if constexpr (kLast > 1) {
    if (last != kLast) {
      fused_x_pass_dispatch<S, kLast - 1>(last, g, l, shared, tile, tid);
      return;
    }
  }
  fused_x_pass_last<S, kLast>(g, l, shared, tile, tid);
}

/// Compute phase 1 (all threads): the x pass of plane p, every tile row into the x buffer.
template <typename S>
NDCONV_HD void fused_x_pass(const Geometry& g, const FusedLayout& l, float* shared, int p,
                            int tid) {
  fused_x_pass_dispatch<S>(tiled_last_block_taps<S::kXTile>(g.filter_extent[0]), g, l, shared,
                           shared + fused_stage<S>(l, p), tid);
}

/// acc[m] += taps[j] * data[j * pitch + m] for j < k, m < 4 (data 16-byte aligned): one 128-bit
/// load and one broadcast tap read per 4 FMAs, unrolled by 4 taps.
NDCONV_HD void fused_column_taps(float (&acc)[4], const float* data, int pitch, const float* taps,
                                 int k) {
  int j = 0;
  for (; j + 4 <= k; j += 4) {
    NDCONV_UNROLL
    for (int jj = 0; jj < 4; ++jj) {
      float v[4];
      tiled_read<4>(v, data + (j + jj) * pitch);
      const float t = taps[j + jj];
      NDCONV_UNROLL
      for (int m = 0; m < 4; ++m)
        acc[m] = fmaf(t, v[m], acc[m]);
    }
  }
  for (; j < k; ++j) {
    float v[4];
    tiled_read<4>(v, data + j * pitch);
    const float t = taps[j];
    NDCONV_UNROLL
    for (int m = 0; m < 4; ++m)
      acc[m] = fmaf(t, v[m], acc[m]);
  }
}

/// The columns a thread owns in the y/z passes: 4 consecutive x at one y.
template <typename S>
NDCONV_HD void fused_thread_column(int tid, int& x, int& y) {
  x = (tid % (S::BXo / S::kColumns)) * S::kColumns;
  y = tid / (S::BXo / S::kColumns);
}

/// z pass of one or two outputs from the thread's ring: with `pair`, outputs z and z + 1 from the
/// Kz + 1 planes z .. z + Kz (sum0 += t[m] v_m, sum1 += t[m - 1] v_m), so each 128-bit ring read
/// feeds 8 FMAs instead of 4 (half the shared-memory traffic of one output at a time); without,
/// output z alone. Plane z sits in ring slot `slot`, the next ones follow modulo `slots`.
NDCONV_HD void fused_ring_taps(float (&sum0)[4], float (&sum1)[4], const float* ring, int stride,
                               int slots, int slot, const float* taps, int kz, bool pair) {
  float v[4];
  tiled_read<4>(v, ring + slot * stride);
  float previous = taps[0];
  NDCONV_UNROLL
  for (int c = 0; c < 4; ++c)
    sum0[c] = fmaf(previous, v[c], sum0[c]);
  for (int m = 1; m < kz; ++m) {
    if (++slot == slots)
      slot = 0;
    tiled_read<4>(v, ring + slot * stride);
    const float t = taps[m];
    NDCONV_UNROLL
    for (int c = 0; c < 4; ++c) {
      sum0[c] = fmaf(t, v[c], sum0[c]);
      if (pair)
        sum1[c] = fmaf(previous, v[c], sum1[c]);
    }
    previous = t;
  }
  if (!pair)
    return;
  if (++slot == slots)
    slot = 0;
  tiled_read<4>(v, ring + slot * stride);
  NDCONV_UNROLL
  for (int c = 0; c < 4; ++c)
    sum1[c] = fmaf(previous, v[c], sum1[c]);
}

/// Stores a thread's 4 outputs of row y at z, those that exist (one 128-bit store where aligned).
NDCONV_HD void fused_store(const Geometry& g, float* out, int64_t ox, int64_t oy, int64_t oz,
                           int64_t frame, const float (&sum)[4]) {
  float* row = out + oy * g.out_stride[1] + oz * g.out_stride[2] + frame * g.out_stride[3];
  float* first = row + ox * g.out_stride[0];
  if (g.out_stride[0] == 1 && ox + 4 <= g.out_extent[0] &&
      reinterpret_cast<uintptr_t>(first) % 16 == 0) {
    tiled_write<4>(first, sum);
    return;
  }
  NDCONV_UNROLL
  for (int m = 0; m < 4; ++m) {
    if (ox + m < g.out_extent[0])
      row[(ox + m) * g.out_stride[0]] = sum[m];
  }
}

/// Compute phase 2 (each thread on its own columns): the y pass of plane p into the thread's ring
/// slot p mod (Kz + 1); then, as soon as the ring holds the planes of two more outputs, their z
/// pass and stores (outputs q - 1 and q of the chunk once plane p = q + Kz - 1 is in, q odd), or of
/// the chunk's last output alone when their number is odd. Reads the x buffer (published by the
/// barrier after the x pass); the ring is the thread's own.
template <typename S>
NDCONV_HD void fused_yz_step(const Geometry& g, const FusedLayout& l, float* shared, float* out,
                             const TileOrigin& t, int p, int tid) {
  const int ky = g.filter_extent[1], kz = g.filter_extent[2];
  const int slots = kz + 1;
  int cx, cy;
  fused_thread_column<S>(tid, cx, cy);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  fused_column_taps(acc, shared + l.xbuf + cy * l.xbuf_pitch + cx, l.xbuf_pitch, shared + l.tap_y,
                    ky);
  float* ring = shared + l.ring + tid * S::kColumns;
  tiled_write<4>(ring + (p % slots) * l.ring_stride, acc);
  const int q = p - (kz - 1);  // the newest output whose planes are all in
  if (q < 0)
    return;
  const bool pair = q % 2 == 1;
  if (!pair && q != fused_planes(g, l, t) - kz)
    return;  // output q waits for q + 1
  const int z = pair ? q - 1 : q;
  float sum0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, sum1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  fused_ring_taps(sum0, sum1, ring, l.ring_stride, slots, z % slots, shared + l.tap_z, kz, pair);
  const int64_t oy = t.o[1] + cy;
  if (oy >= g.out_extent[1])
    return;
  fused_store(g, out, t.o[0] + cx, oy, t.o[2] + z, t.o[3], sum0);
  if (pair)
    fused_store(g, out, t.o[0] + cx, oy, t.o[2] + z + 1, t.o[3], sum1);
}

}  // namespace ndconv::kernels
