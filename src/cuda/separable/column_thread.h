// The column pass of a separable filter: a 1D correlation along canonical axis 3 (the filtered
// axis; x stays on axis 0), optionally fused with the x pass.
//
// Why: a separable filter is bound by memory traffic, not by FMAs (17 taps per axis are 17 FMAs per
// voxel and pass, against 8 bytes moved). Three passes that each read and write the volume move 3x
// the floor, and the blocked kernel runs its y and z passes well below the copy bandwidth (one
// 4-byte load per lane, 16 outputs' accumulators limiting occupancy). Here:
//   - each thread owns kVector = 4 consecutive x (one 128-bit load or store per row) and KO
//     outputs along axis 3; a warp covers 128 consecutive x of one row, 512 contiguous bytes;
//   - the warps of a block own consecutive KO chunks of the same column, so the K - 1 rows that
//     neighbouring chunks share are read from the same SM instead of again from L2;
//   - three forms (ColumnForm) get the rows. Staged (the default for a pass that does not filter
//     x): the block copies every raw row of its tile (kTileRows + K3 - 1 rows of 128 x) into a
//     shared tile with 16-byte cp.async, so all of the tile's loads are in flight at once and
//     hold no register, then every warp runs its column pass from the tile. Blocks are about as
//     many as the device holds and walk several tiles, so the next tile's rows arrive in a second
//     tile during the column pass. Fused (kFusedX): the same with one tile, the raw rows
//     (128 + K0 - 1 columns) staged per warp, two rows per step, double buffered (by bulk
//     tensor copies where the launcher can encode a map: ColumnLayout::bulk_rows), and filtered
//     along x on the way into the tile, so x and the first other axis cost one read and one
//     write. Direct: each lane reads its rows from global memory (fewer barriers, but each warp
//     waits for every window block it loads);
//   - in the fused form a block walks the tiles of each column in order (one block along z), and
//     each tile but a column's first takes the previous tile's last K3 - 1 x-filtered rows over
//     in shared memory, so the warps filter along x (kTileRows + K3 - 1) / kTileRows times per
//     row only in a column's first tile (ColumnLayout::reuse_rows); the staging copies the chunks
//     of 4 columns inside the volume whole and maps only the columns at a face, one per lane
//     (StagedColumns, planned once per block).
//
// Arithmetic (tap-outer, as the blocked kernel): for each tap j of the K3 taps along axis 3, one
// warp-uniform tap feeds KO * 4 FMAs, acc[q][x] += t[j] * row[q + j][x]. The rows come from a
// window of 2 * KO rows that advances KO taps at a time and whose halves swap roles, so every index
// is a compile-time constant and there is no check per tap or output except in the last, partial
// tap block. No input outside an output's footprint is ever multiplied (row q + j with j < K3), so
// an Inf or NaN reaches only the outputs whose footprint holds it.
//
// Schedule: ColumnShape (KO, warps per block, x per lane of the x filter) is the only tuning; the
// form is the launch table's choice (separable_launch.cu). The phases (stage, filter,
// column pass, store) are separate NDCONV_HD functions so that the host emulation
// (tests/gpu/emulate.h) runs them in the order the barriers impose.
//
// Taps: g.tap_base holds the K3 taps along axis 3, followed (fused form) by the K0 taps along x.
#pragma once

#include "kernels/async_copy.h"
#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/row_taps.h"
#include "kernels/schedule.h"
#include "kernels/vector_access.h"

