// The register-blocked arithmetic along canonical axis 3 (src/cuda/blocked/blocked_thread.h has
// the why): KO outputs from a sliding window of 2 * KO input registers, one tap read per KO FMAs.
// Shared by the blocked kernel (src/cuda/blocked/) and the border kernel (src/cuda/border/), which
// adds the missing terms of the tiled kernel's face shell with it.
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

}  // namespace ndconv::kernels
