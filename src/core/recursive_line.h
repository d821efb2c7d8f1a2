// The recursive Gaussian along one line, compiled for the GPU and for the host (NDCONV_HD): the
// CPU backend (src/cpu/recursive_gaussian.cpp) runs this very code per line, the GPU kernel
// (recursive_kernel.cuh) one line per thread. The line is extended by the boundary over `margin`
// voxels on both sides (`outside` where the boundary reads no voxel: the constant boundary's
// value, so that each axis's pass pads its own input with it, as scipy.ndimage does); the causal
// recursion starts in the steady state of the first extended value, the anti-causal one in that of
// the last causal value.
#pragma once

#include <cstdint>

#include "core/boundary_index.h"
#include "core/host_device.h"

namespace ndconv::recursive {

/// y[n] = B x[n] + a1 y[n-1] + a2 y[n-2] + a3 y[n-3], and the same backwards.
struct Coefficients {
  double B = 0, a1 = 0, a2 = 0, a3 = 0;
};

/// `load(i)`: the input at line index i in [0, n); `scratch(i)`: storage for n + 2 margin values
/// (float or double); `store(i, v)`: the output at line index i.
template <typename Load, typename Scratch, typename Store>
NDCONV_HD void filter_line(const Coefficients& c, int64_t n, int64_t margin, int boundary,
                           double outside, Load load, Scratch scratch, Store store) {
  const int64_t padded = n + 2 * margin;
  auto x = [&](int64_t i) {
    const int64_t s = detail::boundary_index_hd(i - margin, n, boundary);
    return s < 0 ? outside : static_cast<double>(load(s));
  };
  double y1 = x(0), y2 = y1, y3 = y1;
  for (int64_t i = 0; i < padded; ++i) {
    const double y = c.B * x(i) + c.a1 * y1 + c.a2 * y2 + c.a3 * y3;
    scratch(i) = y;
    y3 = y2;
    y2 = y1;
    y1 = y;
  }
  y1 = y2 = y3 = scratch(padded - 1);
  for (int64_t i = padded - 1; i >= 0; --i) {
    const double y = c.B * scratch(i) + c.a1 * y1 + c.a2 * y2 + c.a3 * y3;
    if (i >= margin && i < margin + n)
      store(i - margin, y);
    y3 = y2;
    y2 = y1;
    y1 = y;
  }
}

}  // namespace ndconv::recursive
