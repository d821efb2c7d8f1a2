// The GPU median's per-thread code, compiled for the GPU and for the host (NDCONV_HD), so that
// the CI machine runs the very same selection through a host loop (tests/gpu/median_emulation):
// a thread gathers the window of one output voxel (the boundary applied per axis) as
// order-preserving 32-bit keys, then selects the middle one with a quickselect. Keys make the
// comparisons integer ones and put every NaN above +Inf, as the CPU backend orders them.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/hd.h"

namespace ndconv::cuda_median {

/// Largest window (voxels) the kernel holds per thread: radius 3 in 3D (7^3).
inline constexpr int kMaxWindow = 343;

struct MedianShape {
  int64_t extent[4];
  int64_t radius[4];
  int boundary;  ///< ndconv::Boundary as int (kernels::BoundaryCode)
};

/// Float to a key whose unsigned order is the float order, NaN (any sign) above +Inf.
NDCONV_HD uint32_t median_key(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return 0xffffffffu;
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

NDCONV_HD float median_value(uint32_t key) {
  const uint32_t bits = key == 0xffffffffu    ? 0x7fc00000u
                        : (key & 0x80000000u) ? key & 0x7fffffffu
                                              : ~key;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/// The k-th smallest of keys[0, n) (reorders them): Hoare's quickselect with the middle pivot.
NDCONV_HD uint32_t select_kth(uint32_t* keys, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const uint32_t pivot = keys[(lo + hi) >> 1];
    int i = lo, j = hi;
    while (i <= j) {
      while (keys[i] < pivot)
        ++i;
      while (keys[j] > pivot)
        --j;
      if (i <= j) {
        const uint32_t t = keys[i];
        keys[i] = keys[j];
        keys[j] = t;
        ++i;
        --j;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return keys[k];
  }
  return keys[k];
}

/// The median of output voxel v (x fastest) of a contiguous volume; `keys` holds the window.
template <typename Load>
NDCONV_HD float median_of_voxel(const MedianShape& s, int64_t v, uint32_t* keys, Load load) {
  const int64_t n0 = s.extent[0], n1 = s.extent[1], n2 = s.extent[2], n3 = s.extent[3];
  const int64_t x = v % n0, y = v / n0 % n1, z = v / (n0 * n1) % n2, t = v / (n0 * n1 * n2);
  const uint32_t zero_key = median_key(0.0f);
  int count = 0;
  for (int64_t dt = -s.radius[3]; dt <= s.radius[3]; ++dt) {
    const int64_t it = kernels::boundary_index_hd(t + dt, n3, s.boundary);
    for (int64_t dz = -s.radius[2]; dz <= s.radius[2]; ++dz) {
      const int64_t iz = kernels::boundary_index_hd(z + dz, n2, s.boundary);
      for (int64_t dy = -s.radius[1]; dy <= s.radius[1]; ++dy) {
        const int64_t iy = kernels::boundary_index_hd(y + dy, n1, s.boundary);
        const bool row_inside = it >= 0 && iz >= 0 && iy >= 0;
        const int64_t row = ((it * n2 + iz) * n1 + iy) * n0;
        for (int64_t dx = -s.radius[0]; dx <= s.radius[0]; ++dx) {
          const int64_t ix = kernels::boundary_index_hd(x + dx, n0, s.boundary);
          keys[count++] = row_inside && ix >= 0 ? median_key(load(row + ix)) : zero_key;
        }
      }
    }
  }
  return median_value(select_kth(keys, count, count / 2));
}

}  // namespace ndconv::cuda_median
