// Host-side rules of the tiled kernel (tiled_thread.h, tiled_halo.h), free of CUDA so that the CI
// tests use them too: its geometry and tap layout for dense problems, the halo of its face tiles
// (how many elements, which mode), the dealing of face tiles over the blocks, and the shape it
// takes for a separable x pass.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "cuda/border/border_plan.h"
#include "cuda/plan.h"
#include "cuda/tensor_map.h"
#include "cuda/tiled/tiled_halo.h"
#include "cuda/tiled/tiled_thread.h"
#include "core/problem.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// Geometry of a dense problem for the tiled kernel (cuda/tiled/tiled_thread.h): as dense_geometry,
/// except that a 2D image puts y on canonical axis 1 ([x, y, 1, 1]) instead of the blocked axis 3.
/// The tiled kernel reuses inputs along axis 1 through its shared-memory tile (32 rows per block),
/// so a 2D image needs no blocking along a last axis (KO 1), and its blocks then hold 32 rows
/// instead of one.
inline kernels::Geometry tiled_geometry(const detail::CorrelationProblem& p) {
  if (p.input.dims != 2)
    return dense_geometry(p);
  kernels::Geometry g = make_geometry(p.input, p.output, p.filter_extent, p.offset, p.boundary,
                                      canonical_order(2, -1));
  g.tap_base = 0;
  g.tap_pitch = 1;  // one tap per row: row j0 + K0 * j1 is the filter's own order
  return g;
}

/// The taps in the layout tiled_geometry expects.
inline std::vector<float> tiled_tap_rows(const detail::CorrelationProblem& p) {
  if (p.input.dims != 2)
    return dense_tap_rows(p);
  return std::vector<float>(p.taps, p.taps + p.filter_extent[0] * p.filter_extent[1]);
}

/// Tap rows of tiled_tap_rows (runs of k0 rows along x, `pitch` taps per row) for the geometry with
/// `lead` lead taps (kernels::tiled_lead_geometry): `lead` zero rows before every run.
inline std::vector<float> tiled_lead_tap_rows(const std::vector<float>& rows, int64_t k0,
                                              int64_t pitch, int lead) {
  if (lead == 0)
    return rows;
  const int64_t run = k0 * pitch, runs = static_cast<int64_t>(rows.size()) / run;
  std::vector<float> led(static_cast<size_t>(runs * (run + lead * pitch)), 0.0f);
  for (int64_t r = 0; r < runs; ++r) {
    std::copy(rows.begin() + r * run, rows.begin() + (r + 1) * run,
              led.begin() + r * (run + lead * pitch) + lead * pitch);
  }
  return led;
}

/// Calls column(h) with the halo (cuda/tiled/tiled_halo.h) of the first tile of each column of
/// tiles of a launch on g (layout l, tiles of tile_x x block_rows outputs), then row(h) with that
/// of the first tile of each row: a tile's halo columns are set by its column of tiles, its halo
/// rows by its row. Each returns false to stop the walk; the result says whether it ran to its end.
template <typename Column, typename Row>
bool tiled_halo_lines(const kernels::Geometry& g, const kernels::TiledLayout& l, int tile_x,
                      int block_rows, Column column, Row row) {
  for (int64_t o0 = 0; o0 < g.out_extent[0]; o0 += tile_x) {
    if (!column(kernels::tiled_halo(g, l, tile_x, block_rows, o0, 0)))
      return false;
  }
  for (int64_t o1 = 0; o1 < g.out_extent[1]; o1 += block_rows) {
    if (!row(kernels::tiled_halo(g, l, tile_x, block_rows, 0, o1)))
      return false;
  }
  return true;
}

