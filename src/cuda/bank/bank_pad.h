// The filter bank's padded input built on the device (bank.cu: pad_bank_input_device): the
// per-row and per-element functions of its kernel, for the GPU and for the host emulation that
// checks them against core::build_padded in CI (tests/gpu/bank_pad_emulation_test.cpp).
#pragma once

#include <cstdint>

#include "kernels/hd.h"
#include "ndconv/types.h"

namespace ndconv::cuda_bank {

/// core::build_padded's arguments (canonical axes): the input's extents and strides, the offset
/// of padded element 0 in the input, the padded rows (e1 x e2 x e3 of row_length floats, the first
/// x_count of each read from the input), the boundary as kernels::BoundaryCode.
struct BankPadGeometry {
  int64_t in_extent[4];
  int64_t in_stride[4];
  int64_t offset[4];
  int64_t e1, e2, e3;
  int64_t x_count, row_length;
  int boundary;
};

inline BankPadGeometry bank_pad_geometry(const Index& in_extent, const Index& in_stride,
                                         const Index& offset, const Index& padded_extent,
                                         int64_t x_count, int64_t row_length, Boundary boundary) {
  BankPadGeometry g{};
  for (int a = 0; a < 4; ++a) {
    g.in_extent[a] = in_extent[a];
    g.in_stride[a] = in_stride[a];
    g.offset[a] = offset[a];
  }
  g.e1 = padded_extent[1];
  g.e2 = padded_extent[2];
  g.e3 = padded_extent[3];
  g.x_count = x_count;
  g.row_length = row_length;
  g.boundary = static_cast<int>(boundary);
  return g;
}

/// The input row that padded row r (< e1 e2 e3) reads, the boundary applied along axes 1 to 3, or
/// null for a row of zeros.
NDCONV_HD const float* bank_pad_source(const BankPadGeometry& g, const float* in, int64_t r) {
  const int64_t q1 = r % g.e1, q2 = (r / g.e1) % g.e2, q3 = r / (g.e1 * g.e2);
  const int64_t i1 = kernels::boundary_index_hd(q1 + g.offset[1], g.in_extent[1], g.boundary);
  const int64_t i2 = kernels::boundary_index_hd(q2 + g.offset[2], g.in_extent[2], g.boundary);
  const int64_t i3 = kernels::boundary_index_hd(q3 + g.offset[3], g.in_extent[3], g.boundary);
  if (i1 < 0 || i2 < 0 || i3 < 0)
    return nullptr;
  return in + i1 * g.in_stride[1] + i2 * g.in_stride[2] + i3 * g.in_stride[3];
}

/// Element q0 (< row_length) of a padded row whose input row is `src` (bank_pad_source).
NDCONV_HD float bank_pad_element(const BankPadGeometry& g, const float* src, int64_t q0) {
  if (src == nullptr || q0 >= g.x_count)
    return 0.0f;
  const int64_t i0 = kernels::boundary_index_hd(q0 + g.offset[0], g.in_extent[0], g.boundary);
  return i0 < 0 ? 0.0f : src[i0 * g.in_stride[0]];
}

}  // namespace ndconv::cuda_bank
