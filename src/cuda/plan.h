// Host-side planning of the CUDA backend, free of CUDA so that the CI tests use it too: rewriting a
// CorrelationProblem or one separable pass onto the kernels' canonical axes (kernels/geometry.h),
// laying out the taps by rows along the blocked axis, and ordering the separable passes over their
// buffers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "cuda/tensor_map.h"
#include "engine/problem.h"
#include "cuda/border/border_thread.h"
#include "kernels/geometry.h"
#include "kernels/column_thread.h"
#include "cuda/border/pad_thread.h"
#include "kernels/tiled_halo.h"
#include "kernels/tiled_thread.h"

namespace ndconv::cuda_backend {

/// Original axis for each canonical slot (-1: a unit axis): the axes other than `blocked` in
/// memory order, unit axes, then `blocked` in slot 3. With blocked = -1 (the x-row kernel), x
/// takes slot 0 and the others follow: [0, 1, 2, 3] with unit slots at the end.
inline std::array<int, kernels::kAxes> canonical_order(int dims, int blocked) {
  std::array<int, kernels::kAxes> order{-1, -1, -1, -1};
  int slot = 0;
  for (int a = 0; a < dims; ++a) {
    if (a != blocked)
      order[slot++] = a;
  }
  if (blocked >= 0)
    order[kernels::kAxes - 1] = blocked;
  return order;
}

/// The canonical geometry of a correlation from `in` to `out` (strides in elements, as given)
/// with `filter_extent` and `offset` per original axis. Taps fields are left for the caller.
template <typename In, typename Out>
kernels::Geometry make_geometry(const In& in, const Out& out, const Index& filter_extent,
                                const Index& offset, Boundary boundary,
                                const std::array<int, kernels::kAxes>& order) {
  kernels::Geometry g{};
  for (int s = 0; s < kernels::kAxes; ++s) {
    const int a = order[s];
    g.in_extent[s] = a < 0 ? 1 : in.extent[a];
    g.in_stride[s] = a < 0 ? 0 : in.stride[a];
    g.out_extent[s] = a < 0 ? 1 : out.extent[a];
    g.out_stride[s] = a < 0 ? 0 : out.stride[a];
    g.filter_extent[s] = a < 0 ? 1 : static_cast<int>(filter_extent[a]);
    g.offset[s] = a < 0 ? 0 : offset[a];
  }
  g.boundary = static_cast<int>(boundary);
  return g;
}

/// Geometry of a dense problem for the blocked kernel (taps at 0, laid out by dense_tap_rows).
inline kernels::Geometry dense_geometry(const detail::CorrelationProblem& p) {
  const int dims = p.input.dims;
  kernels::Geometry g = make_geometry(p.input, p.output, p.filter_extent, p.offset, p.boundary,
                                      canonical_order(dims, dims - 1));
  g.tap_base = 0;
  g.tap_pitch = g.filter_extent[3];
  return g;
}

/// The dense taps in the blocked kernel's layout: one row per combination of the filter's other
/// axes (x fastest), each holding the taps along the last axis contiguously.
inline std::vector<float> dense_tap_rows(const detail::CorrelationProblem& p) {
  const int dims = p.input.dims;
  const int64_t k_last = p.filter_extent[dims - 1];
  int64_t rows = 1;
  for (int a = 0; a + 1 < dims; ++a)
    rows *= p.filter_extent[a];
  std::vector<float> layout(static_cast<size_t>(rows * k_last));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k_last; ++j)
      layout[r * k_last + j] = p.taps[r + j * rows];
  }
  return layout;
}

/// Geometry of a dense problem for the tiled kernel (kernels/tiled_thread.h): as dense_geometry,
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

/// The padded input of a dense tiled launch (cuda/border/pad_thread.h) on geometry g, whose blocks
/// cover tile_x outputs along x and block_rows along axis 1: the columns and rows from the first
/// that any tile reads to the last, the low side padded by a multiple of 4 columns so that the
/// bulk copy's boxes keep their 16-byte alignment (and g's lead taps stay valid). `geometry`
/// reads the padded buffer: every tile's columns and rows lie inside its extents, so no tile
/// has a halo (kernels/tiled_halo.h), for any boundary.
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

/// Calls column(h) with the halo (kernels/tiled_halo.h) of the first tile of each column of tiles
/// of a launch on g (layout l, tiles of tile_x x block_rows outputs), then row(h) with that of the
/// first tile of each row: a tile's halo columns are set by its column of tiles, its halo rows by
/// its row. Each returns false to stop the walk; the result says whether it ran to its end.
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

/// The largest halo (kernels/tiled_halo.h) of a tile of a bulk launch on geometry g
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

