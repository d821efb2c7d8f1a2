// The tiled dense correlation: register blocking in x and along the last axis, inputs and taps
// staged in shared memory. Each thread owns a TX x KO tile of outputs (TX consecutive x, KO
// consecutive positions along canonical axis 3, one index of axes 1 and 2), so its accumulators
// acc[KO][TX] stay in registers. A block of BX x BY threads owns BX*TX x BY x KO outputs.
//
// Why: on Hopper one warp instruction issues per clock per scheduler, so every load, address
// computation or branch takes a slot from an FFMA. The blocked kernel (blocked_thread.h) issues
// one tap read and about one global load per KO FMAs. Here, per block of TX taps along x:
//   - TX taps are read with TX/4 broadcast LDS.128 and each feeds TX FMAs (one per x output),
//   - TX inputs are read with TX/4 LDS.128 (a sliding window of 2*TX registers over the row
//     segment of TX+K0-1 inputs that the thread's TX outputs share) and each feeds up to TX FMAs,
// so a full block issues TX*TX FMAs (64 for TX = 8) for TX/2 shared loads and a few loop
// instructions. The window's two halves swap roles instead of being copied (no register moves).
//
// Loop order per block tile: for each tap index j2 along axis 2, the block stages that slice of
// the taps (contiguous in j0, padded to a multiple of TX); then for each input plane s along axis
// 3 (KO + K3 - 1 of them) the block stages the plane's (x, axis 1) tile with the boundary already
// resolved, and each thread adds, for every output q whose tap j3 = s - q exists and every tap row
// j1, the x correlation of its row segment into acc[q]. The compute phase never checks a boundary,
// so every boundary condition costs the same, and an input outside an output's footprint is never
// multiplied (the last, partial block of a tap row stops at K0): an Inf or NaN reaches only the
// outputs whose footprint holds it, as in the reference.
//
// The load phases (all threads of a block) and the compute phase are separate NDCONV_HD functions
// so that the host emulation (tests/gpu/emulate.h) runs them in the same order as the barriers do.
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

/// Compile-time shape of the tiled kernel: TX outputs along x and KO along axis 3 per thread,
/// BX x BY threads per block (BX along x, BY along axis 1). A warp is 32 consecutive thread
/// indices, x fastest.
template <int TX_, int KO_, int BX_, int BY_>
struct TiledShape {
  static constexpr int TX = TX_;
  static constexpr int KO = KO_;
  static constexpr int BX = BX_;
  static constexpr int BY = BY_;
  static constexpr int kThreads = BX * BY;
  static constexpr int kTileX = BX * TX;  ///< outputs of a block along x
  static_assert(TX % 4 == 0, "TX must allow 128-bit shared loads");
  static_assert(kThreads % 32 == 0, "a block is whole warps");
};

/// Shared-memory layout of the tiled kernel for one geometry (run-time filter extents).
struct TiledLayout {
  int k0_padded;   ///< K0 rounded up to a multiple of TX (tap rows are read TX at a time)
  int tap_floats;  ///< one j2 slice of taps: K3 * K1 * k0_padded
  int pitch;       ///< floats per tile row; = 4 mod 8 so rows of a quarter warp use other banks
  int rows;        ///< tile rows: BY + K1 - 1
  int tile_floats;
  int total_floats;
};

template <typename S>
NDCONV_HD TiledLayout tiled_layout(const Geometry& g) {
  TiledLayout l;
  const int blocks = (g.filter_extent[0] + S::TX - 1) / S::TX;
  l.k0_padded = blocks * S::TX;
  l.tap_floats = g.filter_extent[3] * g.filter_extent[1] * l.k0_padded;
  // The last window read by the last thread ends at (BX + blocks) * TX - 1.
  const int needed = (S::BX + blocks) * S::TX;
  l.pitch = (needed + 7) / 8 * 8 + 4;
  l.rows = S::BY + g.filter_extent[1] - 1;
  l.tile_floats = l.pitch * l.rows;
  l.total_floats = l.tap_floats + l.tile_floats;
  return l;
}