/// The largest halo (cuda/tiled/tiled_halo.h) of a tile of a bulk launch on geometry g
/// (tiled_lead_geometry's when l.lead > 0) with layout l and tiles of tile_x x block_rows outputs,
/// in elements: 0 for the zero boundary (its zeros are the copy engine's) or where no tile reads
/// outside the volume along x or axis 1. A tile's halo count is B * W + H * S, with W, S its width
/// and side columns (set by its column of tiles) and B, H its band rows and rows between (set by
/// its row of tiles): the distinct pairs of each are few, so every combination is tried.
inline int64_t tiled_halo_elements(const kernels::Geometry& g, const kernels::TiledLayout& l,
                                   int tile_x, int block_rows) {
  if (g.boundary == kernels::kZero)
    return 0;
  using Terms = std::vector<std::pair<int64_t, int64_t>>;
  auto add = [](Terms& terms, int64_t a, int64_t b) {
    if (std::find(terms.begin(), terms.end(), std::make_pair(a, b)) == terms.end())
      terms.emplace_back(a, b);
  };
  Terms columns, rows;  // (W, S) per column of tiles, (B, H) per row
  tiled_halo_lines(
      g, l, tile_x, block_rows,
      [&](const kernels::TiledHalo& h) {
        add(columns, h.width(), h.side_columns());
        return true;
      },
      [&](const kernels::TiledHalo& h) {
        add(rows, h.band_rows(), h.bottom - h.top);
        return true;
      });
  int64_t most = 0;
  for (const auto& [width, side] : columns) {
    for (const auto& [band, between] : rows)
      most = std::max(most, band * width + between * side);
  }
  return most;
}

/// Halo elements per thread (`threads` per block) of that launch: 0 where it has no halo, -1 where
/// the halo cannot serve it (more than `max_slots`, Tuning::tiled_max_halo_slots, or in-plane
/// offsets past 32 bits).
inline int tiled_halo_slots(const kernels::Geometry& g, const kernels::TiledLayout& l, int tile_x,
                            int block_rows, int threads, int max_slots) {
  const int64_t elements = tiled_halo_elements(g, l, tile_x, block_rows);
  if (elements == 0)
    return 0;
  if ((g.in_extent[0] - 1) * g.in_stride[0] + (g.in_extent[1] - 1) * g.in_stride[1] > INT32_MAX)
    return -1;
  const int64_t slots = (elements + threads - 1) / threads;
  return slots > max_slots ? -1 : static_cast<int>(slots);
}

/// Whether every halo element (cuda/tiled/tiled_halo.h) of a bulk launch on g (layout l, tiles of
/// tile_x x block_rows outputs) takes its value from an element inside the volume that its own
/// tile's plane box holds: so for replicate, mirror and reflect (the values at a face repeat
/// those just inside it), and for periodic only where a tile spans the volume. Checked per tile
/// column along x and per tile row along axis 1 (the box's columns and rows: l.pitch x l.rows from
/// the tile's first input column and row).
inline bool tiled_halo_local(const kernels::Geometry& g, const kernels::TiledLayout& l, int tile_x,
                             int block_rows) {
  if (g.boundary == kernels::kZero)
    return false;
  // Whether the halo indices [from, to) along `axis` from `first` on read inside [first, first +
  // box).
  auto inside = [&](int axis, int64_t first, int from, int to, int box) {
    for (int c = from; c < to; ++c) {
      const int64_t m = kernels::boundary_index_hd(first + c, g.in_extent[axis], g.boundary);
      if (m < first || m >= first + box)
        return false;
    }
    return true;
  };
  return tiled_halo_lines(
      g, l, tile_x, block_rows,
      [&](const kernels::TiledHalo& h) {
        return inside(0, h.x_first, h.lead, h.left, l.pitch) &&
               inside(0, h.x_first, h.right, h.columns, l.pitch);
      },
      [&](const kernels::TiledHalo& h) {
        return inside(1, h.y_first, 0, h.top, l.rows) &&
               inside(1, h.y_first, h.bottom, h.rows, l.rows);
      });
}

