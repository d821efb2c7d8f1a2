// The contract between the engine's front end and its backends. The front end has already
// flipped the filter for convolution and turned the output region into an offset, so a backend
// only ever computes a correlation:
//
//   out[o] = sum_j taps[j] * in_b[o + offset + j]        (per axis, o and j non-negative)
//
// where in_b is the input extended beyond its edges by `boundary`. For `same`, offset = -c with
// c the anchor; for `valid`, offset = 0. A backend may receive a sub-volume (a slab) through the
// same struct: only the views and the offset change.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/boundary_index.h"
#include "ndconv/types.h"

namespace ndconv::detail {

// The kernels read a Boundary as its BoundaryCode (static_cast<int>).
static_assert(static_cast<int>(Boundary::Zero) == kZero &&
                  static_cast<int>(Boundary::Replicate) == kReplicate &&
                  static_cast<int>(Boundary::Mirror) == kMirror &&
                  static_cast<int>(Boundary::Periodic) == kPeriodic &&
                  static_cast<int>(Boundary::Reflect) == kReflect &&
                  static_cast<int>(Boundary::Constant) == kConstant && kBoundaryCount == 6,
              "BoundaryCode must list the Boundary values");

struct CorrelationProblem {
  ConstVolumeView input;
  VolumeView output;
  Index filter_extent{1, 1, 1, 1};
  const float* taps = nullptr;  ///< correlation order, contiguous, x fastest
  Index offset{0, 0, 0, 0};
  Boundary boundary = Boundary::Zero;
};

struct SeparableProblem {
  ConstVolumeView input;
  VolumeView output;
  std::array<std::vector<float>, kMaxDims> taps;  ///< correlation order; empty = axis skipped
  Index offset{0, 0, 0, 0};                       ///< per axis, 0 for skipped axes
  Boundary boundary = Boundary::Zero;
};

/// The voxels of a volume of `dims` axes with `extent` (axes from dims on are not counted).
inline int64_t voxels_of(int dims, const Index& extent) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

/// Maps an index that may lie outside [0, n) to the input index the boundary condition reads,
/// or -1 for the outside value (zero, or Options::boundary_value). Shared by the CPU backend, the
/// reference checks and (as a __host__
/// __device__ twin in kernels/) the GPU.
inline int64_t boundary_index(int64_t i, int64_t n, Boundary b) {
  if (i >= 0 && i < n)
    return i;
  switch (b) {
    case Boundary::Zero:
    case Boundary::Constant:
      return -1;
    case Boundary::Replicate:
      return i < 0 ? 0 : n - 1;
    case Boundary::Periodic: {
      int64_t r = i % n;
      return r < 0 ? r + n : r;
    }
    case Boundary::Mirror: {
      if (n == 1)
        return 0;
      const int64_t period = 2 * (n - 1);
      int64_t r = i % period;
      if (r < 0)
        r += period;
      return r < n ? r : period - r;
    }
    case Boundary::Reflect: {
      const int64_t period = 2 * n;
      int64_t r = i % period;
      if (r < 0)
        r += period;
      return r < n ? r : period - 1 - r;
    }
  }
  return -1;
}

/// Rows [first, first + rows) along a volume's last axis.
struct RowRange {
  int64_t first = 0;
  int64_t rows = 0;
};

/// The rows [first, first + rows) of an input of `n` rows along the last axis that output rows
/// [out_first, out_first + out_rows) read, as a range inside the input whose own extent resolves
/// `boundary` to the same rows as the whole input does for every read: the smallest range that
/// holds every row read where that holds (mirror and replicate near an edge, zero), else the
/// whole input (periodic reaching across, mirror reflecting past the range).
inline RowRange input_rows_read(int64_t out_first, int64_t out_rows, int64_t offset_last,
                                int64_t halo, int64_t n, Boundary boundary) {
  const int64_t lo = out_first + offset_last, hi = out_first + out_rows - 1 + offset_last + halo;
  int64_t first = n, last = -1;
  for (int64_t i = lo; i <= hi; ++i) {
    const int64_t row = boundary_index(i, n, boundary);
    if (row >= 0) {
      first = std::min(first, row);
      last = std::max(last, row);
    }
  }
  if (last < 0)  // only zero rows: any row will do
    return {std::clamp<int64_t>(lo, 0, n - 1), 1};
  const int64_t rows = last - first + 1;
  for (int64_t i = lo; i <= hi; ++i) {
    const int64_t whole = boundary_index(i, n, boundary);
    const int64_t local = boundary_index(i - first, rows, boundary);
    if ((whole < 0) != (local < 0) || (whole >= 0 && local + first != whole))
      return {0, n};
  }
  return {first, rows};
}

}  // namespace ndconv::detail