/// Block tiles along each launch dimension: x tiles, axis-1 tiles, (axis-2 index, KO chunk).
template <typename S>
NDCONV_HD void tiled_block_counts(const Geometry& g, int64_t counts[3]) {
  counts[0] = (g.out_extent[0] + S::kTileX - 1) / S::kTileX;
  counts[1] = (g.out_extent[1] + S::BY - 1) / S::BY;
  counts[2] = g.out_extent[2] * ((g.out_extent[3] + S::KO - 1) / S::KO);
}

/// The outputs a block tile starts at: x, axis 1, axis 2, axis 3.
struct TileOrigin {
  int64_t o[kAxes];
};

template <typename S>
NDCONV_HD TileOrigin tiled_origin(const Geometry& g, int64_t bx, int64_t by, int64_t bz) {
  const int64_t chunks3 = (g.out_extent[3] + S::KO - 1) / S::KO;
  TileOrigin t;
  t.o[0] = bx * S::kTileX;
  t.o[1] = by * S::BY;
  t.o[2] = bz / chunks3;
  t.o[3] = (bz % chunks3) * S::KO;
  return t;
}

/// Load phase 1 (all threads): the taps of slice j2, as taps_s[(j3 * K1 + j1) * k0_padded + j0],
/// zero in the padding (never multiplied). `taps` is the dense tap-row layout of Geometry.
template <typename S>
NDCONV_HD void tiled_load_taps(const Geometry& g, const TiledLayout& l, const float* taps,
                               float* taps_s, int j2, int tid) {
  const int k0 = g.filter_extent[0], k1 = g.filter_extent[1];
  for (int i = tid; i < l.tap_floats; i += S::kThreads) {
    const int j0 = i % l.k0_padded;
    const int rest = i / l.k0_padded;
    const int j1 = rest % k1;
    const int j3 = rest / k1;
    const int row = j0 + k0 * (j1 + k1 * j2);
    taps_s[i] = j0 < k0 ? taps[g.tap_base + row * g.tap_pitch + j3] : 0.0f;
  }
}

/// Load phase 2 (all threads): input plane s (axis-3 index t.o[3] + offset + s, axis-2 index
/// t.o[2] + offset + j2) of the block's tile, boundary resolved; zeros beyond the needed columns.
/// Warps read consecutive x of one tile row (coalesced).
template <typename S>
NDCONV_HD void tiled_load_plane(const Geometry& g, const TiledLayout& l, const float* in,
                                float* tile, const TileOrigin& t, int j2, int s, int tid) {
  const int64_t i2 = boundary_index_hd(t.o[2] + g.offset[2] + j2, g.in_extent[2], g.boundary);
  const int64_t i3 = boundary_index_hd(t.o[3] + g.offset[3] + s, g.in_extent[3], g.boundary);
  const int columns = S::kTileX + g.filter_extent[0] - 1;
  const int warps = S::kThreads / 32;
  const int lane = tid % 32;
  for (int r = tid / 32; r < l.rows; r += warps) {
    float* dst = tile + r * l.pitch;
    const int64_t i1 = boundary_index_hd(t.o[1] + g.offset[1] + r, g.in_extent[1], g.boundary);
    if (i1 < 0 || i2 < 0 || i3 < 0) {
      for (int c = lane; c < l.pitch; c += 32)
        dst[c] = 0.0f;
      continue;
    }
    const float* src = in + i1 * g.in_stride[1] + i2 * g.in_stride[2] + i3 * g.in_stride[3];
    const int64_t x_first = t.o[0] + g.offset[0];
    for (int c = lane; c < l.pitch; c += 32) {
      float v = 0.0f;
      if (c < columns) {
        const int64_t i0 = boundary_index_hd(x_first + c, g.in_extent[0], g.boundary);
        if (i0 >= 0)
          v = src[i0 * g.in_stride[0]];
      }
      dst[c] = v;
    }
  }
}

