// The tensor maps of the tiled kernel's bulk plane copies (kernels/bulk_copy.h): which layouts the
// copy engine can load (a pure rule, tested on the host) and the encoding of a map (tensor_map.cu,
// through the driver's cuTensorMapEncodeTiled, fetched from the runtime so that nothing links the
// driver library: the CI machine has none).
//
// A map describes the input as a four-dimensional tensor along the canonical axes of the tiled
// geometry, and a box of l.pitch x l.rows x 1 x 1 elements: one plane tile, rows l.pitch floats
// apart in shared memory as the compute phase reads them.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/geometry.h"
#include "kernels/tiled_thread.h"

namespace ndconv::cuda_backend {

/// The largest box edge the copy engine takes (elements).
inline constexpr int kBulkBoxMax = 256;

/// Why the bulk copy cannot load the planes of geometry g (tiled layout l) from an input at
/// `address` (empty when it can): x must be contiguous, the address and the other axes' strides
/// multiples of 16 bytes, every box must start on a 16-byte boundary along x (the copy engine
/// stops with an illegal-instruction error otherwise: measured on the H100, seventh pass), the box
/// edges at most 256 elements, and every coordinate a 32-bit integer. Tiles start every
/// S::kTileX outputs (a multiple of 4), so the boxes start aligned exactly when the x offset is a
/// multiple of 4: the valid region, and the same region for filters 1, 9, 17, ... taps wide.
/// Device and driver checks are tensor_map.cu's.
inline std::string bulk_copy_unfit(const kernels::Geometry& g, const kernels::TiledLayout& l,
                                   uintptr_t address) {
  if (g.in_stride[0] != 1)
    return "x is not contiguous in memory";
  if (address % 16 != 0)
    return "the input does not start on a 16-byte boundary";
  if (g.offset[0] % 4 != 0)
    return "the plane tiles do not start on 16-byte boundaries along x";
  for (int a = 1; a < kernels::kAxes; ++a) {
    if (g.in_extent[a] > 1 &&
        (g.in_stride[a] <= 0 || g.in_stride[a] % 4 != 0 || g.in_stride[a] >= (int64_t{1} << 38)))
      return "a row, slice or frame stride is not a multiple of 16 bytes";
  }
  for (int a = 0; a < kernels::kAxes; ++a) {
    if (g.in_extent[a] + g.out_extent[a] + 2 * kBulkBoxMax >= (int64_t{1} << 31))
      return "an extent needs 64-bit coordinates";
  }
  if (l.pitch > kBulkBoxMax || l.rows > kBulkBoxMax)
    return "a plane tile is wider or taller than 256 elements";
  return "";
}

/// Why the bulk copy cannot serve this launch on `device` (the rule above, the device's compute
/// capability, the driver's encoder); when it can (empty), `map` holds the encoded tensor map.
std::string plane_tensor_map(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TensorMap& map);

}  // namespace ndconv::cuda_backend