namespace ndconv::kernels {

/// Compile-time shape of the column kernel: KO outputs along axis 3 per thread, kWarps warps per
/// block, each owning the next KO chunk of the block's column.
template <int KO_, int kWarps_>
struct ColumnShape {
  static constexpr int KO = KO_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kVector = 4;  ///< consecutive x per thread (one 128-bit access)
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTileX = 32 * kVector;    ///< x per block (and per warp)
  static constexpr int kTileRows = kWarps * KO;  ///< outputs along axis 3 per block
  /// Fused form's x filter: each lane filters kFilterX consecutive x of one staged row, so a warp
  /// filters kFilterRows rows of kTileX per step (one tap read feeds 8 FMAs per tap, and the
  /// per-step overhead is paid once for two rows: with 4 x per lane the x filter issued ~95
  /// instructions per 68 FMAs).
  static constexpr int kFilterX = 8;
  static constexpr int kFilterLanes = kTileX / kFilterX;
  static constexpr int kFilterRows = 32 / kFilterLanes;
  /// Blocks per SM the compiler must allow: KO accumulators and a 2 * KO row window of 4 floats
  /// (96 floats for KO 8) fit in 65536 / (kThreads * kMinBlocks) = 128 registers.
  static constexpr int kMinBlocks = 512 / kThreads;
  static_assert(KO % 4 == 0, "KO must allow 128-bit tap reads");
};

/// Where the column pass reads its rows. kDirect: each lane from global memory (128-bit loads;
/// its latency is hidden only by other warps, and each warp waits for each window block it
/// loads). kStaged: the block first copies all raw rows of its tile into shared memory with
/// cp.async (every load of the tile in flight at once, in no register), then reads them there.
/// kFusedX: as kStaged, with the raw rows filtered along x on the way into the tile.
enum class ColumnForm { kDirect, kStaged, kFusedX };

/// The face columns per step (both raw rows) that a bulk-staged fused block can fix (its face
/// buffers' size); with more the launch stages lane by lane (column_bulk_unfit).
inline constexpr int kFaceColumns = 32;

/// Shared-memory layout of the column kernel for one geometry.
struct ColumnLayout {
  int tap_floats;    ///< axis-3 taps, zero-padded to whole blocks of KO (read KO at a time)
  int x_taps;        ///< offset of the x taps (fused form)
  int x_tap_floats;  ///< x taps padded to whole blocks of kFilterX; 0 when not fused
  int columns;       ///< raw columns staged per row (staged, fused): kTileX + K0 - 1
  int pitch;         ///< floats per staged raw row (fused: tiled_row reads past its last block)
  int rows;          ///< rows a block tile needs (staged, fused): kTileRows + K3 - 1; 0 direct
  int filtered;      ///< offset of the first tile (x-filtered or staged rows)
  int tile_floats;   ///< one tile: rows + KO read-only rows of kTileX
  int tiles;         ///< tile buffers: 2 staged (the next block tile's rows arrive meanwhile), 1
                     ///< fused, 0 direct
  int stage;         ///< offset of warp 0's staging buffers (two steps of kFilterRows raw rows)
  int stage_floats;  ///< per warp (0 when not fused)
  /// Fused form: the x-filtered rows a block tile takes over from the tile before it in the same
  /// column (column_first_staged_row, column_reuse_rows): that tile's last K3 - 1 rows are this
  /// one's first, so they are copied in shared memory instead of staged and x-filtered again: 64
  /// rows filtered per 64 outputs instead of 80 at K3 = 17. 0: none (the other forms, or
  /// K3 - 1 > kTileRows). The staged form keeps staging its raw rows: its pass is bound by
  /// memory, so taking them over gains nothing there.
  int reuse_rows;
  /// Fused form: offsets of each warp's two shared-memory barriers (bulk copies complete on them,
  /// one per staging buffer) and of its two face buffers (kFaceColumns floats each: the face
  /// columns under a boundary other than zero, which the copy engine fills with zeros).
  int barriers;
  int faces;
  int total_floats;
  /// Fused form: each step's raw rows arrive by bulk tensor copy (column_stage_bulk; set by the
  /// launcher, which holds the tensor map, where column_bulk_unfit allows).
  bool bulk_rows;
  /// 128-bit global accesses: x contiguous and every row start 16-byte aligned (set by the
  /// launcher, which knows the pointers; the kernel falls back to 4-byte accesses otherwise).
  bool vector_in;
  bool vector_out;
};

template <typename S>
NDCONV_HD ColumnLayout column_layout(const Geometry& g, ColumnForm form) {
  const bool fuse_x = form == ColumnForm::kFusedX;
  const bool tile = form != ColumnForm::kDirect;
  ColumnLayout l;
  const int k3 = g.filter_extent[3];
  l.tap_floats = (k3 + S::KO - 1) / S::KO * S::KO;
  l.x_taps = l.tap_floats;
  const int k0 = fuse_x ? g.filter_extent[0] : 1;
  constexpr int kFx = S::kFilterX;
  l.x_tap_floats = fuse_x ? (k0 + kFx - 1) / kFx * kFx : 0;  // read kFilterX at a time
  l.columns = S::kTileX + k0 - 1;
  // Fused: tiled_row over F = (K0 - 1) / kFilterX full blocks reads F + 2 blocks of kFilterX from
  // a lane's start, and the last lane starts at kTileX - kFilterX; that also covers the staging's
  // whole chunks of 4 columns. Staged: the rows go straight into the tile, at its pitch.
  // Fused rows start 128-byte aligned (a multiple of 32 floats), as the bulk copy needs.
  l.pitch = fuse_x ? (S::kTileX - kFx + ((k0 - 1) / kFx + 2) * kFx + 31) / 32 * 32 : S::kTileX;
  l.rows = tile ? S::kTileRows + k3 - 1 : 0;
  l.filtered = l.x_taps + l.x_tap_floats;
  // The window reads whole blocks of KO rows, ((K3 - 1) / KO + 2) * KO from a warp's first row,
  // up to KO rows past the last row any output uses (read, never multiplied; the staged form's
  // last step may also write one zero row there). With KO - 1 the staged form's last warp would
  // read past the end of shared memory.
  l.tile_floats = tile ? (l.rows + S::KO) * S::kTileX : 0;
  l.tiles = form == ColumnForm::kStaged ? 2 : (tile ? 1 : 0);
  l.stage = (l.filtered + l.tiles * l.tile_floats + 31) / 32 * 32;
  l.stage_floats = fuse_x ? 2 * S::kFilterRows * l.pitch : 0;
  l.reuse_rows = fuse_x && k3 - 1 <= S::kTileRows ? k3 - 1 : 0;
  l.barriers = l.stage + S::kWarps * l.stage_floats;        // 128-byte aligned
  l.faces = l.barriers + (fuse_x ? S::kWarps * 2 * 2 : 0);  // two 8-byte barriers per warp
  l.total_floats = l.faces + (fuse_x ? S::kWarps * 2 * kFaceColumns : 0);
  l.bulk_rows = false;
  l.vector_in = false;
  l.vector_out = false;
  return l;
}

/// Block tiles along each launch dimension: x tiles, axis-1 rows, (axis-2 index, axis-3 tile).
template <typename S>
NDCONV_HD void column_block_counts(const Geometry& g, int64_t counts[3]) {
  counts[0] = (g.out_extent[0] + S::kTileX - 1) / S::kTileX;
  counts[1] = g.out_extent[1];
  counts[2] = g.out_extent[2] * ((g.out_extent[3] + S::kTileRows - 1) / S::kTileRows);
}

/// A block's walk over the block tiles: from (blockIdx.y, blockIdx.z) in steps of the grid, axis 3
/// tiles inner. Moves (by, bz) to the block's next tile; false when there is none. The launcher
/// caps the grid near the blocks the device holds at once (column_launch_shape), so that a block
/// walks several tiles and the staged form can load the next tile while it filters this one.
NDCONV_HD bool column_next_tile(const int64_t counts[3], int64_t first_z, int64_t grid_y,
                                int64_t grid_z, int64_t& by, int64_t& bz) {
  bz += grid_z;
  if (bz >= counts[2]) {
    bz = first_z;
    by += grid_y;
  }
  return by < counts[1];
}

/// The first row of block tile bz that the fused form stages and x-filters (column_tiles): the
/// layout's reuse_rows when the block's previous tile was the one before it in the same column,
/// i.e. the walk visits a column's tiles in order (a grid of one block along z, see
/// column_launch_shape) and bz is not a column's first tile; else 0.
template <typename S>
NDCONV_HD int column_first_staged_row(const Geometry& g, const ColumnLayout& l, int64_t bz,
                                      int64_t grid_z) {
  const unsigned tiles3 =
      static_cast<unsigned>((g.out_extent[3] + S::kTileRows - 1) / S::kTileRows);
  return grid_z == 1 && static_cast<unsigned>(bz) % tiles3 != 0 ? l.reuse_rows : 0;
}

/// Fused form (all threads of a block, between two barriers): rows kTileRows .. kTileRows + rows
/// - 1 of the tile, the previous tile's last x-filtered rows, become rows 0 .. rows - 1 of the
/// next tile in the same column (rows <= kTileRows, so the ranges do not overlap).
template <typename S>
NDCONV_HD void column_reuse_rows(float* tile, int rows, int tid) {
  const float* from = tile + S::kTileRows * S::kTileX;
  for (int i = 4 * tid; i < rows * S::kTileX; i += 4 * S::kThreads) {
    float v[4];
    tiled_read<4>(v, from + i);
    vector_store<MemorySpace::Shared>(tile + i, v);
  }
}

/// What one lane of one warp owns in a block tile.
struct ColumnOrigin {
  int64_t tile_x;  ///< first x of the block
  int64_t x0;      ///< first of the lane's kVector outputs along x
  int64_t o1, o2;
  int64_t tile3;  ///< first output along axis 3 of the block
  int64_t o3;     ///< first of the warp's KO outputs along axis 3
  bool active;    ///< the warp has outputs (warp-uniform)
};

template <typename S>
NDCONV_HD ColumnOrigin column_origin(const Geometry& g, int64_t bx, int64_t by, int64_t bz,
                                     int warp, int lane) {
  // 32-bit division (a 64-bit one is a subroutine call): the plan keeps axis 2 x the axis-3 tiles
  // below 2^31 (kColumnMaxExtent).
  const unsigned tiles3 =
      static_cast<unsigned>((g.out_extent[3] + S::kTileRows - 1) / S::kTileRows);
  const unsigned tile = static_cast<unsigned>(bz);
  ColumnOrigin o;
  o.tile_x = bx * S::kTileX;
  o.x0 = o.tile_x + lane * S::kVector;
  o.o1 = by;
  o.o2 = tile / tiles3;
  o.tile3 = static_cast<int64_t>(tile % tiles3) * S::kTileRows;
  o.o3 = o.tile3 + warp * S::KO;
  o.active = o.o3 < g.out_extent[3];
  return o;
}

/// Load phase (all threads, once per block): the axis-3 taps and the x taps, zero-padded.
template <typename S>
NDCONV_HD void column_load_taps(const Geometry& g, const ColumnLayout& l, const float* taps,
                                float* taps_s, int tid) {
  const int k3 = g.filter_extent[3], k0 = g.filter_extent[0];
  for (int i = tid; i < l.filtered; i += S::kThreads) {
    float t = 0.0f;
    if (i < l.tap_floats) {
      if (i < k3)
        t = taps[g.tap_base + i];
    } else if (i - l.x_taps < k0) {
      t = taps[g.tap_base + k3 + (i - l.x_taps)];
    }
    taps_s[i] = t;
  }
}

/// Input index along axis 3 of input row `s` counted from `first` (an output index), boundary
/// resolved; -1 for a zero row and for rows at or past `rows` (never multiplied). In 32 bits: the
/// plan gives this kernel only extents below kColumnMaxExtent.
NDCONV_HD int column_row_index(const Geometry& g, int64_t first, int s, int rows) {
  if (s >= rows)
    return -1;
  return boundary_index_t<int>(static_cast<int>(first + g.offset[3]) + s,
                               static_cast<int>(g.in_extent[3]), g.boundary);
}

/// How column_stage copies the staged columns of a block's x tile, fixed for the block's whole walk
/// (the x tile does not change), so column_tiles computes it once per lane: the chunks of 4
/// columns wholly inside the volume along x, copied whole, and the columns of the others (at
/// either face), mapped one per lane over both staged rows, with lane `e`'s precomputed, so that
/// no step classifies its chunks (inside, outside or partial) with 64-bit compares or finds its
/// face columns again.
struct StagedColumns {
  int inner_first;   ///< first column of the inside chunks
  int inner_chunks;  ///< inside chunks per row
  int count;         ///< face columns over both rows; lanes e >= count have none
  int dst;           ///< lane e's face column: offset in the step buffer (row * pitch + column)
  int src;           ///< its source column, boundary resolved (-1: zero)
};

template <typename S>
NDCONV_HD StagedColumns staged_columns(const Geometry& g, const ColumnLayout& l, int64_t tile_x,
                                       int e) {
  const int64_t x_first = tile_x + g.offset[0];
  const int64_t n = g.in_extent[0];
  const int chunks = (l.columns + 3) / 4;
  // Chunks k_lo .. k_hi - 1 are wholly inside (x_first + 4k >= 0 and x_first + 4k + 4 <= n).
  const int64_t lo = x_first >= 0 ? 0 : (3 - x_first) / 4;
  const int64_t hi = (n - x_first) / 4;  // n > x_first: the tile starts inside the output
  const int k_lo = static_cast<int>(lo < chunks ? lo : chunks);
  const int k_hi = static_cast<int>(hi < k_lo ? k_lo : (hi > chunks ? chunks : hi));
  const int left = 4 * k_lo < l.columns ? 4 * k_lo : l.columns;  // [0, left) and [right, columns)
  const int right = 4 * k_hi > left ? 4 * k_hi : left;
  // The last inside chunk may end past l.columns (right > l.columns): the pitch has room.
  const int outside = left + (right < l.columns ? l.columns - right : 0);
  StagedColumns f;
  f.inner_first = 4 * k_lo;
  f.inner_chunks = k_hi - k_lo;
  f.count = 2 * outside;
  const bool upper = e >= outside;
  const int i = upper ? e - outside : e;
  const int c = i < left ? i : right + (i - left);
  f.dst = (upper ? l.pitch : 0) + c;
  f.src = e < f.count ? boundary_index_t<int>(static_cast<int>(x_first + c), static_cast<int>(n),
                                              g.boundary)
                      : -1;
  return f;
}

/// Stage phase of the staged and fused forms (all lanes of a warp): raw rows r .. r + 1 of the
/// block tile (input rows tile3 + offset3 + r.., columns tile_x + offset0 .. + l.columns - 1,
/// boundary resolved; rows at or past l.rows are zeros) into `buffer`, one row per l.pitch,
/// asynchronously on the GPU (tiled_commit / tiled_wait complete it). The chunks of 4 columns
/// inside the volume (see StagedColumns), one per lane: one 16-byte cp.async each when the row is
/// 16-byte aligned at the tile's first column, else four 4-byte ones; then the face columns, one
/// per lane, through the boundary. A chunk may copy up to 3 columns past l.columns: the pitch
/// leaves room for them and no tap reads them.
template <typename S>
NDCONV_HD void column_stage(const Geometry& g, const ColumnLayout& l, const float* in,
                            float* buffer, const ColumnOrigin& o, int r, int lane,
                            const StagedColumns& columns) {
  static_assert(S::kFilterRows == 2, "the staging below names its two rows");
  const int64_t x_first = o.tile_x + g.offset[0];
  const int64_t s0 = g.in_stride[0];
  const bool vector = l.vector_in && x_first % 4 == 0;
  const float* plane = in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2];
  const int i3_first = column_row_index(g, o.tile3, r, l.rows);
  const int i3_second = column_row_index(g, o.tile3, r + 1, l.rows);
  const float* first = i3_first >= 0 ? plane + i3_first * g.in_stride[3] : nullptr;
  const float* second = i3_second >= 0 ? plane + i3_second * g.in_stride[3] : nullptr;
  const float zeros[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int m = columns.inner_chunks;
  const int64_t x_inner = x_first + columns.inner_first;
  float* const inner = buffer + columns.inner_first;
  // The chunks of both rows, one per lane; `copy` moves one chunk from column x of a row. The
  // 16-byte or 4-byte choice is made once, outside the loop: inside it, the compiler issued both
  // forms' address arithmetic for every chunk, predicated.
  auto each_chunk = [&](auto copy) {
    for (int k = lane; k < 2 * m; k += 32) {
      const bool upper = k >= m;
      const int c = 4 * (upper ? k - m : k);
      float* dst = inner + (upper ? l.pitch : 0) + c;
      const float* row = upper ? second : first;
      if (row == nullptr)
        vector_store<MemorySpace::Shared>(dst, zeros);
      else
        copy(dst, row, x_inner + c);
    }
  };
  if (vector) {
    each_chunk([](float* dst, const float* row, int64_t x) { vector_copy_async(dst, row + x); });
  } else {
    each_chunk([s0](float* dst, const float* row, int64_t x) {
      NDCONV_UNROLL
      for (int e = 0; e < 4; ++e)
        tiled_copy_valid(dst + e, row + (x + e) * s0);
    });
  }
  for (int e = lane; e < columns.count; e += 32) {
    const StagedColumns f = e == lane ? columns : staged_columns<S>(g, l, o.tile_x, e);
    const float* row = f.dst >= l.pitch ? second : first;
    if (row != nullptr && f.src >= 0)
      tiled_copy_valid(buffer + f.dst, row + f.src * s0);
    else
      buffer[f.dst] = 0.0f;
  }
}

/// Fused form with bulk rows, stage phase (all lanes of a warp): raw rows r and r + 1 as
/// column_stage stages them, by two box copies of round4(l.columns) x 1 x 1 x 1 (one per row: a
/// boundary may map the two to rows that are not adjacent; a zero row reads row -1, outside) that
/// lane 0 issues on `barrier`; the copy engine fills zeros outside the volume. Under another
/// boundary lane e < columns.count (at most kFaceColumns: column_bulk_unfit) also copies its face
/// column into faces[e] (cp.async, completed by tiled_wait), which column_fix_faces puts in place
/// once the rows have landed. Why: lane-by-lane staging costs every lane its address arithmetic
/// per step, a large share of the fused pass's instructions. The host form (the emulation) copies
/// the boxes itself (bulk_copy_box_host).
template <typename S>
NDCONV_HD void column_stage_bulk(const Geometry& g, const ColumnLayout& l, const TensorMap& map,
                                 const float* in, float* buffer, float* faces, uint64_t* barrier,
                                 const ColumnOrigin& o, int r, int lane,
                                 const StagedColumns& columns) {
  static_assert(S::kFilterRows == 2, "the staging below names its two rows");
  const int box = (l.columns + 3) / 4 * 4;
  const int x_first = static_cast<int>(o.tile_x + g.offset[0]);
  const int i3[2] = {column_row_index(g, o.tile3, r, l.rows),
                     column_row_index(g, o.tile3, r + 1, l.rows)};
  if (lane == 0) {
    bulk_fence_shared();  // this buffer's reads and face writes come before the copy's writes
    bulk_expect(barrier, 2 * box * static_cast<int>(sizeof(float)));
    for (int h = 0; h < 2; ++h) {
      const int c[4] = {x_first, static_cast<int>(o.o1), static_cast<int>(o.o2), i3[h]};
#ifdef __CUDA_ARCH__
      bulk_copy_box_on(map, c, buffer + h * l.pitch, barrier);
#else
      (void)map;
      bulk_copy_box_host(g, in, c, box, 1, buffer + h * l.pitch);
#endif
    }
  }
  if (g.boundary == kZero || lane >= columns.count)
    return;
  const int i = columns.dst >= l.pitch ? i3[1] : i3[0];
  if (i >= 0 && columns.src >= 0) {
    tiled_copy_valid(faces + lane, in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2] +
                                       static_cast<int64_t>(i) * g.in_stride[3] +
                                       static_cast<int64_t>(columns.src) * g.in_stride[0]);
  } else {
    faces[lane] = 0.0f;
  }
}

