// The FFT path's per-element index maps (fft_policy.h explains the method), NDCONV_HD so that the
// CI tests run the very functions the kernels run: where an element of the in-place transform
// buffer reads the input from (the boundary-resolved box, zero padded to the transform's extents),
// where an output reads the buffer, and the spectrum product.
#pragma once

#include <cstdint>

#include "core/boundary_index.h"
#include "core/host_device.h"

namespace ndconv::cuda_backend {

/// A problem as the FFT kernels see it: axes 0..2 (x fastest; 2D has extent 1 on axis 2).
struct FftBox {
  int64_t in_extent[3] = {1, 1, 1};
  int64_t in_stride[3] = {0, 0, 0};   ///< elements
  int64_t out_extent[3] = {1, 1, 1};  ///< m: the outputs
  int64_t out_stride[3] = {0, 0, 0};
  int64_t offset[3] = {0, 0, 0};     ///< the problem's offset: box element p reads in_b[offset + p]
  int64_t box[3] = {1, 1, 1};        ///< m + k - 1
  int64_t filter[3] = {1, 1, 1};     ///< k
  int64_t transform[3] = {1, 1, 1};  ///< N
  int64_t row_pitch = 2;             ///< doubles per buffer row: 2 (N0 / 2 + 1)
  int boundary = 0;                  ///< BoundaryCode
};

/// Doubles in the in-place buffer (row_pitch N1 N2).
NDCONV_HD int64_t fft_buffer_doubles(const FftBox& g) {
  return g.row_pitch * g.transform[1] * g.transform[2];
}

/// Rows of the buffer (N1 N2, each row_pitch doubles) and of the outputs (m1 m2): at most the
/// transform's points, which a plan holds in an int (fft_policy.cpp checks it), so row numbers
/// are ints and a row's coordinates cost one 32-bit division, none per element.
NDCONV_HD int fft_buffer_rows(const FftBox& g) {
  return static_cast<int>(g.transform[1] * g.transform[2]);
}
NDCONV_HD int fft_output_rows(const FftBox& g) {
  return static_cast<int>(g.out_extent[1] * g.out_extent[2]);
}

/// The box coordinates of element x of buffer row `row` (x may lie in the row's padding, >= N0);
/// the element is buffer[row * row_pitch + x].
NDCONV_HD void fft_buffer_position(const FftBox& g, int row, int64_t x, int64_t p[3]) {
  const int n1 = static_cast<int>(g.transform[1]);
  p[0] = x;
  p[1] = row % n1;
  p[2] = row / n1;
}

/// The row part of fft_source_index: the input offset of box row (p[1], p[2]), or -1 where the
/// whole row is zero (outside the box, or outside the volume under the zero boundary). The pad
/// kernel computes it once per row.
NDCONV_HD int64_t fft_source_row(const FftBox& g, const int64_t p[3]) {
  int64_t index = 0;
  for (int a = 1; a < 3; ++a) {
    if (p[a] >= g.box[a])
      return -1;
    const int64_t i = detail::boundary_index_hd(g.offset[a] + p[a], g.in_extent[a], g.boundary);
    if (i < 0)
      return -1;
    index += i * g.in_stride[a];
  }
  return index;
}

/// Element x of a box row whose fft_source_row is `row` (>= 0): its input element, or -1 (zero).
NDCONV_HD int64_t fft_source_in_row(const FftBox& g, int64_t row, int64_t x) {
  if (x >= g.box[0])
    return -1;
  const int64_t i = detail::boundary_index_hd(g.offset[0] + x, g.in_extent[0], g.boundary);
  return i < 0 ? -1 : row + i * g.in_stride[0];
}

/// The input element that box position p reads, or -1 for a zero: outside the box (the transform's
/// zero padding) or outside the volume under the zero boundary.
NDCONV_HD int64_t fft_source_index(const FftBox& g, const int64_t p[3]) {
  const int64_t row = fft_source_row(g, p);
  return row < 0 ? -1 : fft_source_in_row(g, row, p[0]);
}

/// The tap that buffer element p holds in the filter's padded copy, or -1 (zero).
NDCONV_HD int64_t fft_tap_index(const FftBox& g, const int64_t p[3]) {
  if (p[0] >= g.filter[0] || p[1] >= g.filter[1] || p[2] >= g.filter[2])
    return -1;
  return (p[2] * g.filter[1] + p[1]) * g.filter[0] + p[0];
}

/// The buffer element that output o (per axis, o < m) reads after the inverse transform.
NDCONV_HD int64_t fft_output_source(const FftBox& g, const int64_t o[3]) {
  return (o[2] * g.transform[1] + o[1]) * g.row_pitch + o[0];
}

/// The coordinates of output x of output row `row`.
NDCONV_HD void fft_output_position(const FftBox& g, int row, int64_t x, int64_t o[3]) {
  const int m1 = static_cast<int>(g.out_extent[1]);
  o[0] = x;
  o[1] = row % m1;
  o[2] = row / m1;
}

/// The correlation's spectrum: a conj(w) scale (scale = 1 / N, cuFFT's transforms are unscaled).
NDCONV_HD void fft_correlate_spectrum(double& re, double& im, double w_re, double w_im,
                                      double scale) {
  const double r = (re * w_re + im * w_im) * scale;
  const double i = (im * w_re - re * w_im) * scale;
  re = r;
  im = i;
}

}  // namespace ndconv::cuda_backend
