// The halo of the tiled kernel's face tiles for the boundaries other than zero. The bulk copy
// fills a plane box with zeros where it reaches past the volume in x or along axis 1 (axes 2 and 3
// pick the boundary-resolved plane, tiled_bulk_box); replicate, mirror and periodic need the
// boundary's values there. Four ways, one per launch (TiledHaloMode):
//   - local: the value of each halo element lies in the plane box itself (replicate and mirror
//     repeat the elements just inside the face; the launcher checks it, tiled_halo_local), so once
//     the copy has landed each thread copies its elements within the buffer (tiled_halo_copy_local)
//     before the block barrier that ends the iteration before the plane's. No global load at all.
//   - staged (periodic, several planes per tile): the elements of a plane are fetched a plane
//     ahead (asynchronous copies into a staging buffer, while the plane before is computed) and
//     written over the copy's zeros once it has landed, before that barrier.
//   - direct (periodic, one plane per tile): there is no plane to fetch during; the elements go
//     straight into the plane after its copy has landed.
//   - wrap (periodic, where each face tile wraps around one x face and one axis-1 face at most,
//     once): the halo's values lie in the opposite faces, so the thread that issues a face tile's
//     plane copy also issues copies of those faces' boxes into the plane buffer, beside the plane
//     box (a side box of the opposite x face's columns, a band box of the opposite axis-1 face's
//     rows, a corner box for both; tiled_wrap), on the same barrier; then each thread copies its
//     elements within the buffer as the local way does (tiled_halo_copy_local).
//
// Why: rewriting the halo from global memory after the copy landed puts a global load's latency
// into every plane of a face tile; padding the input first costs one read and one write of the
// volume, and a second kernel for the face shell's missing terms costs a launch and its staging.
// Staged, the halo costs instructions but no waiting (its fetch and staging per face-tile plane
// and warp); local, only a copy within shared memory, the cheapest. Periodic staged stays well
// behind replicate and mirror even with the face tiles dealt evenly over the blocks: hence the
// wrap boxes, which give periodic the local copy.
//
// Design: a tile's halo is the plane elements (r, c) that the tile's existing outputs read (rows
// r < rows, columns lead <= c < columns; lead columns are never multiplied, tiled_lead_geometry)
// outside the volume along x or axis 1: whole rows above and below the volume (bands), and the
// columns left and right of it on the rows between (sides). Thread tid owns elements tid + k *
// threads, k < l.halo_slots; when a tile starts, it lists each one's tile offset and its source
// (local: the tile offset of the element holding its value; else its in-plane input offset,
// boundary resolved) in shared memory (tiled_halo_list), so that each plane costs one shared copy
// per element (local) or one asynchronous copy (tiled_halo_fetch) and one shared copy
// (tiled_halo_patch). Each thread patches only its own elements, so no barrier separates fetch and
// patch; the iteration's barrier publishes the patch.
#pragma once

#include <cstdint>

#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "cuda/tiled/tiled_thread.h"

namespace ndconv::kernels {

/// The halo of one block tile of a plane box (its first column and row at x_first, y_first).
struct TiledHalo {
  int rows;         ///< rows the tile's existing outputs read
  int columns;      ///< columns they read (lead columns included)
  int lead;         ///< columns before `lead` are never multiplied
  int top, bottom;  ///< rows [top, bottom) lie inside the volume along axis 1
  int left, right;  ///< columns [left, right) lie inside along x (lead <= left <= right)
  int64_t x_first, y_first;

  NDCONV_HD int width() const { return columns - lead; }
  NDCONV_HD int band_rows() const { return top + rows - bottom; }
  NDCONV_HD int side_columns() const { return left - lead + columns - right; }
  NDCONV_HD int count() const { return band_rows() * width() + (bottom - top) * side_columns(); }

