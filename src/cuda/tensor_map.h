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

#include "kernels/column_thread.h"
#include "kernels/geometry.h"
#include "kernels/tiled_halo.h"
#include "kernels/tiled_thread.h"

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

/// Why the bulk copy cannot load the planes of geometry g (tiled layout l) from an input at
/// `address` (empty when it can): bulk_input_unfit (the boxes start aligned in the valid region,
/// and in the same region for filters 1, 9, 17, ... taps wide), and the box edges at most 256
/// elements. Device and driver checks are tensor_map.cu's.
inline std::string bulk_copy_unfit(const kernels::Geometry& g, const kernels::TiledLayout& l,
                                   uintptr_t address) {
  std::string unfit = bulk_input_unfit(g, address);
  if (!unfit.empty())
    return unfit;
  if (l.pitch > kBulkBoxMax || l.rows > kBulkBoxMax)
    return "a plane tile is wider or taller than 256 elements";
  return "";
}

/// Why the column kernel's fused form (shape S) cannot stage its raw rows by bulk copy
/// (ColumnLayout::bulk_rows; empty when it can): bulk_input_unfit, rows of at most 256 columns,
/// and under a boundary other than zero at most kFaceColumns face columns per step in every block.
template <typename S>
std::string column_bulk_unfit(const kernels::Geometry& g, const kernels::ColumnLayout& l,
                              uintptr_t address) {
  std::string unfit = bulk_input_unfit(g, address);
  if (!unfit.empty())
    return unfit;
  if ((l.columns + 3) / 4 * 4 > kBulkBoxMax)
    return "a raw row is wider than 256 elements";
  if (g.boundary != kernels::kZero) {
    for (int64_t x = 0; x < g.out_extent[0]; x += S::kTileX) {
      if (kernels::staged_columns<S>(g, l, x, 0).count > kernels::kFaceColumns)
        return "a block has more face columns than its face buffers hold";
    }
  }
  return "";
}

/// Why the bulk copy cannot serve this launch on `device` (the rule above, the device's compute
/// capability, the driver's encoder); when it can (empty), `map` holds the encoded tensor map.
std::string plane_tensor_map(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TensorMap& map);

/// The side and band maps of a tiled launch whose face tiles copy the opposite faces' boxes
/// (l.halo_wrap, kernels/tiled_halo.h: boxes of l.wrap_columns x l.rows and l.pitch x
/// l.wrap_rows) from the input at `in`, into maps.side and maps.band; why they cannot be encoded
/// (empty when they are). The plane map must have been encoded (plane_tensor_map's checks).
std::string wrap_tensor_maps(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TiledMaps& maps);

/// The same for the raw rows of the column kernel's fused form (ColumnFusedShape, cuda/plan.h): a
/// box of round4(l.columns) x 1 x 1 x 1.
std::string row_tensor_map(int device, const kernels::Geometry& g, const kernels::ColumnLayout& l,
                           const float* in, kernels::TensorMap& map);

}  // namespace ndconv::cuda_backend
