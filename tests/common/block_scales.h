// The adaptive filter's normalising scale taken block by block, as ndconv.dask takes it: each
// block of a volume cut along z gives the largest magnitude over its own planes, read with the
// structure tensor's halo. Shared by the CPU and GPU tests of that scale.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "ndconv/adaptive.h"

namespace ndconv::test {

/// The largest and the smallest of the blocks' scales.
struct BlockScales {
  double largest = 0;
  double smallest = 1e300;
};

/// The scales of the blocks [z0, z1) of `cuts`, each read with `halo` planes on either side that
/// the volume has (the whole volume when `whole_volume`: a periodic boundary's halo wraps).
inline BlockScales block_scales(const ConstVolumeView& in,
                                std::initializer_list<std::pair<int64_t, int64_t>> cuts,
                                int64_t halo, bool whole_volume, const Options& options) {
  BlockScales s;
  const int64_t nz = in.extent[2];
  for (const auto& [z0, z1] : cuts) {
    const int64_t lo = whole_volume ? 0 : std::max<int64_t>(0, z0 - halo);
    const int64_t hi = whole_volume ? nz : std::min<int64_t>(nz, z1 + halo);
    ConstVolumeView block = in;
    block.data += lo * in.stride[2];
    block.extent[2] = hi - lo;
    AdaptiveParameters p;
    p.normalisation_start = {0, 0, z0 - lo, 0};
    p.normalisation_extent = {0, 0, z1 - z0, 0};
    const double local = adaptive_normalisation_scales(block, p, options).at(0);
    s.largest = std::max(s.largest, local);
    s.smallest = std::min(s.smallest, local);
  }
  return s;
}

}  // namespace ndconv::test
