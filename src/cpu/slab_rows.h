// What the dense and the filter-bank drivers (dense.cpp, bank.cpp) share: the slabs along the
// last axis that bound the boundary-padded copy, padding one slab, the flat list of tap rows
// of one work item (m1, m2, block along the last axis) and the weight table in that order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/padding.h"
#include "core/parallel_for.h"
#include "ndconv/types.h"

namespace ndconv::cpu {

/// Blocks of `factor` outputs along the last axis, grouped into slabs whose padded copy stays
/// under `pad_limit_bytes` (cpu_backend::Tuning); each slab pads its own rows plus the k3 - 1 rows
/// of halo it shares with the next.
struct SlabPlan {
  int64_t blocks = 0;       ///< blocks along the last axis
  int64_t slab_blocks = 0;  ///< blocks per slab
  int64_t slabs = 0;
};

/// Outputs along the last axis whose padded rows, with the k3 - 1 halo rows, fit in
/// `pad_limit_bytes` (at least 1).
inline int64_t outputs_in_pad_limit(const Index& n_out, const Index& k, int64_t row_length,
                                    int64_t pad_limit_bytes) {
  const int64_t slab_row_bytes =
      (n_out[1] + k[1] - 1) * (n_out[2] + k[2] - 1) * row_length * int64_t{sizeof(float)};
  return std::max<int64_t>(1, pad_limit_bytes / slab_row_bytes - (k[3] - 1));
}

inline SlabPlan plan_slabs(const Index& n_out, const Index& k, int64_t row_length, int64_t factor,
                           int64_t pad_limit_bytes) {
  SlabPlan plan;
  plan.blocks = (n_out[3] + factor - 1) / factor;
  plan.slab_blocks = std::clamp<int64_t>(
      outputs_in_pad_limit(n_out, k, row_length, pad_limit_bytes) / factor, 1, plan.blocks);
  plan.slabs = (plan.blocks + plan.slab_blocks - 1) / plan.slab_blocks;
  return plan;
}

/// The rings' work split (dense.cpp): a work item is a run of `run` consecutive m1 of one m2 and
/// one column of `column` outputs along the last axis.
struct RingSplit {
  int64_t run = 1;
  int64_t column = 1;
};

/// The distinct values of ceil(n / q) for q = 1..n, largest first: the lengths of n cut into
/// q nearly equal pieces.
inline std::vector<int64_t> distinct_shares(int64_t n) {
  std::vector<int64_t> shares;
  for (int64_t q = 1; q <= n; ++q) {
    const int64_t share = (n + q - 1) / q;
    if (shares.empty() || share != shares.back())
      shares.push_back(share);
  }
  return shares;
}

/// The split of least modelled time on `threads` threads, in multiply-add units: all the items'
/// work over the threads, plus a share `tail` of the largest item's for the last one to finish
/// (greedy scheduling's bound has the whole item: threads take items from a shared counter and
/// may run at different speeds, e.g. virtual CPUs sharing a core; small items balance, while
/// each run's start pays k1 - 1 extra row-columns of padding and each column's ends k3 - 1
/// extra positions):
///   work(item) = (c + k3 - 1) * (r * F + (r + k1 - 1) * k2 * row_length * pad)
///   cost = sum(work) / threads + tail * work(largest item) * (1 - 1 / threads)
/// for runs of r and columns of c: a column of c outputs walks c + k3 - 1 positions, each costing
/// F = k3 * k2 * k1 * k0 * nx multiply-adds per m1 (nx rounded up to whole vectors), and the
/// item pads r + k1 - 1 row-columns of k2 rows a position, each float `pad` multiply-adds
/// (Tuning::ring_pad_cost, ring_tail). Columns hold no more positions than a window of
/// `window_bytes` holds (k2 * k1 * row_length floats a position; at least one output). Ties go to
/// more items.
inline RingSplit ring_split(const Index& n_out, const Index& k, int64_t row_length, int64_t lanes,
                            int threads, int64_t window_bytes, double pad, double tail) {
  const int64_t plane = k[2] * k[1] * row_length;
  const int64_t in_window =
      std::max<int64_t>(1, window_bytes / (plane * int64_t{sizeof(float)}) - (k[3] - 1));
  const double position = static_cast<double>(k[3] * k[2] * k[1] * k[0]) *
                          static_cast<double>((n_out[0] + lanes - 1) / lanes * lanes);
  const double pad_row_column = static_cast<double>(k[2] * row_length) * pad;
  RingSplit best;
  double best_cost = -1;
  int64_t best_items = 0;
  for (const int64_t r : distinct_shares(n_out[1])) {
    for (const int64_t c : distinct_shares(n_out[3])) {
      if (c > in_window)
        continue;
      const int64_t runs = (n_out[1] + r - 1) / r, columns = (n_out[3] + c - 1) / c;
      const int64_t items = runs * n_out[2] * columns;
      const auto work = [&](double run_m1, double positions, double run_count) {
        return positions *
               (run_m1 * position + (run_m1 + run_count * double(k[1] - 1)) * pad_row_column);
      };
      // The sums over the items separate: positions of every column, m1 of every run.
      const double all =
          double(n_out[2]) *
          work(double(n_out[1]), double(n_out[3] + columns * (k[3] - 1)), double(runs));
      const double cost =
          all / threads + tail * work(double(r), double(c + k[3] - 1), 1.0) * (1.0 - 1.0 / threads);
      if (best_cost < 0 || cost < best_cost || (cost == best_cost && items > best_items)) {
        best = {r, c};
        best_cost = cost;
        best_items = items;
      }
    }
  }
  return best;  // columns of one output always fit: in_window >= 1
}

/// One slab: its first block, its block count and its share of the run's progress.
struct Slab {
  int64_t first_block = 0;
  int64_t block_count = 0;
  double base = 0;  ///< fraction of the blocks before it
  double span = 0;  ///< fraction of the blocks in it
};

inline Slab slab_at(const SlabPlan& plan, int64_t slab) {
  Slab s;
  s.first_block = slab * plan.slab_blocks;
  s.block_count = std::min(plan.slab_blocks, plan.blocks - s.first_block);
  s.base = static_cast<double>(s.first_block) / static_cast<double>(plan.blocks);
  s.span = static_cast<double>(s.block_count) / static_cast<double>(plan.blocks);
  return s;
}

/// Pads the input rows that slab `s` reads (build_padded); returns the padded extents.
inline Index pad_slab(const float* in, const Index& n_in, const Index& in_stride,
                      const Index& offset, const Index& n_out, const Index& k, int64_t factor,
                      int64_t row_length, const Slab& s, Boundary boundary, int threads,
                      const core::ProgressSpan& progress, core::PaddedVolume& padded) {
  const Index extent{0, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1,
                     s.block_count * factor + k[3] - 1};
  Index slab_offset = offset;
  slab_offset[3] += s.first_block * factor;
  core::build_padded(in, n_in, in_stride, slab_offset, extent, n_out[0] + k[0] - 1, row_length,
                     boundary, threads, progress, padded);
  return extent;
}

/// The slab loop of both drivers: pads each slab of `plan` in turn (pad_share of the slab's
/// progress), then runs `items(begin, end, worker, first_block)` over the slab's
/// n1 * n2 * block_count work items on `used_threads` threads. Returns the padded extents of the
/// last slab.
template <class SlabItems>
Index for_each_padded_slab(const SlabPlan& plan, const float* in, const Index& n_in,
                           const Index& in_stride, const Index& offset, const Index& n_out,
                           const Index& k, int64_t factor, int64_t row_length, Boundary boundary,
                           int threads, int used_threads, double pad_share,
                           const std::function<bool(double)>* progress, core::PaddedVolume& padded,
                           const SlabItems& items) {
  Index padded_extent{};
  for (int64_t slab = 0; slab < plan.slabs; ++slab) {
    const Slab sl = slab_at(plan, slab);
    padded_extent =
        pad_slab(in, n_in, in_stride, offset, n_out, k, factor, row_length, sl, boundary, threads,
                 core::ProgressSpan{progress, sl.base, sl.span * pad_share}, padded);
    core::parallel_for(
        used_threads, n_out[1] * n_out[2] * sl.block_count,
        [&](int64_t begin, int64_t end, int worker) { items(begin, end, worker, sl.first_block); },
        core::ProgressSpan{progress, sl.base + sl.span * pad_share, sl.span * (1.0 - pad_share)});
  }
  return padded_extent;
}

/// The (k3 + factor - 1) * k2 * k1 * k0 tap rows of item (m1, m2, block of the slab), each a
/// padded row shifted by its x tap, in the order of the drivers' weight tables.
inline void gather_tap_rows(const core::PaddedVolume& padded, const Index& k, int factor,
                            int64_t m1, int64_t m2, int64_t block, const float** sources) {
  int64_t t = 0;
  for (int64_t j3 = 0; j3 < k[3] + factor - 1; ++j3)
    for (int64_t j2 = 0; j2 < k[2]; ++j2)
      for (int64_t j1 = 0; j1 < k[1]; ++j1) {
        const float* row = padded.row(m1 + j1, m2 + j2, block * factor + j3);
        for (int64_t jx = 0; jx < k[0]; ++jx)
          sources[t++] = row + jx;
      }
}

/// The weight table of `filters` filters of `filter_taps` taps each, stored one after the other
/// from `taps`, in the order of gather_tap_rows: source row r = (j3', j2, j1, jx) with
/// j3' < k3 + factor - 1 feeds output b of filter f with the tap (j3' - b, j2, j1, jx) of that
/// filter; zero where j3' - b falls outside the filter.
inline std::vector<float> tap_row_weights(const float* taps, int64_t filter_taps, int filters,
                                          const Index& k, int factor) {
  const int64_t rows = (k[3] + factor - 1) * k[2] * k[1];
  std::vector<float> w(rows * k[0] * filters * factor, 0.0f);
  for (int64_t j3r = 0; j3r < k[3] + factor - 1; ++j3r)
    for (int64_t j2 = 0; j2 < k[2]; ++j2)
      for (int64_t j1 = 0; j1 < k[1]; ++j1) {
        const int64_t r = (j3r * k[2] + j2) * k[1] + j1;
        for (int b = 0; b < factor; ++b) {
          const int64_t j3 = j3r - b;
          if (j3 < 0 || j3 >= k[3])
            continue;
          for (int f = 0; f < filters; ++f) {
            const float* filter = taps + f * filter_taps;
            for (int64_t jx = 0; jx < k[0]; ++jx)
              w[((r * k[0] + jx) * filters + f) * factor + b] =
                  filter[((j3 * k[2] + j2) * k[1] + j1) * k[0] + jx];
          }
        }
      }
  return w;
}

}  // namespace ndconv::cpu
