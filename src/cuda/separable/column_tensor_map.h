// The column kernel's tensor map (cuda/tensor_map.h): the raw rows its fused form stages by bulk
// copy; the rule is pure (tested on the host), the encoding is in separable_launch.cu.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/separable/column_thread.h"
#include "cuda/tensor_map.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::cuda_backend {

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

/// Why the bulk copy cannot stage the raw rows of the column kernel's fused form (ColumnFusedShape,
/// separable_plan.h): a box of round4(l.columns) x 1 x 1 x 1.
std::string row_tensor_map(int device, const kernels::Geometry& g, const kernels::ColumnLayout& l,
                           const float* in, kernels::TensorMap& map);

}  // namespace ndconv::cuda_backend
