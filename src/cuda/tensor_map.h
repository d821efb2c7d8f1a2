// The tensor maps of the bulk copies (kernels/bulk_copy.h): the tiled kernel's planes and the
// column kernel's raw rows: which layouts the
// copy engine can load (a pure rule, tested on the host) and the encoding of a map (tensor_map.cu,
// through the driver's cuTensorMapEncodeTiled, fetched from the runtime so that nothing links the
// driver library: the CI machine has none).
//
// A map describes the input as a four-dimensional tensor along the canonical axes of the
// geometry, and a box: for the tiled kernel l.pitch x l.rows x 1 x 1 elements (one plane tile,
// rows l.pitch floats apart in shared memory as the compute phase reads them); for the column
// kernel's fused form one raw row.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// The largest box edge the copy engine takes (elements).
inline constexpr int kBulkBoxMax = 256;

/// Why the copy engine cannot read boxes of an input at `address` with geometry g (empty when it
/// can): x must be contiguous, the address and the other axes' strides multiples of 16 bytes, and
/// every coordinate a 32-bit integer. Every box must also start on a 16-byte boundary along x (the
/// copy engine stops with an illegal-instruction error otherwise); the callers' tiles start every
/// multiple of 4 outputs, so their boxes do exactly when the x offset is a multiple of 4.
inline std::string bulk_input_unfit(const kernels::Geometry& g, uintptr_t address) {
  if (g.in_stride[0] != 1)
    return "x is not contiguous in memory";
  if (address % 16 != 0)
    return "the input does not start on a 16-byte boundary";
  if (g.offset[0] % 4 != 0)
    return "the tiles' boxes do not start on 16-byte boundaries along x";
  for (int a = 1; a < kernels::kAxes; ++a) {
    if (g.in_extent[a] > 1 &&
        (g.in_stride[a] <= 0 || g.in_stride[a] % 4 != 0 || g.in_stride[a] >= (int64_t{1} << 38)))
      return "a row, slice or frame stride is not a multiple of 16 bytes";
  }
  for (int a = 0; a < kernels::kAxes; ++a) {
    if (g.in_extent[a] + g.out_extent[a] + 2 * kBulkBoxMax >= (int64_t{1} << 31))
      return "an extent needs 64-bit coordinates";
  }
  return "";
}

/// The device and driver checks and the encoding of a map over the input at `in` (geometry g, its
/// canonical axes as the tensor's) with boxes of `box` elements into `map`: why it cannot be
/// encoded (empty when it is). The families' rules (the boxes they copy) are in their folders:
/// tiled/tiled_tensor_maps.h, separable/column_tensor_map.h.
std::string encode_box_map(int device, const kernels::Geometry& g, const float* in,
                           const uint32_t (&box)[kernels::kAxes], kernels::TensorMap& map);

}  // namespace ndconv::cuda_backend
