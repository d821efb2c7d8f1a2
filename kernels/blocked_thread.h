// The register-blocked correlation (Broxvall et al., IEEE TMI 2011): each thread computes KO
// consecutive outputs along canonical axis 3 (the last axis of a dense filter, or the filtered
// axis of a separable pass) and loads the K+KO-1 input rows they share once, using every loaded
// value for all KO accumulators. KO is a template parameter so that the accumulators and the input
// window are indexed only by unrolled compile-time indices and stay in registers whatever the
// run-time filter extents.
//
// Loop order (tap-outer, sliding window): for each tap j of a tap row, one warp-uniform tap read
// feeds KO FMAs, acc[q] += t[j] * in[q + j]. The inputs in[q + j] come from a window of 2*KO
// registers that advances KO taps at a time (KO new loads per KO taps), so the compile-time
// indices q + jj cover it without any run-time register indexing. Per tap row and thread: K tap
// reads, K+KO-1 input loads and exactly K*KO FMAs: no multiplication by padding, so an Inf or NaN
// in the input only reaches the outputs whose footprint holds it. Only the last block of a tap
// row, when K is not a multiple of KO, checks (warp-uniformly) which taps exist.
//
// Arithmetic (blocked_outputs) is kept apart from the schedule (blocked_block_thread: which
// outputs a thread of a block owns). Warps whose whole footprint lies inside the input and whose
// outputs all exist take the interior path (no boundary mapping, no output checks); the decision
// is warp-uniform (a warp is 32 consecutive x of one row), so warps never diverge on it, and only
// the warps at the volume's faces take the border path.
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

/// One block of KO taps starting at tap jb of a tap row: acc[q] += t[jb + jj] * w[q + jj].
/// kPartial: the row ends inside the block, so taps jb + jj >= k are skipped (warp-uniform).
template <int KO, bool kPartial, typename Taps>
NDCONV_HD void blocked_tap_block(float (&acc)[KO], const float (&w)[2 * KO], const Taps& taps,
                                 int tap_index, int taps_left) {
  NDCONV_UNROLL
  for (int jj = 0; jj < KO; ++jj) {
    if (kPartial && jj >= taps_left)
      break;
    const float t = taps(tap_index + jj);
    NDCONV_UNROLL
    for (int q = 0; q < KO; ++q)
      acc[q] = fmaf(t, w[q + jj], acc[q]);
  }
}

/// Every tap row of a filter (blocked_accumulate's default row set).
struct AllTapRows {
  NDCONV_HD bool operator()(int /*j1*/, int /*j0*/) const { return true; }
};

/// Computes outputs (o0, o1, o2, o3 + q), q < KO, into acc. `taps(i)` returns tap i of the tap
/// layout (constant, global or host memory; see Geometry). kInterior: the footprint lies inside
/// the input (no boundary mapping). Only the tap rows (j1, j0) for which `use_row` holds count
/// (all of them by default; the border kernel's correction takes those that leave the volume).
template <int KO, bool kInterior, typename Taps, typename Rows = AllTapRows>
NDCONV_HD void blocked_accumulate(const Geometry& g, const float* in, const Taps& taps, int64_t o0,
                                  int64_t o1, int64_t o2, int64_t o3, float (&acc)[KO],
                                  const Rows& use_row = Rows{}) {
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q)
    acc[q] = 0.0f;

  const int k3 = g.filter_extent[3];
  const int rows = k3 + KO - 1;  // input rows along axis 3 that the KO outputs read
  const int64_t start3 = o3 + g.offset[3];
  const int64_t s3 = g.in_stride[3];
  int tap_row = g.tap_base;  // tap j of the current tap row sits at tap_row + j
  for (int j2 = 0; j2 < g.filter_extent[2]; ++j2) {
    const int64_t i2 = kInterior
                           ? o2 + g.offset[2] + j2
                           : boundary_index_hd(o2 + g.offset[2] + j2, g.in_extent[2], g.boundary);
    for (int j1 = 0; j1 < g.filter_extent[1]; ++j1) {
      const int64_t i1 = kInterior
                             ? o1 + g.offset[1] + j1
                             : boundary_index_hd(o1 + g.offset[1] + j1, g.in_extent[1], g.boundary);
      for (int j0 = 0; j0 < g.filter_extent[0]; ++j0, tap_row += g.tap_pitch) {
        if (!use_row(j1, j0))
          continue;
        const int64_t i0 =
            kInterior ? o0 + g.offset[0] + j0
                      : boundary_index_hd(o0 + g.offset[0] + j0, g.in_extent[0], g.boundary);
        if (!kInterior && (i0 < 0 || i1 < 0 || i2 < 0))
          continue;  // a zero-boundary row contributes nothing
        const float* line = in + i0 * g.in_stride[0] + i1 * g.in_stride[1] + i2 * g.in_stride[2];
        // Input row r (r < rows) of this thread along axis 3.
        auto load = [&](int r) -> float {
          if (kInterior)
            return line[(start3 + r) * s3];
          const int64_t i3 = boundary_index_hd(start3 + r, g.in_extent[3], g.boundary);
          return i3 < 0 ? 0.0f : line[i3 * s3];
        };
        float w[2 * KO];  // w[m] = input row jb + m
        NDCONV_UNROLL
        for (int m = 0; m < KO; ++m)
          w[m] = m < rows ? load(m) : 0.0f;
        for (int jb = 0; jb < k3; jb += KO) {
          NDCONV_UNROLL
          for (int m = 0; m < KO; ++m)
            w[KO + m] = jb + KO + m < rows ? load(jb + KO + m) : 0.0f;
          if (jb + KO <= k3)
            blocked_tap_block<KO, false>(acc, w, taps, tap_row + jb, KO);
          else
            blocked_tap_block<KO, true>(acc, w, taps, tap_row + jb, k3 - jb);
          NDCONV_UNROLL
          for (int m = 0; m < KO; ++m)
            w[m] = w[KO + m];
        }
      }
    }
  }
}

