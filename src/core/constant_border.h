// Boundary::Constant with a value c, by linearity: the backends run the problem with zeros outside
// (Boundary::Zero), and one pass over the output's border shell adds what the value contributes.
//
// Dense: the outside voxels read c, so out[o] gains c * (S - W(o)), with S the sum of the taps and
// W(o) the sum of those whose source lies inside the volume. Along each axis the inside taps of
// output o are one range [lo, hi] of tap indices; W(o) is a box sum of the taps, so the term is a
// table over the distinct ranges of each axis (few: those of the border rows and one interior).
//
// Separable: each 1D pass pads its own input with c (scipy.ndimage's semantics). A pass P_a with
// zeros outside then gains c * (s_a - p_a(i_a)), with s_a the sum of its taps and p_a(i) that of
// its taps whose source index is inside; the next passes, linear and along other axes, multiply
// that term by their own p_b. So the passes in order a1, a2, ... add
//   sum_k c (s_ak - p_ak(o_ak)) prod_{m > k} p_am(o_am),
// which Horner's scheme evaluates per voxel from two short arrays per axis.
//
// The term is 0 wherever every tap reads inside along every axis, so only the shell of outputs
// within the filter's reach of a face is touched. The layout is plain data with offsets into one
// array of doubles, so that the GPU (cuda_host.h's add_constant_border_device) reads it as it is.
#pragma once

#include <cstdint>
#include <vector>

#include "core/host_device.h"
#include "core/problem.h"
#include "ndconv/types.h"

namespace ndconv::detail {

struct ConstantBorderLayout {
  int dims = 0;
  int separable = 0;  ///< 1: Horner over the passes; 0: the dense table
  int passes = 0;
  int order[kMaxDims] = {0, 0, 0, 0};       ///< the axes of the passes, in order (separable)
  int64_t extent[kMaxDims] = {1, 1, 1, 1};  ///< output extents
  /// Output indices [full_first, full_end) along an axis where every tap reads inside.
  int64_t full_first[kMaxDims] = {0, 0, 0, 0};
  int64_t full_end[kMaxDims] = {1, 1, 1, 1};
  // Offsets into the data (doubles), per axis over its output indices.
  int64_t profile[kMaxDims] = {0, 0, 0, 0};  ///< separable: p_a(o)
  int64_t deficit[kMaxDims] = {0, 0, 0, 0};  ///< separable: c (s_a - p_a(o))
  int64_t range[kMaxDims] = {0, 0, 0, 0};    ///< dense: the range id of o (a whole number)
  int64_t pitch[kMaxDims] = {0, 0, 0, 0};    ///< dense: the table's pitch per range id
  int64_t table = 0;                         ///< dense: c (S - W) per combination of ranges
};

/// Whether output o needs no term (every tap reads inside along every axis).
NDCONV_HD bool constant_border_inside(const ConstantBorderLayout& l, const int64_t* o) {
  for (int a = 0; a < l.dims; ++a) {
    if (o[a] < l.full_first[a] || o[a] >= l.full_end[a])
      return false;
  }
  return true;
}

/// The value's term at output o.
NDCONV_HD double constant_border_term(const ConstantBorderLayout& l, const double* data,
                                      const int64_t* o) {
  if (l.separable != 0) {
    double acc = 0;
    for (int k = 0; k < l.passes; ++k) {
      const int a = l.order[k];
      acc = acc * data[l.profile[a] + o[a]] + data[l.deficit[a] + o[a]];
    }
    return acc;
  }
  int64_t at = l.table;
  for (int a = 0; a < l.dims; ++a)
    at += static_cast<int64_t>(data[l.range[a] + o[a]]) * l.pitch[a];
  return data[at];
}

/// Adds the terms of output row r (the x line at axes 1..3 index r, axis 1 fastest) to `out`
/// (strides `stride`): its border outputs, x indices [0, full_first) and [full_end, extent) where
/// the row lies inside along axes 1..3, else all of them; the n-th of those for n = first, first
/// + step, ... (the GPU's threads of a block share a row; the host takes them all).
NDCONV_HD void add_constant_border_row(const ConstantBorderLayout& l, const double* data,
                                       float* out, const int64_t* stride, int64_t r, int64_t first,
                                       int64_t step) {
  int64_t o[kMaxDims] = {l.full_first[0], r % l.extent[1], r / l.extent[1] % l.extent[2],
                         r / (l.extent[1] * l.extent[2])};
  const bool inner_row = l.full_first[0] < l.full_end[0] && constant_border_inside(l, o);
  float* row = out + o[1] * stride[1] + o[2] * stride[2] + o[3] * stride[3];
  const int64_t left = inner_row ? l.full_first[0] : l.extent[0];
  const int64_t count = inner_row ? left + l.extent[0] - l.full_end[0] : l.extent[0];
  for (int64_t n = first; n < count; n += step) {
    o[0] = n < left ? n : l.full_end[0] + (n - left);
    float& v = row[o[0] * stride[0]];
    v = static_cast<float>(static_cast<double>(v) + constant_border_term(l, data, o));
  }
}

/// The layout and its data.
struct ConstantBorder {
  ConstantBorderLayout layout;
  std::vector<double> data;
  /// Whether no output needs a term (a `valid` region, or the value 0).
  bool empty() const { return data.empty(); }
};

/// The terms of `value` for a problem the backends run with Boundary::Zero; empty when none. A
/// separable problem's passes run along `pass_order` (its first `dims` entries, SeparableFilter's).
ConstantBorder constant_border(const CorrelationProblem& p, float value);
ConstantBorder constant_border(const SeparableProblem& p, const std::array<int, kMaxDims>& order,
                               float value);

/// Adds the terms to `output` (host memory) on `threads` threads, touching only the border shell.
void add_constant_border(const ConstantBorder& border, const VolumeView& output, int threads);

}  // namespace ndconv::detail
