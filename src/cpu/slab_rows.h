// What the dense and the filter-bank drivers (dense.cpp, bank.cpp) share: the slabs along the
// last axis that bound the boundary-padded copy, padding one slab, and the flat list of tap rows
// of one work item (m1, m2, block along the last axis).
#pragma once

#include <algorithm>
#include <cstdint>

#include "cpu/padding.h"
#include "ndconv/types.h"

namespace ndconv::cpu {

/// Blocks of `factor` outputs along the last axis, grouped into slabs whose padded copy stays
/// under pad_limit_bytes(); each slab pads its own rows plus the k3 - 1 rows of halo it shares
/// with the next.
struct SlabPlan {
  int64_t blocks = 0;       ///< blocks along the last axis
  int64_t slab_blocks = 0;  ///< blocks per slab
  int64_t slabs = 0;
};

inline SlabPlan plan_slabs(const Index& n_out, const Index& k, int64_t row_length, int factor) {
  SlabPlan plan;
  plan.blocks = (n_out[3] + factor - 1) / factor;
  const int64_t slab_row_bytes =
      (n_out[1] + k[1] - 1) * (n_out[2] + k[2] - 1) * row_length * int64_t{sizeof(float)};
  const int64_t rows_in_limit = pad_limit_bytes() / slab_row_bytes;
  plan.slab_blocks = std::clamp<int64_t>((rows_in_limit - (k[3] - 1)) / factor, 1, plan.blocks);
  plan.slabs = (plan.blocks + plan.slab_blocks - 1) / plan.slab_blocks;
  return plan;
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
                      const Index& offset, const Index& n_out, const Index& k, int factor,
                      int64_t row_length, const Slab& s, Boundary boundary, int threads,
                      const ProgressSpan& progress, PaddedVolume& padded) {
  const Index extent{0, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1,
                     s.block_count * factor + k[3] - 1};
  Index slab_offset = offset;
  slab_offset[3] += s.first_block * factor;
  build_padded(in, n_in, in_stride, slab_offset, extent, n_out[0] + k[0] - 1, row_length, boundary,
               threads, progress, padded);
  return extent;
}

/// The (k3 + factor - 1) * k2 * k1 * k0 tap rows of item (m1, m2, block of the slab), each a
/// padded row shifted by its x tap, in the order of the drivers' weight tables.
inline void gather_tap_rows(const PaddedVolume& padded, const Index& k, int factor, int64_t m1,
                            int64_t m2, int64_t block, const float** sources) {
  int64_t t = 0;
  for (int64_t j3 = 0; j3 < k[3] + factor - 1; ++j3)
    for (int64_t j2 = 0; j2 < k[2]; ++j2)
      for (int64_t j1 = 0; j1 < k[1]; ++j1) {
        const float* row = padded.row(m1 + j1, m2 + j2, block * factor + j3);
        for (int64_t jx = 0; jx < k[0]; ++jx)
          sources[t++] = row + jx;
      }
}

}  // namespace ndconv::cpu