/// The opposite faces' boxes (kernels::TiledHaloMode::kWrap, cuda/tiled/tiled_halo.h) that a bulk
/// launch on g (layout l, tiles of tile_x x block_rows outputs) needs for the periodic boundary:
/// the side box's columns (from its first, a multiple of 4, through the last wrapped column of any
/// tile's halo) and the band box's rows (the widest band); {0, 0} where the wrap boxes cannot
/// serve: another boundary, a tile with a halo at both faces of an axis, a halo that wraps more
/// than once, or a box edge past the copy engine's 256 elements. A tile's halo (kernels::
/// tiled_halo) lies left of the volume exactly where kernels::tiled_wrap says its box crosses the
/// left face (the first multiplied column), and right of it only where it says the right (it tests
/// the whole box, of which a partial tile's halo reads less); the same along axis 1.
inline kernels::TiledWrapExtent tiled_wrap_extent(const kernels::Geometry& g,
                                                  const kernels::TiledLayout& l, int tile_x,
                                                  int block_rows) {
  if (g.boundary != kernels::kPeriodic)
    return {};
  const int64_t n0 = g.in_extent[0], n1 = g.in_extent[1];
  int64_t columns = 4, rows = 1;
  const bool fits = tiled_halo_lines(
      g, l, tile_x, block_rows,
      [&](const kernels::TiledHalo& h) {
        const int64_t first = h.x_first + h.lead, end = h.x_first + h.columns;
        const bool left = h.left > h.lead, right = h.right < h.columns;
        if ((left && right) || first + n0 < 0 || end - n0 > n0)
          return false;
        if (left)
          columns = std::max(columns, n0 - (first + n0) / 4 * 4);
        if (right)
          columns = std::max(columns, end - n0);
        return true;
      },
      [&](const kernels::TiledHalo& h) {
        const int64_t first = h.y_first, end = h.y_first + h.rows;
        const bool top = h.top > 0, bottom = h.bottom < h.rows;
        if ((top && bottom) || first + n1 < 0 || end - n1 > n1)
          return false;
        rows = std::max(rows, top ? -first : (bottom ? end - n1 : 0));
        return true;
      });
  columns = (columns + 3) / 4 * 4;
  if (!fits || columns > kBulkBoxMax || rows > kBulkBoxMax)
    return {};
  return {static_cast<int>(columns), static_cast<int>(rows)};
}

/// Whether the tiles of a tiled launch on g with KO outputs per thread along axis 3 have one input
/// plane each (2D images, separable x passes).
inline bool tiled_one_plane_tiles(const kernels::Geometry& g, int ko) {
  return int64_t{g.filter_extent[2]} * (ko + g.filter_extent[3] - 1) == 1;
}

/// How a bulk launch on g (layout l, tiles of tile_x x block_rows outputs, KO outputs per thread
/// along axis 3) patches its face tiles' halo (cuda/tiled/tiled_halo.h): within the plane where the
/// halo's values lie in it (tiled_halo_local: no global load at all); else (periodic), where its
/// tiles have one plane (2D images, separable x passes), straight into the plane once its bulk
/// copy has landed: the wait costs once per tile, where the staging buffers' shared memory would
/// cost a block per SM and the opposite faces' boxes more copies than the fetch; else, where the
/// launch can copy those boxes (`wrap_boxes`: its tensor maps) and they serve
/// (tiled_wrap_extent), from them (a copy within shared memory instead of global loads); else
/// fetched a plane ahead into a staging buffer.
inline kernels::TiledHaloMode tiled_halo_mode(const kernels::Geometry& g,
                                              const kernels::TiledLayout& l, int tile_x,
                                              int block_rows, int ko, bool wrap_boxes) {
  if (tiled_halo_local(g, l, tile_x, block_rows))
    return kernels::TiledHaloMode::kLocal;
  if (tiled_one_plane_tiles(g, ko))
    return kernels::TiledHaloMode::kDirect;
  if (wrap_boxes && tiled_wrap_extent(g, l, tile_x, block_rows).columns > 0)
    return kernels::TiledHaloMode::kWrap;
  return kernels::TiledHaloMode::kStaged;
}

