// Host emulation of the CUDA kernels: walks the launch grid of kernels/schedule.h block by block
// and thread by thread, calling the same __host__ __device__ per-thread functions the GPU runs
// (including the row kernel's load phase, barrier, compute phase). This is how CI, which has no
// GPU, checks the kernels' blocking and indexing on every commit.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/blocked/blocked_thread.h"
#include "cuda/border/border_plan.h"
#include "cuda/border/border_thread.h"
#include "cuda/plan.h"
#include "cuda/separable/column_tensor_map.h"
#include "cuda/separable/column_thread.h"
#include "cuda/separable/row_tile.h"
#include "cuda/separable/separable_plan.h"
#include "cuda/tensor_map.h"
#include "cuda/tiled/tiled_halo.h"
#include "cuda/tiled/tiled_plan.h"
#include "cuda/tiled/tiled_tensor_maps.h"
#include "cuda/tiled/tiled_thread.h"
#include "kernels/schedule.h"

#include "emulate_stream.h"

namespace ndconv::test {

struct HostTaps {
  const float* taps;
  float operator()(int i) const { return taps[i]; }
};

/// Runs the blocked kernel with KO outputs per thread over its whole grid. The grid is shrunk
/// along y and z (when `small_grid`) to exercise the grid-stride loops as well.
template <int KO>
void emulate_blocked(const kernels::Geometry& g, const float* in, float* out, const float* taps,
                     bool small_grid = false) {
  kernels::LaunchShape s = kernels::blocked_shape(g, KO);
  if (small_grid) {
    s.grid[1] = (s.grid[1] + 1) / 2;
    s.grid[2] = (s.grid[2] + 2) / 3;
  }
  const HostTaps host_taps{taps};
  kernels::ThreadCoord c{};
  for (int d = 0; d < 3; ++d) {
    c.block_dim[d] = s.block[d];
    c.grid_dim[d] = s.grid[d];
  }
  for (c.block[2] = 0; c.block[2] < s.grid[2]; ++c.block[2])
    for (c.block[1] = 0; c.block[1] < s.grid[1]; ++c.block[1])
      for (c.block[0] = 0; c.block[0] < s.grid[0]; ++c.block[0])
        for (c.thread[1] = 0; c.thread[1] < s.block[1]; ++c.thread[1])
          for (c.thread[0] = 0; c.thread[0] < s.block[0]; ++c.thread[0])
            kernels::blocked_block_thread<KO>(g, in, out, host_taps, c);
}

/// Runs the blocked kernel for a run-time KO (one of the compiled values).
inline void emulate_blocked_ko(int ko, const kernels::Geometry& g, const float* in, float* out,
                               const float* taps, bool small_grid = false) {
  switch (ko) {
    case 1:
      return emulate_blocked<1>(g, in, out, taps, small_grid);
    case 2:
      return emulate_blocked<2>(g, in, out, taps, small_grid);
    case 4:
      return emulate_blocked<4>(g, in, out, taps, small_grid);
    case 8:
      return emulate_blocked<8>(g, in, out, taps, small_grid);
    case 16:
      return emulate_blocked<16>(g, in, out, taps, small_grid);
  }
  throw std::invalid_argument("no emulation for KO " + std::to_string(ko));
}

/// Runs the tiled kernel with shape S over its whole grid (a third of the blocks when
/// `small_grid`, so that each walks several tiles), phase by phase as the barriers order them: per
/// block, all threads load the taps, then the block walks its tiles (tiled_kernel's order). Thread
/// copies: per tile, all threads load the maps and plane 0; per plane p, all threads load plane
/// p + 1 into the other buffer, then all threads compute plane p; finally all threads store. With
/// `bulk`, the planes arrive as the bulk copy brings them (one box each, zeros outside the volume),
/// the next plane (the first of the block's next tile after a tile's last) before the current one
/// is computed, and for the other boundaries the face tiles' halo (cuda/tiled/tiled_halo.h) is
/// patched over the copy's zeros, then the next plane's fetched, by all threads; shapes that skip
/// lead taps (S::kLeads) take them as the dense launcher does for bulk copies (tiled_lead_geometry:
/// `taps` are then rows of `tap_pitch` floats in tiled_tap_rows's order). With `taps_laid_out`, the
/// taps are laid out on the host and copied straight (the dense launcher's way), else laid out by
/// the threads. With `zero_faces` (and `bulk`), the face tiles keep the copy's zeros
/// (kTiledBulkZeroFaces: the outputs that read them are emulate_border's). `halo_mode` replaces
/// the launcher's way of patching the halo (cuda_backend::tiled_halo_mode, with the opposite
/// faces' boxes where they serve). R: the compute phase's
/// row code (kernels::TiledRowsFixed: the caller checks kernels::tiled_rows_fit). H: the halo code
/// (kernels::TiledHaloCode; a layout it does not serve throws). Shared memory is one host buffer
/// per block, poisoned with NaN.
template <typename S, typename R = kernels::TiledRowsAny,
          kernels::TiledHaloCode H = kernels::TiledHaloCode::kAny>
void emulate_tiled(const kernels::Geometry& original, const float* in, float* out,
                   const float* original_taps, bool small_grid = false, bool bulk = false,
                   bool taps_laid_out = false, bool zero_faces = false,
                   std::optional<kernels::TiledHaloMode> halo_mode = std::nullopt) {
  const int lead = bulk && S::kLeads ? kernels::tiled_lead(original) : 0;
  const kernels::Geometry g = kernels::tiled_lead_geometry(original, lead);
  std::vector<float> led_taps;
  if (lead > 0) {  // a dense launch: the taps start at 0
    const int64_t k0 = original.filter_extent[0], pitch = original.tap_pitch;
    const int64_t count = k0 * original.filter_extent[1] * original.filter_extent[2] * pitch;
    led_taps = cuda_backend::tiled_lead_tap_rows(
        std::vector<float>(original_taps, original_taps + count), k0, pitch, lead);
  }
  const float* taps = lead > 0 ? led_taps.data() : original_taps;
  kernels::LaunchShape s = kernels::tiled_launch_shape<S>(g);
  if (small_grid)
    kernels::tiled_resident_grid(s, (s.grid[0] + 2) / 3);
  kernels::TiledLayout l = kernels::tiled_layout<S>(g);
  l.lead = lead;
  if (bulk && !zero_faces) {
    const int64_t halo = cuda_backend::tiled_halo_elements(g, l, S::kTileX, S::BY);
    cuda_backend::tiled_add_halo_in_mode(
        l, g, S::kTileX, S::BY, static_cast<int>((halo + S::kThreads - 1) / S::kThreads),
        S::kThreads,
        halo_mode.value_or(cuda_backend::tiled_halo_mode(g, l, S::kTileX, S::BY, S::KO, true)));
  }
  if (!kernels::tiled_halo_code_fits<H>(l, kernels::tiled_plane_loads(bulk, zero_faces)))
    throw std::invalid_argument("the halo code does not serve this launch");
  // The device's dynamic shared memory: poisoned, so reading a float the load phase did not
  // write would show in the result.
  std::vector<float> shared(static_cast<size_t>(l.total_floats),
                            std::numeric_limits<float>::quiet_NaN());
  float* taps_s = shared.data();
  float* tile = shared.data() + l.tile_offset;                 // two plane buffers
  std::vector<int> maps(static_cast<size_t>(l.map_ints), -2);  // the device keeps them in shared
  std::vector<float> acc(static_cast<size_t>(S::kThreads * S::KO * S::TX));
  using Acc = float[S::KO][S::TX];
  auto thread_acc = [&](int tid) -> Acc& {
    return *reinterpret_cast<Acc*>(acc.data() + static_cast<size_t>(tid) * S::KO * S::TX);
  };
  const int tiles = static_cast<int>(kernels::tiled_tile_count<S>(g));
  const int planes = kernels::tiled_planes<S>(g);
  const int per_slice = kernels::tiled_slice_planes<S>(g);
  float* tiles_s[2] = {tile, tile + l.tile_floats};
  const kernels::TiledMaps no_maps{};  // the host form of the bulk copy reads `in` itself
  std::vector<float> laid_out(static_cast<size_t>(l.tap_floats));
  if (taps_laid_out)
    kernels::tiled_lay_out_taps<S>(g, l, taps, laid_out.data());
  const int grid = static_cast<int>(s.grid[0]);
  cuda_backend::tiled_deal_face_tiles(l, S::kTileX, S::BY, grid);  // as the dense launcher does
  uint64_t barriers[2] = {};  // the host has no copy engine to wait for
  // The end of an iteration (kernels::tiled_halo_advance): plane p of tile `tile` patched, the one
  // after fetched.
  auto advance = [&](const kernels::TileOrigin& t, int tile_index, int p, unsigned step) {
    if (l.halo_slots == 0)
      return;
    const int j2 = p == planes ? g.filter_extent[2] : p / per_slice;
    const int s3 = p == planes ? 0 : p % per_slice;
    for (int tid = 0; tid < S::kThreads; ++tid)
      kernels::tiled_halo_advance<S>(g, l, in, taps_s, tile, barriers, t, grid, tile_index, j2, s3,
                                     step, tid);
  };
  for (int block = 0; block < static_cast<int>(s.grid[0]); ++block) {
    for (int tid = 0; tid < S::kThreads; ++tid) {
      if (taps_laid_out)
        kernels::tiled_copy_taps<S>(l, laid_out.data(), taps_s, tid);
      else
        kernels::tiled_load_taps<S>(g, l, taps, taps_s, tid);
    }
    kernels::TileOrigin t = kernels::tiled_origin<S>(l, block);
    unsigned step = 0;
    if (bulk) {
      kernels::tiled_bulk_load_plane<S>(g, l, no_maps, in, tiles_s[0], nullptr, t, 0, 0);
      if (H == kernels::TiledHaloCode::kAny) {
        if (l.halo_staged && kernels::tiled_halo_needed(l, t)) {
          for (int tid = 0; tid < S::kThreads; ++tid) {
            kernels::tiled_halo_list<S>(g, l, t, taps_s, tid);
            kernels::tiled_halo_fetch<S>(g, l, in, taps_s, t, 0, 0, 0, nullptr, tid);
          }
        }
        advance(t, block, 0, step);
      }
    }
    for (int tile_index = block; tile_index < tiles; tile_index += grid) {
      t = kernels::tiled_origin<S>(l, tile_index);
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(maps.begin(), maps.end(), -2);  // a bulk tile reads none
      if (!bulk) {
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::tiled_load_maps<S>(g, l, t, maps.data(), tid);
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::tiled_load_plane<S>(g, l, in, tiles_s[step & 1], maps.data(), t, 0, tid);
      }
      // kWithin: a face tile's first plane patched as it starts, its others at the end of the
      // iteration before theirs (the host waits for no copy: the barriers are never read).
      const bool face = H == kernels::TiledHaloCode::kWithin && kernels::tiled_halo_needed(l, t);
      if (face) {
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::tiled_halo_start_within<S>(g, l, t, taps_s, tiles_s[step & 1],
                                              &barriers[step & 1], 0, tid);
      }
      for (int p = 0; p < planes; ++p, ++step) {
        const int current = step & 1, next = current ^ 1;
        if (bulk) {
          const bool last = p + 1 == planes;
          if (!last || tile_index + grid < tiles) {
            kernels::tiled_bulk_load_plane<S>(
                g, l, no_maps, in, tiles_s[next], nullptr,
                last ? kernels::tiled_origin<S>(l, tile_index + grid) : t,
                last ? 0 : (p + 1) / per_slice, last ? 0 : (p + 1) % per_slice);
          }
        } else if (p + 1 < planes) {
          for (int tid = 0; tid < S::kThreads; ++tid)
            kernels::tiled_load_plane<S>(g, l, in, tiles_s[next], maps.data(), t, p + 1, tid);
        }
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::tiled_compute_plane<S, R>(g, l, taps_s, tiles_s[current], thread_acc(tid),
                                             p / per_slice, p % per_slice, tid % S::BX,
                                             tid / S::BX);
        if (bulk && H == kernels::TiledHaloCode::kAny)
          advance(t, tile_index, p + 1, step + 1);
        if (face && p + 1 < planes) {
          for (int tid = 0; tid < S::kThreads; ++tid)
            kernels::tiled_halo_patch_within<S>(l, taps_s, tiles_s[next], &barriers[next], 0, tid);
        }
      }
      for (int tid = 0; tid < S::kThreads; ++tid)
        kernels::tiled_store<S>(g, out, t, thread_acc(tid), tid % S::BX, tid / S::BX);
    }
  }
}

/// The tiled instantiations of src/cuda/tiled/tiled_launch.cu's dispatch table, by (KO, block
/// rows); the 64-row entries have TX 16, the others TX 8.
inline void emulate_tiled_entry(int ko, int block_rows, const kernels::Geometry& g, const float* in,
                                float* out, const float* taps, bool small_grid = false,
                                bool bulk = false, bool taps_laid_out = false) {
  using kernels::TiledShape;
  if (ko == 8 && block_rows == 32)
    return emulate_tiled<TiledShape<8, 8, 4, 32>>(g, in, out, taps, small_grid, bulk,
                                                  taps_laid_out);
  if (ko == 4 && block_rows == 32)
    return emulate_tiled<TiledShape<8, 4, 4, 32, true>>(g, in, out, taps, small_grid, bulk,
                                                        taps_laid_out);
  if (ko == 8 && block_rows == 1)
    return emulate_tiled<TiledShape<8, 8, 128, 1>>(g, in, out, taps, small_grid, bulk,
                                                   taps_laid_out);
  if (ko == 4 && block_rows == 1)
    return emulate_tiled<TiledShape<8, 4, 128, 1>>(g, in, out, taps, small_grid, bulk,
                                                   taps_laid_out);
  if (ko == 1 && block_rows == 32)
    return emulate_tiled<TiledShape<8, 1, 4, 32>>(g, in, out, taps, small_grid, bulk,
                                                  taps_laid_out);
  if (ko == 1 && block_rows == 1)
    return emulate_tiled<TiledShape<8, 1, 128, 1>>(g, in, out, taps, small_grid, bulk,
                                                   taps_laid_out);
  if (ko == 2 && block_rows == 64)
    return emulate_tiled<TiledShape<16, 2, 2, 64>>(g, in, out, taps, small_grid, bulk,
                                                   taps_laid_out);
  if (ko == 1 && block_rows == 64)
    return emulate_tiled<TiledShape<16, 1, 2, 64>>(g, in, out, taps, small_grid, bulk,
                                                   taps_laid_out);
  throw std::invalid_argument("no tiled emulation for KO " + std::to_string(ko) + ", " +
                              std::to_string(block_rows) + " block rows");
}

/// Runs the border kernel (border_thread.h) over its whole grid, or a third of it (`small_grid`,
/// for the grid-stride loop), after the tiled kernel's zero-face launch on the same output: per
/// block, all threads stage the patch (poisoned first, so a float the stage phase did not write
/// would show), then all threads compute and add their terms.
inline void emulate_border(const kernels::Geometry& g, const float* in, float* out,
                           const float* taps, bool small_grid = false) {
  const kernels::BorderPlan plan = kernels::border_plan(g);
  const int64_t grid = small_grid ? (plan.blocks + 2) / 3 : plan.blocks;
  std::vector<float> patch(static_cast<size_t>(plan.patch_floats));
  for (int64_t bx = 0; bx < grid; ++bx) {
    for (int64_t b = bx; b < plan.blocks; b += grid) {
      const kernels::BorderBlock k = kernels::border_block(g, plan, b);
      std::fill(patch.begin(), patch.end(), std::numeric_limits<float>::quiet_NaN());
      for (int tid = 0; tid < kernels::kBorderThreads; ++tid)
        kernels::border_stage(g, k, in, patch.data(), tid);
      for (int tid = 0; tid < kernels::kBorderThreads; ++tid) {
        int64_t o[kernels::kAxes];
        float acc[kernels::kBorderKO];
        if (!kernels::border_outputs(g, plan, k, tid, o))
          continue;
        kernels::border_accumulate(g, k, patch.data(), HostTaps{taps}, o, acc);
        kernels::blocked_store<kernels::kBorderKO, false, true>(g, out, o[0], o[1], o[2], o[3],
                                                                acc);
      }
    }
  }
}

/// Runs the x-row kernel: per block and row, every thread loads, then every thread computes.
inline void emulate_row(const kernels::Geometry& g, const float* in, float* out, const float* taps,
                        bool small_grid = false) {
  kernels::LaunchShape s = kernels::row_shape(g);
  if (small_grid)
    s.grid[1] = (s.grid[1] + 2) / 3;
  const HostTaps host_taps{taps};
  std::vector<float> tile(static_cast<size_t>(s.shared_bytes / sizeof(float)));
  const int threads = s.block[0];
  for (int64_t by = 0; by < s.grid[1]; ++by) {
    for (int64_t bx = 0; bx < s.grid[0]; ++bx) {
      for (int64_t row = by; row < kernels::row_count(g); row += s.grid[1]) {
        int64_t in_offset = 0, out_offset = 0;
        kernels::row_offsets(g, row, in_offset, out_offset);
        const int64_t x0 = bx * threads;
        for (int t = 0; t < threads; ++t)
          kernels::row_tile_load(g, in + in_offset, tile.data(), x0, t, threads);
        for (int t = 0; t < threads; ++t)
          kernels::row_tile_compute(g, tile.data(), out + out_offset, host_taps, x0, t);
      }
    }
  }
}

/// Runs the column kernel with shape S over its grid (shrunk along y and z when `small_grid`), as
/// the barriers order it, the next tile's copies where the kernel issues them: per block, all
/// threads load the taps and walk the block's tiles (column_next_tile). Staged: the first tile's
/// rows, then per tile the next tile's rows into the other tile, then this tile's column pass.
/// Fused: per tile, each warp stages (its first step came with the previous tile) and x-filters
/// its steps, lane by lane between the warp barriers; then each warp stages the next tile's first
/// step; then the column pass. Shared memory is one NaN-poisoned host buffer per block.
/// `resident_blocks` caps the grid as the launcher does with the device's figure.
template <typename S, kernels::ColumnForm F>
void emulate_column(const kernels::Geometry& g, const kernels::ColumnLayout& l, const float* in,
                    float* out, const float* taps, bool small_grid, int64_t resident_blocks) {
  using kernels::ColumnForm;
  kernels::LaunchShape s = kernels::column_launch_shape<S>(g, l, resident_blocks);
  if (small_grid) {
    s.grid[1] = (s.grid[1] + 1) / 2;
    s.grid[2] = (s.grid[2] + 2) / 3;
  }
  // Steps of kFilterRows rows from row `first` (kernels::column_first_staged_row).
  auto steps_from = [&](int first) {
    return (l.rows - first + S::kFilterRows - 1) / S::kFilterRows;
  };
  const int last_x = kernels::tiled_last_block_taps<S::kFilterX>(g.filter_extent[0]);
  int64_t counts[3];
  kernels::column_block_counts<S>(g, counts);
  // One step's raw rows: lane by lane, or (fused, ColumnLayout::bulk_rows) by the host form of
  // the bulk copy, whose face columns are put in place once every lane has staged.
  const kernels::TensorMap no_map{};  // the host form of the bulk copy reads `in` itself
  auto stage = [&](float* buffer, int64_t bx, int64_t by, int64_t bz, int warp, int r) {
    const bool bulk = F == ColumnForm::kFusedX && l.bulk_rows;
    std::vector<float> faces(kernels::kFaceColumns, std::numeric_limits<float>::quiet_NaN());
    for (int lane = 0; lane < 32; ++lane) {
      const kernels::StagedColumns columns = kernels::staged_columns<S>(g, l, bx * S::kTileX, lane);
      const kernels::ColumnOrigin o = kernels::column_origin<S>(g, bx, by, bz, warp, lane);
      if (bulk) {
        kernels::column_stage_bulk<S>(g, l, no_map, in, buffer, faces.data(), nullptr, o, r, lane,
                                      columns);
      } else {
        kernels::column_stage<S>(g, l, in, buffer, o, r, lane, columns);
      }
    }
    for (int lane = 0; bulk && lane < 32; ++lane) {
      kernels::column_fix_faces(g, buffer, faces.data(), lane,
                                kernels::staged_columns<S>(g, l, bx * S::kTileX, lane));
    }
  };
  auto stage_tile = [&](float* tile, int64_t bx, int64_t by, int64_t bz) {
    for (int warp = 0; warp < S::kWarps; ++warp) {
      for (int p = warp; p < steps_from(0); p += S::kWarps)
        stage(tile + p * S::kFilterRows * S::kTileX, bx, by, bz, warp, p * S::kFilterRows);
    }
  };
  for (int64_t bx = 0; bx < s.grid[0]; ++bx) {
    for (int64_t gy = 0; gy < std::min(s.grid[1], counts[1]); ++gy) {
      for (int64_t gz = 0; gz < std::min(s.grid[2], counts[2]); ++gz) {
        std::vector<float> shared(static_cast<size_t>(l.total_floats),
                                  std::numeric_limits<float>::quiet_NaN());
        auto staged = [&](int warp) { return shared.data() + l.stage + warp * l.stage_floats; };
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::column_load_taps<S>(g, l, taps, shared.data(), tid);
        int64_t by = gy, bz = gz;
        if (F == ColumnForm::kStaged)
          stage_tile(shared.data() + l.filtered, bx, by, bz);
        if (F == ColumnForm::kFusedX) {
          const int first = kernels::column_first_staged_row<S>(g, l, bz, s.grid[2]);
          for (int warp = 0; warp < S::kWarps && warp < steps_from(first); ++warp)
            stage(staged(warp), bx, by, bz, warp, first + warp * S::kFilterRows);
        }
        for (int i = 0;; ++i) {
          int64_t next_y = by, next_z = bz;
          const bool more =
              kernels::column_next_tile(counts, gz, s.grid[1], s.grid[2], next_y, next_z);
          float* const tile =
              shared.data() + l.filtered + (F == ColumnForm::kStaged ? (i & 1) : 0) * l.tile_floats;
          if (F == ColumnForm::kStaged && more)
            stage_tile(shared.data() + l.filtered + ((i + 1) & 1) * l.tile_floats, bx, next_y,
                       next_z);
          if (F == ColumnForm::kFusedX) {
            const int first = kernels::column_first_staged_row<S>(g, l, bz, s.grid[2]);
            for (int tid = 0; first > 0 && tid < S::kThreads; ++tid)
              kernels::column_reuse_rows<S>(tile, first, tid);
            for (int warp = 0; warp < S::kWarps; ++warp) {
              for (int p = warp; p < steps_from(first); p += S::kWarps) {
                const int r = first + p * S::kFilterRows;
                if (p != warp)  // the first step was staged with the previous tile
                  stage(staged(warp), bx, by, bz, warp, r);
                for (int lane = 0; lane < 32; ++lane)
                  kernels::column_filter_rows<S>(last_x, g, l, staged(warp), shared.data(), tile, r,
                                                 lane);
              }
            }
            const int next_first = kernels::column_first_staged_row<S>(g, l, next_z, s.grid[2]);
            for (int warp = 0; more && warp < S::kWarps && warp < steps_from(next_first); ++warp)
              stage(staged(warp), bx, next_y, next_z, warp, next_first + warp * S::kFilterRows);
          }
          for (int warp = 0; warp < S::kWarps; ++warp) {
            for (int lane = 0; lane < 32; ++lane) {
              const kernels::ColumnOrigin o = kernels::column_origin<S>(g, bx, by, bz, warp, lane);
              if (!o.active)
                continue;
              float acc[S::KO][S::kVector];
              kernels::column_pass<S, F != ColumnForm::kDirect>(g, l, in, shared.data(), tile, o,
                                                                acc);
              kernels::column_store<S>(g, l, out, o, acc);
            }
          }
          if (!more)
            break;
          by = next_y;
          bz = next_z;
        }
      }
    }
  }
}

/// The column instantiations of src/cuda/separable/separable_launch.cu's table, one per form.
/// `resident_blocks`: see emulate_column (0: the whole grid, one tile per block). `bulk_rows`:
/// the fused form stages by bulk copy where the launcher would (column_bulk_unfit).
inline void emulate_column_entry(kernels::ColumnForm form, const kernels::Geometry& g,
                                 const float* in, float* out, const float* taps,
                                 bool small_grid = false, int64_t resident_blocks = 0,
                                 bool bulk_rows = false) {
  using kernels::ColumnForm;
  kernels::ColumnLayout l = cuda_backend::column_layout_for(g, form, in, out);
  l.bulk_rows = bulk_rows && form == ColumnForm::kFusedX &&
                cuda_backend::column_bulk_unfit<cuda_backend::ColumnFusedShape>(
                    g, l, reinterpret_cast<uintptr_t>(in))
                    .empty();
  if (form == ColumnForm::kFusedX)
    emulate_column<cuda_backend::ColumnFusedShape, ColumnForm::kFusedX>(
        g, l, in, out, taps, small_grid, resident_blocks);
  else if (form == ColumnForm::kStaged)
    emulate_column<cuda_backend::ColumnStagedShape, ColumnForm::kStaged>(
        g, l, in, out, taps, small_grid, resident_blocks);
  else
    emulate_column<cuda_backend::ColumnPlainShape, ColumnForm::kDirect>(
        g, l, in, out, taps, small_grid, resident_blocks);
}

/// Runs the slab kernel (cuda/separable/slab_thread.h) over its whole grid, phase by phase as its
/// barriers order them: per block, all threads build the maps, then take their items; planes 0
/// and 1 are staged; per march step n, all threads stage plane n + 2 and filter plane n along x,
/// then all filter plane n - 1 along y, step their ring and store. `resident_blocks` (0: one chunk)
/// and `min_chunk` cut the volume into chunks along z as the launcher does. Shared memory is one
/// NaN-poisoned host buffer per block.
inline void emulate_slab(const kernels::Geometry& g, const float* in, float* out, const float* taps,
                         int64_t resident_blocks, int min_chunk) {
  using kernels::SlabShape;
  const int k = g.filter_extent[0];
  kernels::SlabLayout l = cuda_backend::slab_layout_for(g, in);
  const kernels::LaunchShape s = kernels::slab_launch_shape(g, l, resident_blocks, min_chunk);
  kernels::SlabTaps t{};
  for (int j = 0; j < k; ++j) {
    t.z[j] = taps[g.tap_base + j];
    t.y[j] = taps[g.tap_base + k + j];
    t.x[j] = taps[g.tap_base + 2 * k + j];
  }
  const bool compiled = cuda_backend::slab_dispatch(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    constexpr int kThreads = SlabShape::kThreads;
    using Ring = float[K][4];
    for (int64_t bz = 0; bz < s.grid[2]; ++bz)
      for (int64_t by = 0; by < s.grid[1]; ++by)
        for (int64_t bx = 0; bx < s.grid[0]; ++bx) {
          std::vector<float> shared(static_cast<size_t>(l.total_floats),
                                    std::numeric_limits<float>::quiet_NaN());
          const kernels::SlabBlock b = kernels::slab_block(g, l, bx, by, bz);
          for (int tid = 0; tid < kThreads; ++tid)
            kernels::slab_maps(g, l, b, shared.data(), tid);
          std::vector<kernels::SlabItems<K>> items;
          for (int tid = 0; tid < kThreads; ++tid)
            items.push_back(kernels::slab_items<K>(g, l, b, shared.data(), tid));
          auto stage = [&](int n) {
            if (n >= b.planes)
              return;
            const int64_t z = kernels::slab_input_plane(g, l, b, n);
            for (int tid = 0; tid < kThreads; ++tid) {
              kernels::slab_stage<K>(g, l, items[tid], z < 0 ? nullptr : in + z * g.in_stride[3],
                                     shared.data() + (n % SlabShape::kBuffers) * l.raw_floats,
                                     shared.data());
            }
          };
          stage(0);
          stage(1);
          std::vector<Ring> rings(kThreads);
          for (auto& ring : rings)
            for (auto& slot : ring)
              std::fill(std::begin(slot), std::end(slot), std::numeric_limits<float>::quiet_NaN());
          for (int n = 0; n <= b.planes; ++n) {
            if (n < b.planes) {
              stage(n + 2);
              for (int tid = 0; tid < kThreads; ++tid)
                kernels::slab_filter_x<K>(
                    l, t, shared.data() + (n % SlabShape::kBuffers) * l.raw_floats,
                    shared.data() + l.filtered + (n & 1) * l.filtered_floats, tid);
            }
            if (n == 0)
              continue;
            const int m = n - 1;
            for (int tid = 0; tid < kThreads; ++tid) {
              float v[4], o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              kernels::slab_filter_y<K>(t, shared.data() + l.filtered + (m & 1) * l.filtered_floats,
                                        tid, v);
              const bool emit = m >= K - 1;
              if (b.down)
                kernels::slab_ring_step<K, true>(m % K, rings[tid], v, emit, t, o);
              else
                kernels::slab_ring_step<K, false>(m % K, rings[tid], v, emit, t, o);
              if (emit)
                kernels::slab_store(g, b, out, kernels::slab_output_plane(l, b, m), tid, o);
            }
          }
        }
  });
  if (!compiled)
    throw std::invalid_argument("no slab kernel for " + std::to_string(k) + " taps");
}