/// Fused form with bulk rows, after the step's rows have landed (bulk_wait) and this lane's face
/// copy has completed (tiled_wait): lane e < columns.count puts its face column in place; a warp
/// barrier must follow before the rows are read.
NDCONV_HD void column_fix_faces(const Geometry& g, float* buffer, const float* faces, int lane,
                                const StagedColumns& columns) {
  if (g.boundary != kZero && lane < columns.count)
    buffer[columns.dst] = faces[lane];
}

/// Staged form, stage phase (all lanes of warp `warp`): the warp's steps warp, warp + kWarps, ...
/// of kFilterRows raw rows of the block tile at origin `o`, straight into `tile`.
template <typename S>
NDCONV_HD void column_stage_tile(const Geometry& g, const ColumnLayout& l, const float* in,
                                 float* tile, const ColumnOrigin& o, int warp, int lane,
                                 const StagedColumns& columns) {
  const int steps = (l.rows + S::kFilterRows - 1) / S::kFilterRows;
  for (int p = warp; p < steps; p += S::kWarps)
    column_stage<S>(g, l, in, tile + p * S::kFilterRows * S::kTileX, o, p * S::kFilterRows, lane,
                    columns);
}

/// Fused form, filter phase (all lanes of a warp) with kLast taps in the last x block: lane
/// group h = lane / kFilterLanes filters staged row h (raw row r + h of the tile) along x at its
/// kFilterX outputs and stores them in row r + h of the x-filtered tile.
template <typename S, int kLast>
NDCONV_HD void column_filter_rows_last(const Geometry& g, const ColumnLayout& l,
                                       const float* buffer, const float* taps_s, float* tile, int r,
                                       int lane) {
  constexpr int kFx = S::kFilterX;
  const int h = lane / S::kFilterLanes;
  const int x = lane % S::kFilterLanes * kFx;
  if (r + h >= l.rows)
    return;
  float v[kFx];
  NDCONV_UNROLL
  for (int m = 0; m < kFx; ++m)
    v[m] = 0.0f;
  tiled_row<kFx, kLast>(v, buffer + h * l.pitch + x, taps_s + l.x_taps,
                        (g.filter_extent[0] - 1) / kFx);
  NDCONV_UNROLL
  for (int m = 0; m < kFx; m += 4)
    vector_store<MemorySpace::Shared>(tile + (r + h) * S::kTileX + x + m, v + m);
}

