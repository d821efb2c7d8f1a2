// Host-side rules of the pad and border kernels (pad_thread.h, border_thread.h), the helpers a
// dense tiled launch calls when its face tiles cannot take their halo from the bulk copy: the
// padded input's layout, and whether padding or the border kernel pays. Free of CUDA (CI tests).
#pragma once

#include <cstdint>

#include "cuda/border/border_thread.h"
#include "cuda/border/pad_thread.h"
#include "cuda/plan.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::cuda_backend {

/// The padded input of a dense tiled launch (cuda/border/pad_thread.h) on geometry g, whose blocks
/// cover tile_x outputs along x and block_rows along axis 1: the columns and rows from the first
/// that any tile reads to the last, the low side padded by a multiple of 4 columns so that the
/// bulk copy's boxes keep their 16-byte alignment (and g's lead taps stay valid). `geometry`
/// reads the padded buffer: every tile's columns and rows lie inside its extents, so no tile
/// has a halo (cuda/tiled/tiled_halo.h), for any boundary.
struct PaddedInput {
  kernels::PadLayout layout;
  kernels::Geometry geometry;
  int64_t floats;  ///< the padded buffer
};

/// The input indices [first, end) along axis a (0: x, 1) that the tiles of `tile` outputs read:
/// from the first tile's first column or row to the last tile's last (kernels::TiledLayout's
/// columns and rows).
inline void tiled_read_span(const kernels::Geometry& g, int a, int64_t tile, int64_t& first,
                            int64_t& end) {
  const int64_t tiles = (g.out_extent[a] + tile - 1) / tile;
  first = g.offset[a];
  end = (tiles - 1) * tile + g.offset[a] + tile + g.filter_extent[a] - 1;
}

inline PaddedInput pad_tiled_input(const kernels::Geometry& g, int tile_x, int block_rows) {
  PaddedInput p;
  p.geometry = g;
  const int64_t tile[2] = {tile_x, block_rows};
  for (int a = 0; a < 2; ++a) {
    int64_t first, end;
    tiled_read_span(g, a, tile[a], first, end);
    int64_t before = first < 0 ? -first : 0;
    int64_t extent = before + end;
    if (a == 0) {
      before = (before + 3) / 4 * 4;
      extent = (before + end + 3) / 4 * 4;
    }
    p.layout.before[a] = before;
    p.layout.extent[a] = extent;
    p.geometry.in_extent[a] = extent;
    p.geometry.offset[a] = g.offset[a] + before;
  }
  p.layout.stride[0] = 1;
  for (int a = 1; a < kernels::kAxes; ++a)
    p.layout.stride[a] = p.layout.stride[a - 1] * p.geometry.in_extent[a - 1];
  for (int a = 0; a < kernels::kAxes; ++a)
    p.geometry.in_stride[a] = p.layout.stride[a];
  p.floats = p.layout.stride[kernels::kAxes - 1] * p.geometry.in_extent[kernels::kAxes - 1];
  // 128-bit reads where x is contiguous and every row starts a multiple of 4 floats from the
  // first (the launcher also checks the input's address).
  p.layout.vector_reads = g.in_stride[0] == 1;
  for (int a = 1; a < kernels::kAxes; ++a) {
    if (g.in_extent[a] > 1 && g.in_stride[a] % 4 != 0)
      p.layout.vector_reads = 0;
  }
  return p;
}

/// Whether a bulk-copied dense tiled launch on g (blocks of tile_x by block_rows outputs) that
/// cannot patch its face tiles' halo (tiled_halo_slots) can pad its input (pad_tiled_input)
/// instead: a boundary other than zero, tiles that read outside the volume along x or axis 1, and
/// a padded plane's 4-column groups counting in 32 bits (kernels::pad_kernel).
inline bool tiled_input_padding_pays(const kernels::Geometry& g, int tile_x, int block_rows) {
  if (g.boundary == kernels::kZero)
    return false;
  const PaddedInput p = pad_tiled_input(g, tile_x, block_rows);
  if (p.layout.extent[0] / 4 * p.layout.extent[1] > INT32_MAX)
    return false;
  const int64_t tile[2] = {tile_x, block_rows};
  for (int a = 0; a < 2; ++a) {
    int64_t first, end;
    tiled_read_span(g, a, tile[a], first, end);
    if (first < 0 || end > g.in_extent[a])
      return true;
  }
  return false;
}

/// The size of the border kernel's work on geometry g (its plan): every output of its boxes
/// against every tap (the kernel adds only the taps that read outside, a fixed share per filter).
inline double border_fmas(const kernels::Geometry& g, const kernels::BorderPlan& plan) {
  double outputs = 0;
  for (int k = 0; k < plan.boxes; ++k)
    outputs += double(plan.box[k].extent[0]) * double(plan.box[k].extent[1]);
  double taps = 1;
  for (int a = 0; a < kernels::kAxes; ++a)
    taps *= g.filter_extent[a];
  return outputs * double(g.out_extent[2]) * double(g.out_extent[3]) * taps;
}

/// Whether the border kernel can serve a launch with this plan: a shell to correct, and a block
/// patch within the default 48 KiB of shared memory.
inline bool border_fits(const kernels::BorderPlan& plan) {
  return plan.boxes > 0 &&
         int64_t{plan.patch_floats} * int64_t{sizeof(float)} <= kTiledMaxSharedBytes;
}

/// Whether a bulk launch on g whose input would be padded (tiled_input_padding_pays) corrects its
/// face shell with the border kernel (plan: kernels::border_plan(g)) instead: where the border
/// kernel fits and its work stays within `fmas_per_voxel` per input voxel
/// (Tuning::border_fmas_per_voxel).
inline bool tiled_border_pays(const kernels::Geometry& g, const kernels::BorderPlan& plan,
                              double fmas_per_voxel) {
  double voxels = 1;
  for (int a = 0; a < kernels::kAxes; ++a)
    voxels *= double(g.in_extent[a]);
  return border_fits(plan) && border_fmas(g, plan) <= fmas_per_voxel * voxels;
}

}  // namespace ndconv::cuda_backend