/// TX consecutive floats of shared memory (16-byte aligned) into registers.
template <int TX>
NDCONV_HD void tiled_read(float (&v)[TX], const float* p) {
#ifdef __CUDA_ARCH__
  NDCONV_UNROLL
  for (int m = 0; m < TX; m += 4) {
    const float4 f = *reinterpret_cast<const float4*>(p + m);
    v[m] = f.x;
    v[m + 1] = f.y;
    v[m + 2] = f.z;
    v[m + 3] = f.w;
  }
#else
  NDCONV_UNROLL
  for (int m = 0; m < TX; ++m)
    v[m] = p[m];
#endif
}

/// One block of TX taps along x: acc[x] += t[jj] * w[x + jj], where w is the window `lo`
/// followed by `hi`. kPartial: only taps jj < taps_left exist (warp-uniform).
template <int TX, bool kPartial>
NDCONV_HD void tiled_tap_block(float (&acc)[TX], const float (&lo)[TX], const float (&hi)[TX],
                               const float (&t)[TX], int taps_left) {
  NDCONV_UNROLL
  for (int jj = 0; jj < TX; ++jj) {
    if (kPartial && jj >= taps_left)
      break;
    NDCONV_UNROLL
    for (int x = 0; x < TX; ++x)
      acc[x] = fmaf(t[jj], x + jj < TX ? lo[x + jj] : hi[x + jj - TX], acc[x]);
  }
}

/// acc[x] += sum_j0 taps[j0] * row[x + j0], x < TX, for a run-time K0 (the row segment and the
/// tap row are in shared memory, 16-byte aligned, readable up to the next multiple of TX).
template <int TX>
NDCONV_HD void tiled_row(float (&acc)[TX], const float* row, const float* taps, int k0) {
  float a[TX], b[TX], t[TX];
  tiled_read<TX>(a, row);
  for (int jb = 0;;) {
    tiled_read<TX>(b, row + jb + TX);
    tiled_read<TX>(t, taps + jb);
    if (jb + TX >= k0) {
      tiled_tap_block<TX, true>(acc, a, b, t, k0 - jb);
      return;
    }
    tiled_tap_block<TX, false>(acc, a, b, t, TX);
    jb += TX;
    tiled_read<TX>(a, row + jb + TX);
    tiled_read<TX>(t, taps + jb);
    if (jb + TX >= k0) {
      tiled_tap_block<TX, true>(acc, b, a, t, k0 - jb);
      return;
    }
    tiled_tap_block<TX, false>(acc, b, a, t, TX);
    jb += TX;
  }
}

/// Compute phase for plane s: thread (tx, ty) adds the plane's contributions to its outputs.
template <typename S>
NDCONV_HD void tiled_compute_plane(const Geometry& g, const TiledLayout& l, const float* taps_s,
                                   const float* tile, float (&acc)[S::KO][S::TX], int s, int tx,
                                   int ty) {
  const int k0 = g.filter_extent[0], k1 = g.filter_extent[1], k3 = g.filter_extent[3];
  const float* row0 = tile + ty * l.pitch + tx * S::TX;
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    const int j3 = s - q;
    if (j3 < 0 || j3 >= k3)
      continue;  // warp-uniform: plane s holds no tap of output q
    const float* tap_row = taps_s + j3 * k1 * l.k0_padded;
    for (int j1 = 0; j1 < k1; ++j1)
      tiled_row<S::TX>(acc[q], row0 + j1 * l.pitch, tap_row + j1 * l.k0_padded, k0);
  }
}

/// Stores the thread's outputs that exist.
template <typename S>
NDCONV_HD void tiled_store(const Geometry& g, float* out, const TileOrigin& t,
                           const float (&acc)[S::KO][S::TX], int tx, int ty) {
  const int64_t x0 = t.o[0] + tx * S::TX;
  const int64_t o1 = t.o[1] + ty;
  if (o1 >= g.out_extent[1])
    return;
  float* base = out + o1 * g.out_stride[1] + t.o[2] * g.out_stride[2];
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    if (t.o[3] + q >= g.out_extent[3])
      break;
    float* row = base + (t.o[3] + q) * g.out_stride[3];
    NDCONV_UNROLL
    for (int x = 0; x < S::TX; ++x) {
      if (x0 + x < g.out_extent[0])
        row[(x0 + x) * g.out_stride[0]] = acc[q][x];
    }
  }
}

}  // namespace ndconv::kernels