  /// Halo element e < count(): its row r and column c in the tile.
  NDCONV_HD void element(int e, int& r, int& c) const {
    const int band = band_rows() * width();
    if (e < band) {
      const int i = e / width();
      r = i < top ? i : bottom + (i - top);
      c = lead + e % width();
      return;
    }
    const int side = side_columns(), before = left - lead;
    const int i = (e - band) / side, k = (e - band) % side;
    r = top + i;
    c = k < before ? lead + k : right + (k - before);
  }
};

/// The halo of the tile whose first output is (o0, o1) in a launch with tiles of tile_x x
/// block_rows outputs on geometry g (tiled_lead_geometry's when lead > 0) and layout l.
NDCONV_HD TiledHalo tiled_halo(const Geometry& g, const TiledLayout& l, int tile_x, int block_rows,
                               int64_t o0, int64_t o1) {
  TiledHalo h;
  const int64_t outputs0 = g.out_extent[0] - o0, outputs1 = g.out_extent[1] - o1;
  h.columns = static_cast<int>(outputs0 < tile_x ? outputs0 + g.filter_extent[0] - 1 : l.columns);
  h.rows = static_cast<int>(outputs1 < block_rows ? outputs1 + g.filter_extent[1] - 1 : l.rows);
  h.lead = l.lead;
  h.x_first = o0 + g.offset[0];
  h.y_first = o1 + g.offset[1];
  h.top = tiled_clamp(-h.y_first, 0, h.rows);
  h.bottom = tiled_clamp(g.in_extent[1] - h.y_first, h.top, h.rows);
  h.left = tiled_clamp(-h.x_first, h.lead, h.columns);
  h.right = tiled_clamp(g.in_extent[0] - h.x_first, h.left, h.columns);
  return h;
}

/// The tensor maps of a tiled launch's bulk copies (tensor_map.h): the input with boxes of a plane
/// tile (l.pitch x l.rows), of the side and corner boxes (l.wrap_columns x l.rows) and of the band
/// box (l.pitch x l.wrap_rows) of a kWrap launch (unused otherwise). A __grid_constant__ kernel
/// parameter: the copy instruction reads each map from the parameter space.
struct alignas(64) TiledMaps {
  TensorMap plane;
  TensorMap side;
  TensorMap band;
};

/// The opposite faces' boxes of tile t of a kWrap launch: which x face (-1 left, +1 right, 0 none)
/// and axis-1 face the tile's plane box crosses (its columns from the first multiplied one,
/// l.lead, to l.columns, and its l.rows rows: as tiled_halo_needed tests them), the first column
/// of the side and corner boxes (the wrapped columns' 16-byte boundary, as the copy engine needs),
/// and the first rows of the band box (the wrapped band rows) and of the corner box (the tile's
/// first row, wrapped: tile row r is the corner box's row r, as it is the side box's, which starts
/// at the tile's first row). The host checks that no tile's halo lies at both faces of an axis and
/// that one wrap reaches every halo element (cuda_backend::tiled_wrap_extent). 32-bit:
/// tiled_index_fits.
struct TiledWrap {
  int x_face, y_face;
  int side_x;
  int band_y;
  int corner_y;
};

/// The side box's first column for a tile whose first multiplied column `first` lies left of a
/// volume n0 columns wide: the wrapped column's 16-byte boundary.
NDCONV_HD int tiled_wrap_side_x(int64_t first, int64_t n0) {
  return static_cast<int>((first + n0) / 4 * 4);
}

NDCONV_HD TiledWrap tiled_wrap(const Geometry& g, const TiledLayout& l, const TileOrigin& t) {
  const int n0 = static_cast<int>(g.in_extent[0]), n1 = static_cast<int>(g.in_extent[1]);
  const int x_first = t.o[0] + static_cast<int>(g.offset[0]);
  const int y_first = t.o[1] + static_cast<int>(g.offset[1]);
  TiledWrap w;
  w.x_face = x_first + l.lead < 0 ? -1 : (x_first + l.columns > n0 ? 1 : 0);
  w.y_face = y_first < 0 ? -1 : (y_first + l.rows > n1 ? 1 : 0);
  w.side_x = w.x_face < 0 ? tiled_wrap_side_x(x_first + l.lead, n0) : 0;
  w.band_y = w.y_face < 0 ? y_first + n1 : 0;
  w.corner_y = y_first - w.y_face * n1;
  return w;
}

/// Where the opposite faces' boxes hold the values of tile halo h's elements (the boxes as
/// tiled_wrap places them, one wrap away): a side or corner box column is the tile column plus
/// side_shift, a band box row the tile row less band_row0.
struct TiledWrapSource {
  int side_shift;
  int band_row0;
};

NDCONV_HD TiledWrapSource tiled_wrap_source_of(const TiledHalo& h, int64_t n0) {
  TiledWrapSource w;
  if (h.left > h.lead)  // the side box from the wrapped columns' 16-byte boundary
    w.side_shift = static_cast<int>(h.x_first + n0 - tiled_wrap_side_x(h.x_first + h.lead, n0));
  else  // from column 0
    w.side_shift = static_cast<int>(h.x_first - n0);
  w.band_row0 = h.top > 0 ? 0 : h.bottom;
  return w;
}

/// Where in the plane buffer (from its first float) the value of halo element (r, c) of tile halo h
/// lies (w: tiled_wrap_source_of): the side box for a column outside the volume on a row inside,
/// the band box for a row outside on a column inside, the corner box for both. In 32 bits from the
/// tile's own ranges: with the boundary-resolved 64-bit indices the list took more registers than
/// the KO 1 x TX 8 shapes have (ptxas spilled at their 64-register cap).
NDCONV_HD int tiled_wrap_source(const TiledLayout& l, const TiledHalo& h, const TiledWrapSource& w,
                                int r, int c) {
  const bool column_inside = c >= h.left && c < h.right;
  const bool row_inside = r >= h.top && r < h.bottom;
  if (column_inside)
    return l.wrap_band + (r - w.band_row0) * l.pitch + c;
  return (row_inside ? l.wrap_side : l.wrap_corner) + r * l.wrap_columns + c + w.side_shift;
}

/// Whether a bulk launch with a halo (l.halo_slots > 0) patches the halo of tile t: some of the
/// columns or rows its FMAs read lie outside the volume (tiled_add_halo worked out the origins
/// that have none; the zero boundary has no halo slots). Block-uniform: each range as one unsigned
/// compare of differences, the two combined without a branch: far fewer instructions than the
/// geometry's 64-bit extents or four short-circuit compares.
NDCONV_HD bool tiled_halo_needed(const TiledLayout& l, const TileOrigin& t) {
  auto outside = [](int o, int lo, int hi) {
    return static_cast<unsigned>(o) - static_cast<unsigned>(lo) >
           static_cast<unsigned>(hi) - static_cast<unsigned>(lo);
  };
  const bool any =
      outside(t.o[0], l.inner[0], l.inner[1]) | outside(t.o[1], l.inner[2], l.inner[3]);
  return l.halo_slots > 0 && any;
}

/// The halo region of the shared memory (`shared`: its start): with staging, the two planes'
/// staged values first; then each element's tile offset (dst) and in-plane input offset (src);
/// thread tid's slot k of each lies at k * threads + tid. Worked out from the layout where used,
/// not kept in registers across the compute phase (the KO 4 shape has none to spare).
template <typename S>
struct TiledHaloArrays {
  float* shared;
  const TiledLayout& l;

