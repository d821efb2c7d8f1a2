// The tiled kernel's tensor maps (cuda/tensor_map.h): the plane boxes its bulk copies load, and the
// opposite faces' boxes of a periodic launch; the rule is pure (tested on the host), the encoding
// is in tiled_launch.cu.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/tensor_map.h"
#include "cuda/tiled/tiled_halo.h"
#include "cuda/tiled/tiled_thread.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

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

/// Why the bulk copy cannot serve this launch on `device` (the rule above, the device's compute
/// capability, the driver's encoder); when it can (empty), `map` holds the encoded tensor map.
std::string plane_tensor_map(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TensorMap& map);

/// The side and band maps of a tiled launch whose face tiles copy the opposite faces' boxes
/// (l.halo_wrap, cuda/tiled/tiled_halo.h: boxes of l.wrap_columns x l.rows and l.pitch x
/// l.wrap_rows) from the input at `in`, into maps.side and maps.band; why they cannot be encoded
/// (empty when they are). The plane map must have been encoded (plane_tensor_map's checks).
std::string wrap_tensor_maps(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TiledMaps& maps);

}  // namespace ndconv::cuda_backend