/// Stores outputs (o0, o1, o2, o3 + q), q < KO, from acc (kAdd: adds acc to them): all of them
/// when kInterior, else those that exist along axis 3.
template <int KO, bool kInterior, bool kAdd = false>
NDCONV_HD void blocked_store(const Geometry& g, float* out, int64_t o0, int64_t o1, int64_t o2,
                             int64_t o3, const float (&acc)[KO]) {
  float* dst = out + o0 * g.out_stride[0] + o1 * g.out_stride[1] + o2 * g.out_stride[2] +
               o3 * g.out_stride[3];
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q) {
    if (kInterior || o3 + q < g.out_extent[3])
      dst[q * g.out_stride[3]] = kAdd ? dst[q * g.out_stride[3]] + acc[q] : acc[q];
  }
}

/// Computes outputs (o0, o1, o2, o3 + q), q < KO, and stores those that exist.
template <int KO, bool kInterior, typename Taps>
NDCONV_HD void blocked_outputs(const Geometry& g, const float* in, float* out, const Taps& taps,
                               int64_t o0, int64_t o1, int64_t o2, int64_t o3) {
  float acc[KO];
  blocked_accumulate<KO, kInterior>(g, in, taps, o0, o1, o2, o3, acc);
  blocked_store<KO, kInterior>(g, out, o0, o1, o2, o3, acc);
}

/// Threads of a warp; the blocked kernel's block_dim[0] is a multiple of it.
inline constexpr int kWarp = 32;

/// Whether every output of a group of threads exists and its whole input footprint lies inside
/// the input. `first` and `count` give the group's outputs along each canonical axis.
NDCONV_HD bool block_is_interior(const Geometry& g, const int64_t first[kAxes],
                                 const int64_t count[kAxes]) {
  NDCONV_UNROLL
  for (int a = 0; a < kAxes; ++a) {
    if (first[a] + count[a] > g.out_extent[a])
      return false;
    const int64_t lo = first[a] + g.offset[a];
    const int64_t hi = first[a] + count[a] - 1 + g.offset[a] + g.filter_extent[a] - 1;
    if (lo < 0 || hi >= g.in_extent[a])
      return false;
  }
  return true;
}

/// Launch coordinates of one thread, as plain integers (blockIdx, blockDim, threadIdx, gridDim).
struct ThreadCoord {
  int64_t block[3];
  int64_t block_dim[3];
  int64_t thread[3];
  int64_t grid_dim[3];
};

/// Chunks of KO outputs along axis 3.
NDCONV_HD int64_t blocked_chunks(const Geometry& g, int ko) {
  return (g.out_extent[3] + ko - 1) / ko;
}

/// The schedule: thread (tx, ty) of block (bx, by, bz) owns x = bx*bdx + tx, axis-1 index
/// by*bdy + ty, and the chunk bz of (axis 2 index, KO outputs along axis 3). Grid y and z are
/// capped by the hardware, so the thread loops over them with the grid's stride.
template <int KO, typename Taps>
NDCONV_HD void blocked_block_thread(const Geometry& g, const float* in, float* out,
                                    const Taps& taps, const ThreadCoord& c) {
  const int64_t chunks3 = blocked_chunks(g, KO);
  const int64_t y_blocks = (g.out_extent[1] + c.block_dim[1] - 1) / c.block_dim[1];
  const int64_t z_blocks = g.out_extent[2] * chunks3;
  const int64_t o0 = c.block[0] * c.block_dim[0] + c.thread[0];
  for (int64_t by = c.block[1]; by < y_blocks; by += c.grid_dim[1]) {
    const int64_t o1 = by * c.block_dim[1] + c.thread[1];
    for (int64_t bz = c.block[2]; bz < z_blocks; bz += c.grid_dim[2]) {
      const int64_t o2 = bz / chunks3;
      const int64_t o3 = (bz % chunks3) * KO;
      // The warp's outputs: 32 consecutive x (block_dim[0] is a multiple of 32), one of axis 1.
      const int64_t first[kAxes] = {o0 - c.thread[0] % kWarp, o1, o2, o3};
      const int64_t count[kAxes] = {kWarp, 1, 1, KO};
      if (block_is_interior(g, first, count)) {
        blocked_outputs<KO, true>(g, in, out, taps, o0, o1, o2, o3);
      } else if (o0 < g.out_extent[0] && o1 < g.out_extent[1]) {
        blocked_outputs<KO, false>(g, in, out, taps, o0, o1, o2, o3);
      }
    }
  }
}

}  // namespace ndconv::kernels
