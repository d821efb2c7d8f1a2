// The boundary condition as the code that runs on both sides reads it (NDCONV_HD): the GPU
// kernels and the host code that shares their per-line functions (core/recursive_line.h). The
// __host__ __device__ twin of detail::boundary_index (core/problem.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace ndconv::detail {

/// Boundary conditions as integers (the values of ndconv::Boundary) so that kernels need no
/// public header.
/// kConstant reads the outside value (-1, as kZero): the engine hands the backends Constant as Zero
/// and adds the value's terms itself (engine/constant_boundary.h), so no kernel sees it.
enum BoundaryCode : int {
  kZero = 0,
  kReplicate = 1,
  kMirror = 2,
  kPeriodic = 3,
  kReflect = 4,
  kConstant = 5
};

/// The input index that index i (possibly outside [0, n)) reads under boundary b, or -1 for the
/// outside value. Must agree with detail::boundary_index; the host tests compare the two
/// exhaustively. I is int64_t (boundary_index_hd) or, where a kernel knows its extents fit, int: a
/// 64-bit remainder is a subroutine call on the GPU, and a call site in a register-heavy kernel
/// made ptxas spill around it (the column kernel).
template <typename I>
NDCONV_HD I boundary_index_t(I i, I n, int b) {
  if (i >= 0 && i < n)
    return i;
  if (b == kZero || b == kConstant)
    return -1;
  if (b == kReplicate)
    return i < 0 ? 0 : n - 1;
  // Periodic, reflect and mirror first try the common case of an index within one extent of the
  // volume without a division (kernels map halo indices per element).
  if (b == kPeriodic) {
    if (i >= -n && i < 2 * n)
      return i < 0 ? i + n : i - n;
    const I r = i % n;
    return r < 0 ? r + n : r;
  }
  // Reflect repeating the edge: b a | a b c d | d c, period 2n.
  if (b == kReflect) {
    if (i >= -n && i < 2 * n)
      return i < 0 ? -1 - i : 2 * n - 1 - i;
    const I period = 2 * n;
    I r = i % period;
    if (r < 0)
      r += period;
    return r < n ? r : period - 1 - r;
  }
  // Mirror without repeating the edge: d c b | a b c d.
  if (n == 1)
    return 0;
  if (i > -n && i < 2 * n - 1)
    return i < 0 ? -i : 2 * (n - 1) - i;
  const I period = 2 * (n - 1);
  I r = i % period;
  if (r < 0)
    r += period;
  return r < n ? r : period - r;
}

NDCONV_HD int64_t boundary_index_hd(int64_t i, int64_t n, int b) {
  return boundary_index_t<int64_t>(i, n, b);
}

}  // namespace ndconv::detail