/// Runs a separable plan through host buffers, as launch_separable_device does on the device.
inline void emulate_separable(const cuda_backend::SeparablePlan& plan, const float* in, float* out,
                              int64_t input_voxels, bool small_grid = false,
                              bool bulk_rows = false) {
  std::vector<float> scratch(static_cast<size_t>(2 * input_voxels));
  auto buffer = [&](int id) -> float* {
    if (id == cuda_backend::kScratchA)
      return scratch.data();
    if (id == cuda_backend::kScratchB)
      return scratch.data() + input_voxels;
    return out;
  };
  for (const cuda_backend::SeparablePass& pass : plan.passes) {
    const float* src = pass.source == cuda_backend::kInputBuffer ? in : buffer(pass.source);
    float* dst = buffer(pass.destination);
    if (pass.stream_taps > 0)
      // Chunks along z as on a device holding 8 blocks, at least 4 planes each.
      emulate_stream(pass.geometry, src, dst, plan.taps.data(), small_grid ? 0 : 8, 4);
    else if (pass.slab_taps > 0)
      // Chunks along z as on a device holding 8 blocks, at least 4 planes each.
      emulate_slab(pass.geometry, src, dst, plan.taps.data(), small_grid ? 0 : 8, 4);
    else if (pass.column_ko > 0)
      // Unshrunk: a grid of 5 blocks, each walking many tiles as on the device (column_next_tile).
      emulate_column_entry(pass.column_form, pass.geometry, src, dst, plan.taps.data(), small_grid,
                           small_grid ? 0 : 5, bulk_rows);
    else if (pass.tiled_rows > 0)
      emulate_tiled_entry(1, pass.tiled_rows, pass.geometry, src, dst, plan.taps.data(),
                          small_grid);
    else if (pass.ko == 0)
      emulate_row(pass.geometry, src, dst, plan.taps.data(), small_grid);
    else
      emulate_blocked_ko(pass.ko, pass.geometry, src, dst, plan.taps.data(), small_grid);
  }
}

}  // namespace ndconv::test