/// Picks column_filter_rows_last for the run-time size of the last x tap block, `last`
/// (tiled_last_block_taps<kFilterX>(K0)), counting down from kFilterX.
template <typename S, int kLast = S::kFilterX>
NDCONV_HD void column_filter_rows(int last, const Geometry& g, const ColumnLayout& l,
                                  const float* buffer, const float* taps_s, float* tile, int r,
                                  int lane) {
  if constexpr (kLast > 1) {
    if (last != kLast) {
      column_filter_rows<S, kLast - 1>(last, g, l, buffer, taps_s, tile, r, lane);
      return;
    }
  }
  column_filter_rows_last<S, kLast>(g, l, buffer, taps_s, tile, r, lane);
}

/// The lane's kVector inputs of input row i3 from global memory (zeros for i3 < 0): one 128-bit
/// load when allowed, else one load per x that exists.
template <typename S>
NDCONV_HD void column_fetch(const Geometry& g, const ColumnLayout& l, const float* in,
                            const ColumnOrigin& o, int i3, float (&v)[S::kVector]) {
  NDCONV_UNROLL
  for (int x = 0; x < S::kVector; ++x)
    v[x] = 0.0f;
  if (i3 < 0)
    return;
  const float* row = in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2] + i3 * g.in_stride[3];
  if (l.vector_in && o.x0 + S::kVector <= g.in_extent[0]) {
    vector_load_global(v, row + o.x0);
    return;
  }
  NDCONV_UNROLL
  for (int x = 0; x < S::kVector; ++x) {
    if (o.x0 + x < g.in_extent[0])
      v[x] = row[(o.x0 + x) * g.in_stride[0]];
  }
}