/// Whether every halo element (kernels/tiled_halo.h) of a bulk launch on g (layout l, tiles of
/// tile_x x block_rows outputs) takes its value from an element inside the volume that its own
/// tile's plane box holds: so for replicate and mirror (the values at a face repeat those just
/// inside it), and for periodic only where a tile spans the volume. Checked per tile column along
/// x and per tile row along axis 1 (the box's columns and rows: l.pitch x l.rows from the tile's
/// first input column and row).
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

/// The opposite faces' boxes (kernels::TiledHaloMode::kWrap, kernels/tiled_halo.h) that a bulk
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
/// along axis 3) patches its face tiles' halo (kernels/tiled_halo.h): within the plane where the
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

/// Without opting in to more, a block may use 48 KiB of shared memory.
inline constexpr int kTiledMaxSharedBytes = 48 * 1024;

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

/// Which kernels serve the passes of a separable filter. kColumns (the default): the x pass fused
/// into the first other filtered axis on the column kernel (kernels/column_thread.h), the other
/// axes on the column kernel, an x-only filter on the tiled kernel. kTiledX, for a KO the column
/// kernel does not have (forced for the blocked kernel): the x pass on the tiled kernel where its
/// tile fits (else the x-row kernel), the other axes on the blocked kernel.
enum class SeparableKernels { kColumns, kTiledX };

/// The column kernel's compiled outputs per thread along the filtered axis, and its default.
inline constexpr int kColumnKos[] = {8};
inline constexpr int kColumnDefaultKo = 8;
/// The longest axis 0 or 3 (and offset) the column kernel maps in 32-bit indices.
inline constexpr int64_t kColumnMaxExtent = int64_t(1) << 29;
/// The column kernel's shapes: 4 warps (32 outputs along the filtered axis per block) for a plain
/// pass; 8 warps for the fused form, whose x filter is repeated for K3 - 1 rows per block tile
/// (80 rows filtered for 64 outputs at K3 = 17).
using ColumnPlainShape = kernels::ColumnShape<8, 4>;
using ColumnFusedShape = kernels::ColumnShape<8, 8>;
/// The staged form's shape: a tall tile as in the fused form (16 halo rows per 64 outputs).
using ColumnStagedShape = kernels::ColumnShape<8, 8>;
/// Shared memory the fused and staged forms may use (opted in; every device from sm_80 allows
/// more). Fused: 17 taps per axis take 63 KiB. Staged: two tiles, 88 KiB at 17 taps; up to
/// 112 KiB two blocks still fit an SM's 228 KiB (sm_90; 40 taps; longer filters read their
/// rows per lane, ColumnForm::kDirect).
inline int column_max_shared_bytes(kernels::ColumnForm form) {
  return (form == kernels::ColumnForm::kStaged ? 112 : 96) * 1024;
}

inline bool column_ko_compiled(int ko) {
  for (int k : kColumnKos) {
    if (k == ko)
      return true;
  }
  return false;
}

/// The column layout of pass geometry g with the 128-bit access flags for these pointers:
/// x contiguous and every row of the view (strides along axes 1-3) starting 16-byte aligned.
inline kernels::ColumnLayout column_layout_for(const kernels::Geometry& g, kernels::ColumnForm form,
                                               const float* in, const float* out) {
  kernels::ColumnLayout l =
      form == kernels::ColumnForm::kFusedX   ? kernels::column_layout<ColumnFusedShape>(g, form)
      : form == kernels::ColumnForm::kStaged ? kernels::column_layout<ColumnStagedShape>(g, form)
                                             : kernels::column_layout<ColumnPlainShape>(g, form);
  auto aligned = [](const float* base, const int64_t* stride) {
    if (stride[0] != 1 || reinterpret_cast<uintptr_t>(base) % 16 != 0)
      return false;
    for (int a = 1; a < kernels::kAxes; ++a) {
      if (stride[a] % 4 != 0)
        return false;
    }
    return true;
  };
  l.vector_in = aligned(in, g.in_stride);
  l.vector_out = aligned(out, g.out_stride);
  return l;
}

