// The row code of the kernels that correlate rows staged in shared memory along x: TX outputs
// per thread from a sliding window of 2 * TX registers, TX taps per block read as broadcasts
// (tiled_row). Shared by the tiled kernel (src/cuda/tiled/tiled_thread.h, KO tap planes per
// window) and the column kernel's fused x pass (src/cuda/separable/column_thread.h, one output
// row).
#pragma once

#include "kernels/hd.h"

namespace ndconv::kernels {

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

/// One block of taps kFirst <= jj < kTaps <= TX along x: acc[x] += t[jj] * w[x + jj], where w is
/// the window `lo` followed by `hi`. kFirst and kTaps are compile-time counts, so neither the lead
/// taps of a tap row's first block nor the end of its last, partial block costs a branch.
template <int TX, int kFirst, int kTaps>
NDCONV_HD void tiled_tap_block(float (&acc)[TX], const float (&lo)[TX], const float (&hi)[TX],
                               const float (&t)[TX]) {
  NDCONV_UNROLL
  for (int jj = kFirst; jj < kTaps; ++jj) {
    NDCONV_UNROLL
    for (int x = 0; x < TX; ++x)
      acc[x] = fmaf(t[jj], x + jj < TX ? lo[x + jj] : hi[x + jj - TX], acc[x]);
  }
}

/// One block of kTaps taps for every output q of the thread whose tap plane exists in this input
/// plane (q_first <= q <= q_last, warp-uniform): acc[q][x] += t_q[jj] * w[x + jj], where w is the
/// window `lo` followed by `hi` (shared by all q) and t_q starts at taps - q * TX (tiled_load_taps:
/// a compile-time offset, so the loads need no address arithmetic). With one output per thread
/// along axis 3 (2D images, separable x passes) every plane holds its tap plane, so the branch
/// compiles away. For KO > 1 a second, branch-free copy of the row code for the planes that hold
/// every output's taps costs more (code size, register pressure) than the branch, so it stays.
template <typename S, int kFirst, int kTaps>
NDCONV_HD void tiled_tap_block_all_q(float (&acc)[S::KO][S::TX], const float (&lo)[S::TX],
                                     const float (&hi)[S::TX], const float* taps, int q_first,
                                     int q_last) {
  constexpr bool kAllQ = S::KO == 1;
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    if (!kAllQ && (q < q_first || q > q_last))
      continue;
    float t[S::TX];
    tiled_read<S::TX>(t, taps - q * S::TX);
    tiled_tap_block<S::TX, kFirst, kTaps>(acc[q], lo, hi, t);
  }
}

/// Tap blocks jb / TX, jb / TX + 1, ... of a row segment (tiled_row), `full` of them full and the
/// last with kLast taps; `taps` points at block jb / TX's taps for KO > 1 (the next block's lie
/// block_floats further) and at the row's first block for KO 1 (contiguous: block jb / TX at
/// taps + jb, the form the separable passes were tuned with); `lo` holds the window's lower half
/// for block jb (read), `hi` is read here. The halves swap roles from block to block, so the
/// window slides without register moves.
template <typename S, int kLast>
NDCONV_HD void tiled_row_blocks(float (&acc)[S::KO][S::TX], float (&lo)[S::TX], float (&hi)[S::TX],
                                const float* row, const float* taps, int block_floats, int q_first,
                                int q_last, int jb, int full) {
  constexpr int TX = S::TX;
  constexpr bool kContiguous = S::KO == 1;
  const int step = kContiguous ? TX : block_floats;
  for (;; jb += 2 * TX, full -= 2) {
    const float* const t = kContiguous ? taps + jb : taps;
    tiled_read<TX>(hi, row + jb + TX);
    if (full == 0) {
      tiled_tap_block_all_q<S, 0, kLast>(acc, lo, hi, t, q_first, q_last);
      return;
    }
    tiled_tap_block_all_q<S, 0, TX>(acc, lo, hi, t, q_first, q_last);
    tiled_read<TX>(lo, row + jb + 2 * TX);
    if (full == 1) {
      tiled_tap_block_all_q<S, 0, kLast>(acc, hi, lo, t + step, q_first, q_last);
      return;
    }
    tiled_tap_block_all_q<S, 0, TX>(acc, hi, lo, t + step, q_first, q_last);
    if (!kContiguous)
      taps += 2 * block_floats;
  }
}

/// One input row segment against every tap row that uses it: for each output q in
/// [q_first, q_last], acc[q][x] += sum_j0 taps_q[j0] * row[x + j0], x < TX, kFirst <= j0 < K0, with
/// K0 = full * TX + kLast taps (kLast in 1..TX; kFirst < TX lead taps skipped, see
/// tiled_lead_geometry). The window is read once for all q (TX/4 LDS.128 per block of TX taps) and
/// slides in two halves that swap roles, so a full block issues KO * TX * TX FFMAs for
/// TX/4 * (1 + KO) shared loads. Row segment and tap rows are in shared memory, 16-byte aligned,
/// readable up to the next multiple of TX.
///
/// Shapes that skip lead taps (S::kLeads) take the first block outside the loop, since it alone
/// skips them. The others start the loop at block 0: the first block outside the loop slows the
/// shapes without lead taps, and the loop from block 0 plus a peeled iteration for lead taps makes
/// the KO 4 shape spill at its register cap (the compiled schedules differ).
template <typename S, int kFirst, int kLast>
NDCONV_HD void tiled_row(float (&acc)[S::KO][S::TX], const float* row, const float* taps,
                         int block_floats, int q_first, int q_last, int full) {
  constexpr int TX = S::TX;
  static_assert(kFirst == 0 || S::kLeads, "only shapes with kLeads skip lead taps");
  float a[TX], b[TX];
  tiled_read<TX>(a, row);
  if constexpr (S::kLeads) {
    tiled_read<TX>(b, row + TX);
    if (full == 0) {
      tiled_tap_block_all_q<S, kFirst, kLast>(acc, a, b, taps, q_first, q_last);
      return;
    }
    tiled_tap_block_all_q<S, kFirst, TX>(acc, a, b, taps, q_first, q_last);
    // Block 1's taps: taps + TX for KO 1 (tiled_row_blocks adds jb), else block_floats further.
    tiled_row_blocks<S, kLast>(acc, b, a, row, S::KO == 1 ? taps : taps + block_floats,
                               block_floats, q_first, q_last, TX, full - 1);
  } else {
    tiled_row_blocks<S, kLast>(acc, a, b, row, taps, block_floats, q_first, q_last, 0, full);
  }
}

/// The one-output form of tiled_row (a single accumulator row, e.g. a separable x pass): acc[x] +=
/// sum_j0 taps[j0] * row[x + j0], the taps contiguous.
template <int TX_>
struct TiledRowShape {
  static constexpr int TX = TX_;
  static constexpr int KO = 1;
  static constexpr bool kLeads = false;
};

template <int TX, int kLast>
NDCONV_HD void tiled_row(float (&acc)[TX], const float* row, const float* taps, int full) {
  float(&rows)[1][TX] = *reinterpret_cast<float(*)[1][TX]>(&acc);
  tiled_row<TiledRowShape<TX>, 0, kLast>(rows, row, taps, TX, 0, 0, full);
}

/// Taps in the last block of a tap row of K0 taps: 1..TX.
template <int TX>
NDCONV_HD int tiled_last_block_taps(int k0) {
  return k0 - (k0 - 1) / TX * TX;
}

}  // namespace ndconv::kernels