/// Where a lane's column pass reads its rows: directly (row s at first + s * stride, 16-byte
/// aligned) when every row the pass reads lies inside the volume (or comes from the fused form's
/// tile), else through column_fetch's per-row boundary mapping. Most warps of a large volume take
/// the direct path: an address increment per row instead of a mapped 64-bit address.
struct ColumnRows {
  const float* first;
  int64_t stride;
  bool direct;
};

template <typename S, bool kFromTile>
NDCONV_HD ColumnRows column_rows_source(const Geometry& g, const ColumnLayout& l, const float* in,
                                        const float* tile, const ColumnOrigin& o) {
  ColumnRows r;
  if constexpr (kFromTile) {
    // Tile row t is input row tile3 + offset3 + t; the warp's row s is tile row o3 - tile3 + s.
    r.first = tile + (o.o3 - o.tile3) * S::kTileX + (o.x0 - o.tile_x);
    r.stride = S::kTileX;
    r.direct = true;
  } else {
    (void)tile;
    // The window reads whole blocks of KO rows, up to one block past the last tap block.
    const int reads = ((g.filter_extent[3] - 1) / S::KO + 2) * S::KO;
    const int64_t start = o.o3 + g.offset[3];
    r.direct = l.vector_in && o.x0 + S::kVector <= g.in_extent[0] && start >= 0 &&
               start + reads <= g.in_extent[3];
    r.first = in + o.o1 * g.in_stride[1] + o.o2 * g.in_stride[2] + start * g.in_stride[3] + o.x0;
    r.stride = g.in_stride[3];
  }
  return r;
}