/// Whether the column kernel at `ko` can implement pass geometry g in `form` (kFusedX: x filtered
/// as well): x unit-strided is not required, but axes 1 and 2 must be unfiltered, and its shared
/// memory (taps and, staged or fused, the tile and the warps' staging buffers) must fit.
inline bool column_can_implement(const kernels::Geometry& g, int ko, kernels::ColumnForm form) {
  const bool fuse_x = form == kernels::ColumnForm::kFusedX;
  if (!column_ko_compiled(ko) || g.filter_extent[1] != 1 || g.filter_extent[2] != 1)
    return false;
  // Row and column indices are mapped in 32 bits (column_row_index), and block tiles along grid
  // z counted in 32 bits (column_origin).
  if (g.out_extent[2] * g.out_extent[3] > kColumnMaxExtent)
    return false;
  for (int a : {0, 3}) {
    if (g.in_extent[a] > kColumnMaxExtent || g.out_extent[a] > kColumnMaxExtent ||
        g.offset[a] > kColumnMaxExtent || g.offset[a] < -kColumnMaxExtent)
      return false;
  }
  if (!fuse_x && (g.filter_extent[0] != 1 || g.offset[0] != 0))
    return false;
  const kernels::ColumnLayout l = column_layout_for(g, form, nullptr, nullptr);
  return static_cast<int64_t>(l.total_floats) * static_cast<int64_t>(sizeof(float)) <=
         (form != kernels::ColumnForm::kDirect ? column_max_shared_bytes(form)
                                               : kTiledMaxSharedBytes);
}

/// Canonical order of a tiled separable pass along `axis`: x on slot 0, the filtered axis on
/// slot 1 (the tile's rows) unless it is x, the other axes in memory order, unit slots last.
inline std::array<int, kernels::kAxes> tiled_pass_order(int dims, int axis) {
  std::array<int, kernels::kAxes> order{-1, -1, -1, -1};
  int slot = 0;
  order[slot++] = 0;
  if (axis != 0)
    order[slot++] = axis;
  for (int a = 1; a < dims; ++a) {
    if (a != axis)
      order[slot++] = a;
  }
  return order;
}

/// One 1D pass of a separable filter.
struct SeparablePass {
  int axis = 0;  ///< original axis filtered
  int ko = 0;    ///< outputs per thread of the blocked kernel; 0 = an x pass
  /// Block rows of the tiled kernel (tiled_pass_rows) when it serves this pass, else 0 (the x-row
  /// kernel for x, the blocked kernel at `ko` for the others). The tiled kernel gives each thread
  /// 8 outputs along x from a shared-memory tile (128-bit shared loads, taps as broadcasts).
  int tiled_rows = 0;
  /// Outputs per thread of the column kernel when it serves this pass, else 0.
  int column_ko = 0;
  /// The column kernel's form. kFusedX: the pass filters x as well (taps along `axis`, then along
  /// x, from geometry.tap_base).
  kernels::ColumnForm column_form = kernels::ColumnForm::kDirect;
  bool fuse_x() const { return column_form == kernels::ColumnForm::kFusedX; }
  kernels::Geometry geometry{};
  int source = 0;       ///< 0: the input, 1 or 2: scratch half, 3: the output
  int destination = 0;  ///< as `source`
};

/// Buffer ids of SeparablePass::source/destination.
inline constexpr int kInputBuffer = 0, kScratchA = 1, kScratchB = 2, kOutputBuffer = 3;

struct SeparablePlan {
  std::vector<SeparablePass> passes;  ///< at least one (an identity x pass when none filters)
  std::vector<float> taps;            ///< every pass's taps, at each geometry's tap_base
  int scratch_halves = 0;             ///< scratch buffers of input-voxel-count floats needed
};