  NDCONV_HD float* values(int b) const {
    return shared + l.halo_offset + b * l.halo_slots * S::kThreads;
  }
  NDCONV_HD int* dst() const {
    return reinterpret_cast<int*>(shared + l.halo_offset +
                                  2 * l.halo_staged * l.halo_slots * S::kThreads);
  }
  NDCONV_HD int* src() const { return dst() + l.halo_slots * S::kThreads; }
};

/// When tile t starts (before its first plane's fetch): thread tid lists its halo elements, a
/// tile offset of -1 for a slot it does not fill, and each one's source: with wrap boxes
/// (l.halo_wrap), its offset in the plane buffer's boxes (tiled_wrap_source); else local
/// (l.halo_local), the tile offset of the element inside the volume that holds its value, which
/// the launcher checked lies in the tile's plane box (tiled_halo_local); else its in-plane input
/// offset, which fits in 32 bits (tiled_halo_slots checks).
template <typename S>
NDCONV_HD void tiled_halo_list(const Geometry& g, const TiledLayout& l, const TileOrigin& t,
                               float* shared, int tid) {
  const TiledHaloArrays<S> a{shared, l};
  int* const dst = a.dst();
  int* const src = a.src();
  const TiledHalo h = tiled_halo(g, l, S::kTileX, S::BY, t.o[0], t.o[1]);
  const TiledWrapSource w = tiled_wrap_source_of(h, g.in_extent[0]);
  const int count = h.count();
  for (int k = 0; k < l.halo_slots; ++k) {
    const int e = k * S::kThreads + tid;
    int r = 0, c = 0;
    if (e < count)
      h.element(e, r, c);
    dst[e] = e < count ? r * l.pitch + c : -1;
    if (l.halo_wrap) {
      src[e] = tiled_wrap_source(l, h, w, r, c);
      continue;
    }
    const int64_t m0 = boundary_index_hd(h.x_first + c, g.in_extent[0], g.boundary);
    const int64_t m1 = boundary_index_hd(h.y_first + r, g.in_extent[1], g.boundary);
    src[e] = static_cast<int>(l.halo_local ? (m1 - h.y_first) * l.pitch + (m0 - h.x_first)
                                           : m0 * g.in_stride[0] + m1 * g.in_stride[1]);
  }
}

/// Load phase 3 with the bulk copy (one thread issues it): input plane (j2, s) of tile t, the box
/// of tiled_bulk_box with l.pitch columns (those past l.columns are read by the window loads but
/// never multiplied) and l.rows rows, into `tile`, and for a face tile of a kWrap launch the
/// opposite faces' boxes of the same plane beside it (tiled_wrap); all complete on `barrier`.
/// The host form (the emulation) copies the boxes itself, with zeros outside the volume, as the
/// copy engine does.
template <typename S>
NDCONV_HD void tiled_bulk_load_plane(const Geometry& g, const TiledLayout& l, const TiledMaps& maps,
                                     const float* in, float* tile, uint64_t* barrier,
                                     const TileOrigin& t, int j2, int s) {
  int c[4];
  tiled_bulk_box(g, t, j2, s, c);
  const int plane_bytes = l.pitch * l.rows * static_cast<int>(sizeof(float));
  if (!l.halo_wrap || !tiled_halo_needed(l, t)) {
#ifdef __CUDA_ARCH__
    // No proxy fence here: the threads' reads of this buffer come first by the block barrier
    // before (as a CUTLASS producer refills a stage its consumers released), and the threads that
    // wrote into it (the halo) fenced their writes themselves.
    (void)in;
    bulk_copy_box(maps.plane, c, tile, barrier, plane_bytes);
#else
    (void)maps, (void)barrier, (void)plane_bytes;
    bulk_copy_box_host(g, in, c, l.pitch, l.rows, tile);
#endif
    return;
  }
  const TiledWrap w = tiled_wrap(g, l, t);
  const int side_bytes = l.wrap_side_bytes, band_bytes = l.wrap_band_bytes;
  const int side[4] = {w.side_x, c[1], c[2], c[3]};
  const int band[4] = {c[0], w.band_y, c[2], c[3]};
  const int corner[4] = {w.side_x, w.corner_y, c[2], c[3]};
#ifdef __CUDA_ARCH__
  (void)in;
  bulk_expect(barrier, plane_bytes + (w.x_face != 0) * side_bytes + (w.y_face != 0) * band_bytes +
                           (w.x_face != 0 && w.y_face != 0) * side_bytes);
  bulk_copy_box_on(maps.plane, c, tile, barrier);
  if (w.x_face != 0)
    bulk_copy_box_on(maps.side, side, tile + l.wrap_side, barrier);
  if (w.y_face != 0)
    bulk_copy_box_on(maps.band, band, tile + l.wrap_band, barrier);
  if (w.x_face != 0 && w.y_face != 0)
    bulk_copy_box_on(maps.side, corner, tile + l.wrap_corner, barrier);
#else
  (void)maps, (void)barrier, (void)side_bytes, (void)band_bytes;
  bulk_copy_box_host(g, in, c, l.pitch, l.rows, tile);
  if (w.x_face != 0)
    bulk_copy_box_host(g, in, side, l.wrap_columns, l.rows, tile + l.wrap_side);
  if (w.y_face != 0)
    bulk_copy_box_host(g, in, band, l.pitch, l.wrap_rows, tile + l.wrap_band);
  if (w.x_face != 0 && w.y_face != 0)
    bulk_copy_box_host(g, in, corner, l.wrap_columns, l.rows, tile + l.wrap_corner);
#endif
}

/// Fetches the listed halo elements of plane (j2, s) of tile t (asynchronous copies, one group):
/// staged, into staging buffer b (tiled_halo_patch puts them in place); direct, into `tile`,
/// whose bulk copy must have landed (the caller completes the copies). Indices in 32 bits
/// (tiled_index_fits).
template <typename S>
NDCONV_HD void tiled_halo_fetch(const Geometry& g, const TiledLayout& l, const float* in,
                                float* shared, const TileOrigin& t, int j2, int s, int b,
                                float* tile, int tid) {
  const TiledHaloArrays<S> a{shared, l};
  const int i2 = boundary_index_t<int>(t.o[2] + static_cast<int>(g.offset[2]) + j2,
                                       static_cast<int>(g.in_extent[2]), g.boundary);
  const int i3 = boundary_index_t<int>(t.o[3] + static_cast<int>(g.offset[3]) + s,
                                       static_cast<int>(g.in_extent[3]), g.boundary);
  const float* plane = in + i2 * g.in_stride[2] + i3 * g.in_stride[3];
  float* const values = a.values(b);
  const int* const dst = a.dst();
  const int* const src = a.src();
  for (int k = 0; k < l.halo_slots; ++k) {
    const int e = k * S::kThreads + tid;
    const int at = dst[e];
    if (at >= 0)
      tiled_copy_valid(l.halo_staged ? values + e : tile + at, plane + src[e]);
  }
  tiled_commit();
}

/// After the bulk copy of the plane in `tile` (buffer b) has landed: this thread's staged halo
/// elements over the copy's zeros. A block barrier must follow before the compute phase.
template <typename S>
NDCONV_HD void tiled_halo_patch(const TiledLayout& l, float* shared, float* tile, int b, int tid) {
  const TiledHaloArrays<S> a{shared, l};
  tiled_wait(0);  // this thread's fetch of the plane has landed
  const float* const values = a.values(b);
  const int* const dst = a.dst();
  for (int k = 0; k < l.halo_slots; ++k) {
    const int e = k * S::kThreads + tid;
    const int at = dst[e];
    if (at >= 0)
      tile[at] = values[e];
  }
  bulk_fence_shared();  // these writes come before the copy engine refills the buffer
}

/// Local (l.halo_local), after the bulk copy of the plane in `tile` has landed: this thread's
/// halo elements from the elements of the plane that hold their values (inside the volume, so
/// never another's halo element: the threads' copies are independent). A thread's filled slots
/// come first (tiled_halo_list), so the first empty one ends its list. A block barrier must
/// follow before the compute phase.
template <typename S>
NDCONV_HD void tiled_halo_copy_local(const TiledLayout& l, float* shared, float* tile, int tid) {
  const TiledHaloArrays<S> a{shared, l};
  const int* const dst = a.dst() + tid;
  const int* const src = a.src() + tid;
  NDCONV_NO_UNROLL
  for (int k = 0; k < l.halo_slots; ++k) {
    const int at = dst[k * S::kThreads];
    if (at < 0)
      break;
    tile[at] = tile[src[k * S::kThreads]];
  }
}

/// Direct and local halos (not staged): plane (j2, s) of tile t, whose bulk copy completes phase
/// `parity` of `barrier`, patched in `tile` once the copy has landed; the tile's elements listed
/// first if the plane is its first.
template <typename S>
NDCONV_HD void tiled_halo_patch_unstaged(const Geometry& g, const TiledLayout& l, const float* in,
                                         float* shared, float* tile, uint64_t* barrier,
                                         unsigned parity, const TileOrigin& t, int j2, int s,
                                         int tid) {
  if (j2 == 0 && s == 0)
    tiled_halo_list<S>(g, l, t, shared, tid);
  bulk_wait(barrier, parity);
  if (l.halo_local) {
    tiled_halo_copy_local<S>(l, shared, tile, tid);
  } else {
    tiled_halo_fetch<S>(g, l, in, shared, t, j2, s, 0, tile, tid);
    tiled_wait(0);
  }
  bulk_fence_shared();  // these writes come before the copy engine refills the buffer
}

/// The halo code a tiled kernel is compiled with (tiled_kernel's H). kAny: every halo mode,
/// chosen per launch from the layout (the dispatch table's kernels), the face tiles' halo patched
/// by a walk that tests every plane of every tile (tiled_halo_advance). kNone: launches without a
/// halo (zero boundary, padded input, border kernel), no halo code at all. kWithin: launches whose
/// halo is copied within the plane buffer (local or wrap; tiled_halo_copy_local): whether the
/// tile has a halo is worked out once per tile, its first plane patched when the tile starts and
/// the others at the end of the iteration before theirs (tiled_halo_patch_within), so a tile
/// without one spends nothing on it. The fixed-row kernels come in kNone and kWithin forms: with
/// one kernel for both, every plane of every tile of a launch with a halo spends instructions on
/// the walk's tests, and cutting them in that kernel re-schedules the zero launch's plane loop.
enum class TiledHaloCode { kAny, kNone, kWithin };

/// Whether a kernel compiled with halo code H serves layout l with plane loads `loads`
/// (TiledPlaneLoads).
template <TiledHaloCode H>
NDCONV_HD bool tiled_halo_code_fits(const TiledLayout& l, int loads) {
  if constexpr (H == TiledHaloCode::kNone)
    return l.halo_slots == 0;
  if constexpr (H == TiledHaloCode::kWithin)
    return loads == kTiledBulk && l.halo_slots > 0 && l.halo_local && !l.halo_staged;
  return true;
}

/// kWithin: a face tile's next plane, in `tile` (phase `parity` of `barrier`), at the end of the
/// iteration on the plane before it: thread tid's listed elements copied within the plane once
/// its copy has landed. The block barrier that ends the iteration publishes them.
template <typename S>
NDCONV_HD void tiled_halo_patch_within(const TiledLayout& l, float* shared, float* tile,
                                       uint64_t* barrier, unsigned parity, int tid) {
  bulk_wait(barrier, parity);
  tiled_halo_copy_local<S>(l, shared, tile, tid);
  bulk_fence_shared();  // these writes come before the copy engine refills the buffer
}

/// kWithin: a face tile's first plane, in `tile` (its bulk copy completes phase `parity` of
/// `barrier`) once the tile starts: thread tid lists its halo elements, then patches the plane as
/// tiled_halo_patch_within does. A block barrier must follow before the compute phase.
template <typename S>
NDCONV_HD void tiled_halo_start_within(const Geometry& g, const TiledLayout& l, const TileOrigin& t,
                                       float* shared, float* tile, uint64_t* barrier,
                                       unsigned parity, int tid) {
  tiled_halo_list<S>(g, l, t, shared, tid);
  tiled_halo_patch_within<S>(l, shared, tile, barrier, parity, tid);
}

/// Plane (j2, s) of a tile, s < per_slice, stepped on by one; false when it passes the tile's last
/// (it is then the next tile's first).
NDCONV_HD bool tiled_next_plane(int& j2, int& s, int per_slice, int slices) {
  if (++s == per_slice) {
    s = 0;
    if (++j2 == slices) {
      j2 = 0;
      return false;
    }
  }
  return true;
}

/// At the end of the block's iteration on the plane before plane A = (j2, s) of tile `tile`
/// (origin t; j2 == K2 stands for the next tile's first plane), all threads, with halo slots: A's
/// halo is patched once its bulk copy (buffer step & 1) has landed. Staged, from the staging buffer
/// it was fetched into an iteration earlier, and the halo of the plane after A is fetched into the
/// other, listing its tile's elements first if it starts a tile; direct, A's tile listed if A
/// starts it and its halo fetched straight into the buffer, then completed; local, the same but
/// copied within the buffer. The block barrier that ends the iteration publishes the patch. Face
/// tiles alone have a halo.
template <typename S>
NDCONV_HD void tiled_halo_advance(const Geometry& g, const TiledLayout& l, const float* in,
                                  float* shared, float* tile0, uint64_t* barriers,
                                  const TileOrigin& t, int grid, int tile, int j2, int s,
                                  unsigned step, int tid) {
  const int per_slice = tiled_slice_planes<S>(g), slices = g.filter_extent[2];
  const int a = step & 1;
  float* const tile_a = tile0 + a * l.tile_floats;
  if (!l.halo_staged) {
    // Most planes: A in this tile, which most often has no halo (two compares, no copy of t).
    if (j2 < slices) {
      if (tiled_halo_needed(l, t)) {
        tiled_halo_patch_unstaged<S>(g, l, in, shared, tile_a, &barriers[a], (step >> 1) & 1u, t,
                                     j2, s, tid);
      }
      return;
    }
    tile += grid;  // A is the next tile's first plane
    if (tile >= l.tiles)
      return;
    const TileOrigin next = tiled_origin<S>(l, tile);
    if (tiled_halo_needed(l, next)) {
      tiled_halo_patch_unstaged<S>(g, l, in, shared, tile_a, &barriers[a], (step >> 1) & 1u, next,
                                   0, 0, tid);
    }
    return;
  }
  TileOrigin ta = t;
  if (j2 == slices) {  // A is the next tile's first plane
    tile += grid;
    if (tile >= l.tiles)
      return;
    ta = tiled_origin<S>(l, tile);
    j2 = 0;
  }
  if (tiled_halo_needed(l, ta)) {
    bulk_wait(&barriers[a], (step >> 1) & 1u);
    tiled_halo_patch<S>(l, shared, tile_a, a, tid);
  }
  if (!tiled_next_plane(j2, s, per_slice, slices)) {  // B is the first plane of A's next tile
    tile += grid;
    if (tile >= l.tiles)
      return;
    ta = tiled_origin<S>(l, tile);
  }
  if (tiled_halo_needed(l, ta)) {
    if (j2 == 0 && s == 0)
      tiled_halo_list<S>(g, l, ta, shared, tid);  // after this thread's patch of A
    tiled_halo_fetch<S>(g, l, in, shared, ta, j2, s, a ^ 1, nullptr, tid);
  }
}

}  // namespace ndconv::kernels