/// KO consecutive input rows s0 .. s0 + KO - 1 of the warp (row s is input row o3 + offset3 + s)
/// at the lane's kVector x: through `rows` (see ColumnRows) from global memory or from the fused
/// form's x-filtered tile.
template <typename S, bool kFromTile, bool kDirect>
NDCONV_HD void column_rows(const Geometry& g, const ColumnLayout& l, const float* in,
                           const ColumnRows& rows, const ColumnOrigin& o, int s0,
                           float (&w)[S::KO][S::kVector]) {
  if constexpr (kFromTile || kDirect) {
    const float* p = rows.first + s0 * rows.stride;
    NDCONV_UNROLL
    for (int r = 0; r < S::KO; ++r) {
      if constexpr (kFromTile)
        tiled_read<S::kVector>(w[r], p + r * rows.stride);
      else
        vector_load_global(w[r], p + r * rows.stride);
    }
  } else {
    const int count = S::KO + g.filter_extent[3] - 1;
    NDCONV_UNROLL
    for (int r = 0; r < S::KO; ++r)
      column_fetch<S>(g, l, in, o, column_row_index(g, o.o3, s0 + r, count), w[r]);
  }
}

/// One block of taps jb.. of the K3 taps along axis 3: acc[q] += t[jb + jj] * w[q + jj] for
/// jj < taps_left (at most KO; kPartial: the block ends the taps early), where w is the window `lo`
/// followed by `hi`.
template <typename S, bool kPartial>
NDCONV_HD void column_tap_block(float (&acc)[S::KO][S::kVector],
                                const float (&lo)[S::KO][S::kVector],
                                const float (&hi)[S::KO][S::kVector], const float* taps,
                                int taps_left) {
  constexpr int KO = S::KO;
  float t[KO];
  tiled_read<KO>(t, taps);
  NDCONV_UNROLL
  for (int jj = 0; jj < KO; ++jj) {
    if (kPartial && jj >= taps_left)
      break;
    NDCONV_UNROLL
    for (int q = 0; q < KO; ++q) {
      NDCONV_UNROLL
      for (int x = 0; x < S::kVector; ++x)
        acc[q][x] = fmaf(t[jj], q + jj < KO ? lo[q + jj][x] : hi[q + jj - KO][x], acc[q][x]);
    }
  }
}