/// Orders the passes (x first, then the other axes in memory order; with kColumns x is fused into
/// the first other filtered axis), picks each pass's kernel (`kernels`; the blocked kernel's KO
/// from choose_ko(axis, output extent, taps); the column kernel's from `column_ko`, 0 for its
/// default) and ping-pongs them through scratch.
/// Intermediate volumes are contiguous; the first pass reads p.input and the last writes
/// p.output with their own strides. A column KO that is not compiled (a KO forced for the blocked
/// kernel) falls back to kTiledX.
inline SeparablePlan plan_separable(const detail::SeparableProblem& p,
                                    const std::function<int(int, int64_t, int64_t)>& choose_ko,
                                    SeparableKernels kernels = SeparableKernels::kTiledX,
                                    int column_ko = 0) {
  SeparablePlan plan;
  const int dims = p.input.dims;
  std::vector<int> axes;
  for (int a = 0; a < dims; ++a) {
    if (!p.taps[a].empty())
      axes.push_back(a);
  }
  // Nothing to filter: one identity pass along x (a single tap of 1), so that the output is still
  // written by the same code path, with its own strides.
  std::array<std::vector<float>, kMaxDims> taps = p.taps;
  if (axes.empty()) {
    axes.push_back(0);
    taps[0] = {1.0f};
  }
  if (kernels == SeparableKernels::kColumns) {
    if (column_ko == 0)
      column_ko = kColumnDefaultKo;
    if (!column_ko_compiled(column_ko))
      kernels = SeparableKernels::kTiledX;
  }
  // The passes as (axis, x fused in); the fused pass is decided below once its geometry is known.
  std::vector<std::pair<int, bool>> order;
  const bool fuse = kernels == SeparableKernels::kColumns && axes.size() >= 2 && axes[0] == 0;
  for (size_t i = fuse ? 1 : 0; i < axes.size(); ++i)
    order.push_back({axes[i], fuse && i == 1});

  Index extent = p.input.extent;  // extents of the volume the current pass reads
  // Builds pass i of `count` along order[i] into `pass` (buffers, geometry, kernel); returns false
  // when a fused pass cannot run on the column kernel (the caller then unfuses).
  auto build = [&](size_t i, size_t count, SeparablePass& pass) {
    const auto [axis, fuse_x] = order[i];
    pass = SeparablePass{};
    pass.axis = axis;
    pass.column_form = fuse_x ? kernels::ColumnForm::kFusedX : kernels::ColumnForm::kStaged;
    pass.source = i == 0 ? kInputBuffer : (i % 2 == 1 ? kScratchA : kScratchB);
    pass.destination = i == count - 1 ? kOutputBuffer : (i % 2 == 0 ? kScratchA : kScratchB);
    // The pass's input and output views: given strides at the ends, contiguous in between.
    ConstVolumeView src = i == 0 ? p.input : make_view<const float>(nullptr, dims, extent);
    Index out_extent = extent;
    out_extent[axis] = p.output.extent[axis];
    if (fuse_x)
      out_extent[0] = p.output.extent[0];
    VolumeView dst = i == count - 1 ? p.output : make_view<float>(nullptr, dims, out_extent);
    Index filter_extent{1, 1, 1, 1};
    filter_extent[axis] = static_cast<int64_t>(taps[axis].size());
    Index offset{0, 0, 0, 0};
    offset[axis] = p.offset[axis];
    if (fuse_x) {
      filter_extent[0] = static_cast<int64_t>(taps[0].size());
      offset[0] = p.offset[0];
    }
    const int k = static_cast<int>(filter_extent[axis]);
    if (kernels == SeparableKernels::kColumns && axis != 0) {
      pass.geometry =
          make_geometry(src, dst, filter_extent, offset, p.boundary, canonical_order(dims, axis));
      // A staged tile too tall for shared memory (very long filters): rows per lane instead.
      if (pass.column_form == kernels::ColumnForm::kStaged &&
          !column_can_implement(pass.geometry, column_ko, pass.column_form))
        pass.column_form = kernels::ColumnForm::kDirect;
      if (column_can_implement(pass.geometry, column_ko, pass.column_form))
        pass.column_ko = column_ko;
      else if (fuse_x)
        return false;
    }
    if (pass.column_ko == 0) {
      pass.ko = axis == 0 ? 0 : choose_ko(axis, out_extent[axis], k);
      if (axis == 0) {
        // Tap rows run along canonical axis 3, which a tiled pass does not filter: one tap per
        // row.
        pass.geometry = make_geometry(src, dst, filter_extent, offset, p.boundary,
                                      tiled_pass_order(dims, axis));
        pass.geometry.tap_pitch = 1;
        pass.tiled_rows = tiled_pass_rows(pass.geometry);
      }
      if (pass.tiled_rows == 0) {
        pass.geometry = make_geometry(src, dst, filter_extent, offset, p.boundary,
                                      canonical_order(dims, axis == 0 ? -1 : axis));
        pass.geometry.tap_pitch = k;  // the x-row kernel ignores it
      }
    }
    pass.geometry.tap_base = static_cast<int>(plan.taps.size());
    plan.taps.insert(plan.taps.end(), taps[axis].begin(), taps[axis].end());
    if (fuse_x)
      plan.taps.insert(plan.taps.end(), taps[0].begin(), taps[0].end());
    extent = out_extent;
    return true;
  };
  SeparablePass first;
  if (!build(0, order.size(), first)) {
    // The x filter is too long for the fused pass's staging buffers: x on its own pass.
    order.insert(order.begin(), {0, false});
    order[1].second = false;
    plan.taps.clear();
    extent = p.input.extent;
    build(0, order.size(), first);
  }
  plan.passes.push_back(first);
  for (size_t i = 1; i < order.size(); ++i) {
    SeparablePass pass;
    build(i, order.size(), pass);
    plan.passes.push_back(pass);
  }
  const size_t count = plan.passes.size();
  plan.scratch_halves = count >= 3 ? 2 : (count == 2 ? 1 : 0);
  return plan;
}

}  // namespace ndconv::cuda_backend