/// Layout l (l.lead set) of a bulk launch on g with tiles of tile_x x block_rows outputs and
/// `threads` threads, with `slots` halo elements per thread patched in `mode`
/// (kernels::tiled_add_halo; kWrap's boxes sized by tiled_wrap_extent).
inline void tiled_add_halo_in_mode(kernels::TiledLayout& l, const kernels::Geometry& g, int tile_x,
                                   int block_rows, int slots, int threads,
                                   kernels::TiledHaloMode mode) {
  const kernels::TiledWrapExtent wrap = mode == kernels::TiledHaloMode::kWrap
                                            ? tiled_wrap_extent(g, l, tile_x, block_rows)
                                            : kernels::TiledWrapExtent{};
  kernels::tiled_add_halo(l, g, slots, threads, mode, wrap);
}

/// Layout l (halo set: tiled_add_halo) of a launch of `grid` blocks whose tiles are tile_x x
/// block_rows outputs: deals the tiles with a halo (face tiles) evenly over the blocks. Block b
/// walks tiles b, b + grid, ..., so along the tiles_x * tiles_y positions of a chunk it steps by
/// grid mod positions; the face positions are spread evenly along each such cycle, so that the
/// tiles of any block (a run along one cycle) hold about as many face tiles as the others' (a
/// face tile or two apart, with the tile more that some blocks walk). In number order some blocks
/// hold several face tiles and others none, and those with more finish later, leaving SMs idle.
/// Tiles keep their chunk, so the tiles in flight at once are the same. Only where the positions
/// fit TiledLayout::deal and the launch has a halo.
inline void tiled_deal_face_tiles(kernels::TiledLayout& l, int tile_x, int block_rows,
                                  int64_t grid) {
  l.deal_size = 0;
  const int nx = l.tiles_x.divisor, positions = nx * l.tiles_y.divisor;
  if (l.halo_slots == 0 || positions > kernels::kTiledDealPositions || positions < 2 || grid < 1)
    return;
  auto face = [&](int position) {
    kernels::TileOrigin t{};
    t.o[0] = position % nx * tile_x;
    t.o[1] = position / nx * block_rows;
    return kernels::tiled_halo_needed(l, t);
  };
  std::vector<int> faces, inner;
  for (int p = 0; p < positions; ++p)
    (face(p) ? faces : inner).push_back(p);
  if (faces.empty() || inner.empty())
    return;
  const int step = static_cast<int>(grid % positions);
  const int cycles = std::gcd(step, positions), length = positions / cycles;
  size_t next_face = 0, next_inner = 0;
  for (int c = 0; c < cycles; ++c) {
    // This cycle's share of the faces, spread along it (Bresenham).
    const int share =
        static_cast<int>((faces.size() * (c + 1)) / cycles - (faces.size() * c) / cycles);
    for (int i = 0; i < length; ++i) {
      const int slot = static_cast<int>((c + int64_t{i} * step) % positions);
      const bool is_face = (int64_t{i + 1} * share) / length > (int64_t{i} * share) / length;
      l.deal[slot] = static_cast<unsigned char>(is_face ? faces[next_face++] : inner[next_inner++]);
    }
  }
  l.deal_size = positions;
}

/// The tiled kernel's instantiation for a separable pass: KO 1 (a pass has no second filtered
/// axis to block), 8 outputs along x per thread, the filtered axis on canonical axis 0 (x) or 1.
template <int BX, int BY>
using TiledPassShape = kernels::TiledShape<8, 1, BX, BY>;

/// Block rows of the tiled kernel for a separable pass of geometry g (32 when axis 1 has at least
/// 16 outputs, else 1, as choose_tiled_shape), or 0 when its tile does not fit in shared memory
/// (very long filters), in which case the pass falls back to the x-row or the blocked kernel.
inline int tiled_pass_rows(const kernels::Geometry& g) {
  const bool tall = g.out_extent[1] >= 16;
  const int floats = tall ? kernels::tiled_layout<TiledPassShape<4, 32>>(g).total_floats
                          : kernels::tiled_layout<TiledPassShape<128, 1>>(g).total_floats;
  if (floats * static_cast<int64_t>(sizeof(float)) > kTiledMaxSharedBytes)
    return 0;
  return tall ? 32 : 1;
}

}  // namespace ndconv::cuda_backend