/// Column pass (per lane) over rows read through `rows` (kDirect: rows.direct is true, so every
/// read is an address increment): the lane's KO x kVector outputs, tap-outer over a sliding
/// window whose halves swap roles (see the header).
template <typename S, bool kFromTile, bool kDirect>
NDCONV_HD void column_pass_rows(const Geometry& g, const ColumnLayout& l, const float* in,
                                const float* taps_s, const ColumnRows& rows, const ColumnOrigin& o,
                                float (&acc)[S::KO][S::kVector]) {
  constexpr int KO = S::KO;
  const int k3 = g.filter_extent[3];
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q) {
    NDCONV_UNROLL
    for (int x = 0; x < S::kVector; ++x)
      acc[q][x] = 0.0f;
  }
  float a[KO][S::kVector], b[KO][S::kVector];
  column_rows<S, kFromTile, kDirect>(g, l, in, rows, o, 0, a);
  for (int jb = 0;; jb += 2 * KO) {
    column_rows<S, kFromTile, kDirect>(g, l, in, rows, o, jb + KO, b);
    if (jb + KO >= k3) {
      column_tap_block<S, true>(acc, a, b, taps_s + jb, k3 - jb);
      return;
    }
    column_tap_block<S, false>(acc, a, b, taps_s + jb, KO);
    column_rows<S, kFromTile, kDirect>(g, l, in, rows, o, jb + 2 * KO, a);
    if (jb + 2 * KO >= k3) {
      column_tap_block<S, true>(acc, b, a, taps_s + jb + KO, k3 - jb - KO);
      return;
    }
    column_tap_block<S, false>(acc, b, a, taps_s + jb + KO, KO);
  }
}

/// Column pass (per lane): the lane's KO x kVector outputs from the tile (fused form) or from
/// global memory, directly where every row it reads is inside the volume (warp-uniform except in
/// a partial last warp along x).
template <typename S, bool kFromTile>
NDCONV_HD void column_pass(const Geometry& g, const ColumnLayout& l, const float* in,
                           const float* taps_s, const float* tile, const ColumnOrigin& o,
                           float (&acc)[S::KO][S::kVector]) {
  const ColumnRows rows = column_rows_source<S, kFromTile>(g, l, in, tile, o);
  if (kFromTile || rows.direct)
    column_pass_rows<S, kFromTile, true>(g, l, in, taps_s, rows, o, acc);
  else
    column_pass_rows<S, kFromTile, false>(g, l, in, taps_s, rows, o, acc);
}

/// Stores the lane's outputs that exist: 128-bit where allowed, else one by one.
template <typename S>
NDCONV_HD void column_store(const Geometry& g, const ColumnLayout& l, float* out,
                            const ColumnOrigin& o, const float (&acc)[S::KO][S::kVector]) {
  float* base = out + o.o1 * g.out_stride[1] + o.o2 * g.out_stride[2];
  const bool vector = l.vector_out && o.x0 + S::kVector <= g.out_extent[0];
  if (vector && o.o3 + S::KO <= g.out_extent[3]) {
    // Every output row exists (most warps): a pointer step per row, no per-row bounds check.
    float* row = base + o.o3 * g.out_stride[3] + o.x0;
    NDCONV_UNROLL
    for (int q = 0; q < S::KO; ++q, row += g.out_stride[3])
      vector_store<MemorySpace::Global>(row, acc[q]);
    return;
  }
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    if (o.o3 + q >= g.out_extent[3])
      break;
    float* row = base + (o.o3 + q) * g.out_stride[3];
    if (vector) {
      vector_store<MemorySpace::Global>(row + o.x0, acc[q]);
      continue;
    }
    NDCONV_UNROLL
    for (int x = 0; x < S::kVector; ++x) {
      if (o.x0 + x < g.out_extent[0])
        row[(o.x0 + x) * g.out_stride[0]] = acc[q][x];
    }
  }
}

/// Column kernel: blocks of S::kWarps warps over tiles of 128 x S::kWarps x S::KO outputs, tiles
/// along x on grid x, axis 1 on grid y, (axis 2, KO chunk) on grid z; dynamic shared memory for
/// the taps and, staged or fused, the tiles and the warps' staging buffers. With
/// `resident_blocks` (the blocks the device holds at once; 0: unknown) grid z and then grid y
/// shrink until the grid is about that many blocks, so that each block walks several tiles
/// (column_next_tile) and loads the next while it filters one.
template <typename S>
LaunchShape column_launch_shape(const Geometry& g, const ColumnLayout& l,
                                int64_t resident_blocks = 0) {
  int64_t counts[3];
  column_block_counts<S>(g, counts);
  LaunchShape s = grid_of_tiles(counts, S::kThreads, l.total_floats);
  if (resident_blocks > 0) {
    const int64_t per_x = std::max<int64_t>(1, resident_blocks / s.grid[0]);
    // The fused form walks each column's tiles in order, to take over the rows they share
    // (ColumnLayout::reuse_rows): one block along z.
    s.grid[2] = l.reuse_rows > 0 ? 1 : std::min(s.grid[2], per_x);
    s.grid[1] = std::min(s.grid[1], std::max<int64_t>(1, per_x / s.grid[2]));
  }
  return s;
}

}  // namespace ndconv::kernels
