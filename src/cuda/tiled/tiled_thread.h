// The tiled dense correlation: register blocking in x and along the last axis, inputs and taps
// staged in shared memory. Each thread owns a TX x KO tile of outputs (TX consecutive x, KO
// consecutive positions along canonical axis 3, one index of axes 1 and 2), so its accumulators
// acc[KO][TX] stay in registers. A block of BX x BY threads owns BX*TX x BY x KO outputs.
//
// Why: on Hopper one warp instruction issues per clock per scheduler, so every load, address
// computation or branch takes a slot from an FFMA. The blocked kernel (blocked_thread.h) issues
// one tap read and about one global load per KO FMAs. Here, per block of TX taps along x:
//   - TX taps are read with TX/4 broadcast LDS.128 and each feeds TX FMAs (one per x output),
//   - TX inputs are read with TX/4 LDS.128 (a sliding window of 2*TX registers over the row
//     segment of TX+K0-1 inputs that the thread's TX outputs share) and each feeds up to TX FMAs,
// so a full block issues TX*TX FMAs (64 for TX = 8) for TX/2 shared loads and a few loop
// instructions. The window's two halves swap roles instead of being copied (no register moves).
//
// Loop order: a block first stages every tap in shared memory (in blocks of TX along j0, the tap
// planes j3 of a block adjacent: tiled_load_taps). Then per block tile, for each tap index j2 along
// axis 2 and each input plane s along axis 3 (KO + K3 - 1 of them), the block stages the plane's
// (x, axis 1) tile with the boundary already resolved, and each thread adds, for every output q
// whose tap j3 = s - q exists and every tap row j1, the x correlation of its row segment into
// acc[q]. Planes are double buffered: the next plane is copied asynchronously (cp.async) while the
// current one is used, so the global-memory latency overlaps the FMAs. The compute phase never
// checks a boundary, so every boundary condition costs the same, and an input outside an output's
// footprint is never multiplied (the last, partial block of a tap row stops at K0): an Inf or NaN
// reaches only the outputs whose footprint holds it, as in the reference.
//
// The load phases (all threads of a block) and the compute phase are separate NDCONV_HD functions
// so that the host emulation (tests/gpu/emulate.h) runs them in the same order as the barriers do.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "kernels/async_copy.h"
#include "kernels/bulk_copy.h"
#include "kernels/fast_divmod.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/row_taps.h"
#include "kernels/schedule.h"

namespace ndconv::kernels {

/// Compile-time shape of the tiled kernel: TX outputs along x and KO along axis 3 per thread,
/// BX x BY threads per block (BX along x, BY along axis 1). A warp is 32 consecutive thread
/// indices, x fastest.
template <int TX_, int KO_, int BX_, int BY_, bool kLeads_ = false>
struct TiledShape {
  static constexpr int TX = TX_;
  static constexpr int KO = KO_;
  static constexpr int BX = BX_;
  static constexpr int BY = BY_;
  /// Whether the compute phase can skip lead taps (TiledLayout::lead, 1 to 3): four times the
  /// row code's instantiations, so only for the shape that serves the 3D and 4D filters.
  static constexpr bool kLeads = kLeads_;
  static constexpr int kThreads = BX * BY;
  static constexpr int kTileX = BX * TX;  ///< outputs of a block along x
  /// Registers the inner loop needs at least: the accumulators and the window and tap blocks.
  static constexpr int kLiveFloats = TX * KO + 3 * TX;
  /// Blocks per SM the compiler must allow (__launch_bounds__), i.e. a register cap of
  /// 65536 / (kThreads * kMinBlocks): up to 32 live floats -> 8 blocks (64 registers: separable
  /// passes and 2D images are latency-bound, they need warps); up to 56 (TX 8 x KO 4, the 3D/4D
  /// default) -> 5 (102 registers; it needs 94 without spilling, and the fifth block hides more of
  /// the plane loads than the registers it costs); up to 64 (TX 16 x KO 1, 2D) -> 4 (128
  /// registers; a fifth block costs that shape more than it hides); more -> 3 (168 registers;
  /// wider thread tiles spill at 128). The one-row shape of KO 4 (BY 1, axis 1 shorter than 16
  /// outputs) gets 4: at 5 it spills once blocks walk several tiles (tiled_kernel).
  static constexpr int kMinBlocks =
      kLiveFloats <= 32 ? 8 : (kLiveFloats <= 56 && BY > 1 ? 5 : (kLiveFloats <= 64 ? 4 : 3));
  static_assert(TX % 4 == 0, "TX must allow 128-bit shared loads");
  static_assert(kThreads % 32 == 0, "a block is whole warps");
};

/// Positions per (axis 2, KO chunk) up to which a launch may deal its tiles (TiledLayout::deal).
inline constexpr int kTiledDealPositions = 64;

/// Shared-memory layout of the tiled kernel for one geometry (run-time filter extents): every tap,
/// then two input-plane buffers (the next plane is copied in while the current one is used), the
/// tile's column and row maps, and the two buffers' barriers of the bulk copy (bulk_copy.h).
/// Offsets count 4-byte words from the 1024-byte aligned start of the dynamic shared memory; the
/// plane buffers start 128-byte aligned, as the bulk copy needs.
struct TiledLayout {
  // The taps (tiled_load_taps): tap (j0 = b * TX + jj, j1, j2, j3) lies at
  // j2 * slice_floats + j1 * row_floats + b * block_floats + j3 * plane_floats + jj.
  int k0_padded;       ///< K0 rounded up to a multiple of TX (tap rows are read TX at a time)
  int plane_floats;    ///< from tap plane j3 to j3 + 1: TX for KO > 1, K1 * k0_padded for KO 1
  int block_floats;    ///< from tap block b to b + 1: K3 * TX for KO > 1, TX for KO 1
  int row_floats;      ///< from tap row j1 to j1 + 1: k0_padded / TX * K3 * TX or k0_padded
  int slice_floats;    ///< one j2 slice of taps: K1 * K3 * k0_padded
  int tap_floats;      ///< all taps: K2 slices
  int pitch;           ///< floats per tile row; = 4 mod 8 so rows of a quarter warp use other banks
  int rows;            ///< tile rows: BY + K1 - 1
  int tile_floats;     ///< one plane buffer: pitch * rows, rounded up to 128 bytes
  int columns;         ///< input columns a plane tile needs: BX * TX + K0 - 1
  int map_ints;        ///< the tile's column and row maps (tiled_load_maps): columns + rows
  int tile_offset;     ///< plane buffer 0 (buffer 1 follows it)
  int map_offset;      ///< the maps
  int barrier_offset;  ///< two 8-byte barriers, one per plane buffer
  int total_floats;    ///< everything (4-byte words)
  /// Padding taps (zero, never multiplied) before every tap row along x: the geometry is
  /// tiled_lead_geometry's, whose plane boxes start on 16-byte boundaries (0: none). Set by the
  /// launcher, only for shapes with S::kLeads.
  int lead;
  /// Halo elements per thread of a bulk launch with a boundary other than zero (tiled_halo.h; 0:
  /// none), whether they are staged a plane ahead (else fetched straight into the tile), or copied
  /// within the tile's plane (local: their values lie in its plane box), where their lists and
  /// staging buffers start (after everything else), and the tile origins without a halo: o[0] in
  /// [inner[0], inner[1]] and o[1] in [inner[2], inner[3]] (tiled_add_halo).
  int halo_slots;
  int halo_staged;
  int halo_local;
  int halo_offset;
  int inner[4];
  /// Periodic halos brought by bulk copies of the opposite faces (TiledHaloMode::kWrap,
  /// tiled_halo.h; halo_local is then set too, the local copy reading these boxes): each plane
  /// buffer holds after the plane box a side box of wrap_columns x rows (the opposite x face's
  /// columns), a band box of pitch x wrap_rows (the opposite face's rows along axis 1) and a
  /// corner box like the side box, at these offsets within the buffer.
  int halo_wrap;
  int wrap_columns, wrap_rows;
  int wrap_side, wrap_band, wrap_corner;
  /// Bytes of a side (or corner) box and of a band box: layout values rather than products the
  /// kernel works out, which the compiler hoisted out of the plane loop into registers (the
  /// KO 1 x TX 8 shapes spilled at their 64-register cap).
  int wrap_side_bytes, wrap_band_bytes;
  /// Block tiles of the launch (tiled_tile_count), and dividers by the tiles along x, along axis 1
  /// and the KO chunks along axis 3 (tiled_origin): kernel parameters, read from the constant bank
  /// rather than kept in registers (the KO 4 shapes spilled) or divided out (tiled_origin).
  int tiles;
  FastDivmod tiles_x, tiles_y, chunks3;
  /// Divider by the planes per tap index along axis 2 (tiled_slice_planes): the plane after p.
  FastDivmod slice_planes;
  /// Where a tile's position among the tiles_x * tiles_y positions of its (axis 2, KO chunk) lies:
  /// position deal[p] for the p-th in number order, for deal_size > 0 positions (set by
  /// cuda_backend::tiled_deal_face_tiles), else position p.
  int deal_size;
  unsigned char deal[kTiledDealPositions];
};

/// n rounded up to a multiple of m.
NDCONV_HD int tiled_round_up(int n, int m) {
  return (n + m - 1) / m * m;
}

/// Floats per plane-tile row when tap rows have `blocks` blocks of TX: the last window read by
/// the last thread ends at (BX + blocks) * TX - 1, and a quarter warp's 128-bit loads (8 lanes)
/// cover 32 banks when its rows start 4 banks apart (mod 16): BX = 4 lanes of TX = 8 or BX = 2
/// lanes of TX = 16 per row, hence = 4 mod 16.
template <typename S>
NDCONV_HD constexpr int tiled_pitch(int blocks) {
  return ((S::BX + blocks) * S::TX + 15) / 16 * 16 + 4;
}

/// Block tiles along each launch dimension: x tiles, axis-1 tiles, (axis-2 index, KO chunk).
template <typename S>
NDCONV_HD void tiled_block_counts(const Geometry& g, int64_t counts[3]) {
  counts[0] = (g.out_extent[0] + S::kTileX - 1) / S::kTileX;
  counts[1] = (g.out_extent[1] + S::BY - 1) / S::BY;
  counts[2] = g.out_extent[2] * ((g.out_extent[3] + S::KO - 1) / S::KO);
}

/// The maps and barriers after the two plane buffers (l.tile_offset, l.tile_floats, l.map_ints
/// set), and the total.
NDCONV_HD void tiled_place_after_tiles(TiledLayout& l) {
  l.map_offset = l.tile_offset + 2 * l.tile_floats;
  l.barrier_offset = tiled_round_up(l.map_offset + l.map_ints, 2);
  l.total_floats = l.barrier_offset + 4;
}

template <typename S>
NDCONV_HD TiledLayout tiled_layout(const Geometry& g) {
  TiledLayout l;
  const int blocks = (g.filter_extent[0] + S::TX - 1) / S::TX;
  l.k0_padded = blocks * S::TX;
  const int k1 = g.filter_extent[1], k3 = g.filter_extent[3];
  if (S::KO > 1) {  // the tap planes of a block adjacent (tiled_load_taps)
    l.plane_floats = S::TX;
    l.block_floats = k3 * S::TX;
    l.row_floats = blocks * l.block_floats;
  } else {  // tap rows contiguous, one plane after another
    l.block_floats = S::TX;
    l.row_floats = l.k0_padded;
    l.plane_floats = k1 * l.row_floats;
  }
  l.slice_floats = k3 * k1 * l.k0_padded;
  l.tap_floats = g.filter_extent[2] * l.slice_floats;
  l.pitch = tiled_pitch<S>(blocks);
  l.rows = S::BY + g.filter_extent[1] - 1;
  l.tile_floats = tiled_round_up(l.pitch * l.rows, 32);
  l.columns = S::kTileX + g.filter_extent[0] - 1;
  l.map_ints = l.columns + l.rows;
  l.tile_offset = tiled_round_up(l.tap_floats, 32);
  tiled_place_after_tiles(l);
  l.lead = 0;
  l.halo_slots = 0;
  l.halo_staged = 0;
  l.halo_local = 0;
  l.halo_offset = l.total_floats;
  l.halo_wrap = 0;
  l.wrap_columns = l.wrap_rows = 0;
  l.wrap_side = l.wrap_band = l.wrap_corner = l.tile_floats;
  l.wrap_side_bytes = l.wrap_band_bytes = 0;
  for (int& v : l.inner)
    v = 0;
  // Tile numbers count in 32 bits (tiled_index_fits; the launcher checks before it launches).
  int64_t counts[3];
  tiled_block_counts<S>(g, counts);
  const int64_t tiles = counts[0] * counts[1] * counts[2];
  const bool fits = tiles < (int64_t{1} << 30);
  l.tiles = fits ? static_cast<int>(tiles) : -1;
  l.tiles_x = fast_divmod(fits ? static_cast<int>(counts[0]) : 1);
  l.tiles_y = fast_divmod(fits ? static_cast<int>(counts[1]) : 1);
  l.chunks3 = fast_divmod(fits ? static_cast<int>((g.out_extent[3] + S::KO - 1) / S::KO) : 1);
  l.slice_planes = fast_divmod(S::KO + g.filter_extent[3] - 1);
  l.deal_size = 0;
  for (unsigned char& d : l.deal)
    d = 0;
  return l;
}

/// v clamped to [lo, hi].
NDCONV_HD int tiled_clamp(int64_t v, int lo, int hi) {
  return static_cast<int>(v < lo ? lo : (v > hi ? hi : v));
}

/// How the face tiles of a bulk launch get their halo (tiled_halo.h): fetched from global memory
/// straight into the plane once its copy has landed, fetched a plane ahead into a staging buffer,
/// copied within the plane from the elements inside the volume that hold their values, or
/// (periodic) copied within the buffer from boxes of the opposite faces that bulk copies bring
/// with the plane.
enum class TiledHaloMode { kDirect, kStaged, kLocal, kWrap };

/// The boxes of the opposite faces of a kWrap launch (TiledLayout::wrap_columns, wrap_rows).
struct TiledWrapExtent {
  int columns = 0;  ///< of the side and corner boxes, a multiple of 4 (16 bytes)
  int rows = 0;     ///< of the band box
};

/// Layout l (l.lead set) of a launch on g with `slots` halo elements per thread of a block of
/// `threads` (tiled_halo.h): with kWrap, the opposite faces' boxes after each plane box (their
/// extent `wrap`); the tile offset and source of each element and, staged, two staging buffers,
/// after everything else; and the tile origins whose columns and rows all lie inside the volume
/// (no halo).
inline void tiled_add_halo(TiledLayout& l, const Geometry& g, int slots, int threads,
                           TiledHaloMode mode, TiledWrapExtent wrap = {}) {
  const bool staged = mode == TiledHaloMode::kStaged;
  if (mode == TiledHaloMode::kWrap) {
    l.halo_wrap = 1;
    l.wrap_columns = wrap.columns;
    l.wrap_rows = wrap.rows;
    const int side = tiled_round_up(wrap.columns * l.rows, 32);
    l.wrap_side = tiled_round_up(l.pitch * l.rows, 32);
    l.wrap_band = l.wrap_side + side;
    l.wrap_corner = l.wrap_band + tiled_round_up(l.pitch * wrap.rows, 32);
    l.tile_floats = l.wrap_corner + side;
    l.wrap_side_bytes = wrap.columns * l.rows * static_cast<int>(sizeof(float));
    l.wrap_band_bytes = l.pitch * wrap.rows * static_cast<int>(sizeof(float));
    tiled_place_after_tiles(l);
  }
  l.halo_slots = slots;
  l.halo_staged = staged ? 1 : 0;
  l.halo_local = mode == TiledHaloMode::kLocal || mode == TiledHaloMode::kWrap ? 1 : 0;
  l.halo_offset = l.total_floats;
  l.total_floats = l.halo_offset + (staged ? 4 : 2) * slots * threads;
  l.inner[0] = tiled_clamp(-g.offset[0] - l.lead, INT32_MIN, INT32_MAX);
  l.inner[1] = tiled_clamp(g.in_extent[0] - g.offset[0] - l.columns, INT32_MIN, INT32_MAX);
  l.inner[2] = tiled_clamp(-g.offset[1], INT32_MIN, INT32_MAX);
  l.inner[3] = tiled_clamp(g.in_extent[1] - g.offset[1] - l.rows, INT32_MIN, INT32_MAX);
  // No origin along an axis without a halo: [-1, -1], which no origin (>= 0) lies in
  // (tiled_halo_needed tests the ranges as unsigned differences).
  for (int a = 0; a < 4; a += 2) {
    if (l.inner[a + 1] < l.inner[a])
      l.inner[a] = l.inner[a + 1] = -1;
  }
}

/// The padding taps along x that make the plane tiles of geometry g start on 16-byte boundaries:
/// tiles start every S::kTileX outputs (a multiple of 4 floats), so the first input column of a
/// tile is aligned when the x offset is a multiple of 4. The same region of a filter 2m + 1 taps
/// wide reads m columns left of its outputs: 11 taps need 3 (offset -5 becomes -8), 7 need 1, 5
/// need 2; 1, 9, 17, ... none.
NDCONV_HD int tiled_lead(const Geometry& g) {
  return static_cast<int>(((g.offset[0] % 4) + 4) % 4);
}

/// Geometry g with `lead` more taps along x before the first: the x offset moves left by `lead`
/// and the filter grows by `lead`, so each output's footprint is unchanged once the lead taps are
/// skipped (tiled_compute_plane never multiplies them: an input left of the footprint, Inf or
/// NaN, reaches no output). The bulk copy can then load the planes of any odd filter width, whose
/// boxes must start on 16-byte boundaries (tensor_map.h).
NDCONV_HD Geometry tiled_lead_geometry(Geometry g, int lead) {
  g.offset[0] -= lead;
  g.filter_extent[0] += lead;
  return g;
}

/// Input planes along axis 3 per tap index j2 of a block tile: s < KO + K3 - 1.
template <typename S>
NDCONV_HD int tiled_slice_planes(const Geometry& g) {
  return S::KO + g.filter_extent[3] - 1;
}

/// Input planes a block tile walks through: (j2, s) for j2 < K2 and s < tiled_slice_planes.
template <typename S>
NDCONV_HD int tiled_planes(const Geometry& g) {
  return g.filter_extent[2] * tiled_slice_planes<S>(g);
}

/// Block tiles of a launch in all (the launcher keeps it within tiled_index_fits).
template <typename S>
NDCONV_HD int64_t tiled_tile_count(const Geometry& g) {
  int64_t counts[3];
  tiled_block_counts<S>(g, counts);
  return counts[0] * counts[1] * counts[2];
}

/// Whether a launch on g can number its tiles and their first outputs, and index its input along
/// each axis, in 32 bits, as the kernel does (64-bit ones cost it registers it does not have:
/// tiled_kernel).
template <typename S>
NDCONV_HD bool tiled_index_fits(const Geometry& g) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  bool fits = tiled_tile_count<S>(g) < kLimit;
  for (int a = 0; a < kAxes; ++a) {
    fits = fits && g.out_extent[a] < kLimit && g.in_extent[a] < kLimit && g.offset[a] < kLimit &&
           g.offset[a] > -kLimit;
  }
  return fits;
}

/// The outputs a block tile starts at: x, axis 1, axis 2, axis 3 (32 bits: tiled_index_fits).
struct TileOrigin {
  int o[kAxes];
};

/// Block tile `tile` of a launch with layout l: tiles are numbered x fastest, then axis 1, then
/// (axis-2 index, KO chunk), the order in which a grid of one block per tile ran, so that the
/// tiles in flight at once share their input planes in the L2 cache. A block walks tiles
/// blockIdx.x, blockIdx.x + gridDim.x, ... (tiled_kernel).
template <typename S>
NDCONV_HD TileOrigin tiled_origin(const TiledLayout& l, int tile) {
  const int rest = l.tiles_x.quotient(tile);
  const int bz = l.tiles_y.quotient(rest);
  const int chunk = l.chunks3.quotient(bz);
  int x = l.tiles_x.remainder(tile, rest), y = l.tiles_y.remainder(rest, bz);
  if (l.deal_size > 0) {  // the launch deals its face tiles evenly over the blocks
    const int position = l.deal[y * l.tiles_x.divisor + x];
    y = l.tiles_x.quotient(position);
    x = l.tiles_x.remainder(position, y);
  }
  TileOrigin t;
  t.o[0] = x * S::kTileX;
  t.o[1] = y * S::BY;
  t.o[2] = chunk;
  t.o[3] = l.chunks3.remainder(bz, chunk) * S::KO;
  return t;
}

/// Load phase 1 (all threads, once per block): every tap at its place in TiledLayout (the strides
/// define the layout), zero in the padding (never multiplied). For KO > 1 the tap planes j3 of one
/// block of TX taps are adjacent, TX floats apart, so the compute phase reaches output q's taps
/// (tap plane s - q) at the compile-time offset -q * TX from one pointer per tap block and reads
/// them just before q's FMAs: an address per output, clamped to the outputs with taps in the
/// plane, would spend dozens of instructions per tap row on tap addresses. No plane s - q outside
/// 0..K3 - 1 is
/// read: outputs without taps in the plane skip their block. KO 1 shapes (2D images, separable x
/// passes) keep their tap rows contiguous, so a row's blocks lie TX floats apart at compile time.
/// `taps` is the dense tap-row layout of Geometry.
template <typename S>
NDCONV_HD void tiled_load_taps(const Geometry& g, const TiledLayout& l, const float* taps,
                               float* taps_s, int tid) {
  const int k0 = g.filter_extent[0], k1 = g.filter_extent[1], k3 = g.filter_extent[3];
  for (int i = tid; i < l.tap_floats; i += S::kThreads) {
    const int j0 = i % l.k0_padded;
    int rest = i / l.k0_padded;
    const int j1 = rest % k1;
    rest /= k1;
    const int j3 = rest % k3;
    const int j2 = rest / k3;
    const int row = j0 + k0 * (j1 + k1 * j2);
    const int at = j2 * l.slice_floats + j1 * l.row_floats + j0 / S::TX * l.block_floats +
                   j3 * l.plane_floats + j0 % S::TX;
    taps_s[at] = j0 < k0 ? taps[g.tap_base + row * g.tap_pitch + j3] : 0.0f;
  }
}

/// The taps in tiled_load_taps's shared-memory layout, computed on the host (l.tap_floats floats),
/// so that a launch stages them with tiled_copy_taps instead: per tap, the layout costs two
/// divisions and a dependent global load, which every block would pay again.
template <typename S>
void tiled_lay_out_taps(const Geometry& g, const TiledLayout& l, const float* taps, float* taps_s) {
  for (int tid = 0; tid < S::kThreads; ++tid)
    tiled_load_taps<S>(g, l, taps, taps_s, tid);
}

/// Load phase 1 for taps laid out by tiled_lay_out_taps (16-byte aligned): a straight copy.
template <typename S>
NDCONV_HD void tiled_copy_taps(const TiledLayout& l, const float* taps, float* taps_s, int tid) {
  for (int i = 4 * tid; i < l.tap_floats; i += 4 * S::kThreads) {
    NDCONV_UNROLL
    for (int m = 0; m < 4; ++m)
      taps_s[i + m] = taps[i + m];
  }
}

/// Load phase 2 (all threads, once per block tile): the tile's column map (input x index of each
/// plane column, boundary resolved, -1 for a zero) and row map (input index along axis 1 of each
/// tile row), so that a plane load at the volume's faces costs a shared read per element instead
/// of the boundary mapping (whose cost depends on the boundary condition: mirror and periodic cost
/// several compares per element).
template <typename S>
NDCONV_HD void tiled_load_maps(const Geometry& g, const TiledLayout& l, const TileOrigin& t,
                               int* maps, int tid) {
  for (int i = tid; i < l.map_ints; i += S::kThreads) {
    const bool column = i < l.columns;
    maps[i] = static_cast<int>(
        column ? boundary_index_hd(t.o[0] + g.offset[0] + i, g.in_extent[0], g.boundary)
               : boundary_index_hd(t.o[1] + g.offset[1] + (i - l.columns), g.in_extent[1],
                                   g.boundary));
  }
}

/// Chunks of 32 columns per row that tiled_load_plane's fast path copies (up to 128 columns: the
/// bench's filters need 36 to 48).
inline constexpr int kCopyChunks = 4;

/// The input indices along axes 2 and 3 of plane p = j2 * (KO + K3 - 1) + s of tile t, before the
/// boundary: t.o[2] + offset + j2 and t.o[3] + offset + s.
template <typename S>
NDCONV_HD void tiled_plane_position(const Geometry& g, const TileOrigin& t, int p, int64_t& i2,
                                    int64_t& i3) {
  const int per_slice = tiled_slice_planes<S>(g);
  i2 = t.o[2] + g.offset[2] + p / per_slice;
  i3 = t.o[3] + g.offset[3] + p % per_slice;
}

/// Load phase 3 (all threads): input plane p = j2 * (KO + K3 - 1) + s of the block's tile (axis-3
/// index t.o[3] + offset + s, axis-2 index t.o[2] + offset + j2), boundary resolved. Warps read
/// consecutive x of one tile row (coalesced). Only the columns the compute phase multiplies are
/// written (l.columns): the rest of a row up to the pitch is read by the 128-bit window loads but
/// never used in an FMA, and copying it cost a third of the plane's copies for small filters.
/// `maps` is the tile's tiled_load_maps.
template <typename S>
NDCONV_HD void tiled_load_plane(const Geometry& g, const TiledLayout& l, const float* in,
                                float* tile, const int* maps, const TileOrigin& t, int p, int tid) {
  int64_t raw2, raw3;
  tiled_plane_position<S>(g, t, p, raw2, raw3);
  const int64_t i2 = boundary_index_hd(raw2, g.in_extent[2], g.boundary);
  const int64_t i3 = boundary_index_hd(raw3, g.in_extent[3], g.boundary);
  const int columns = l.columns;
  const int warps = S::kThreads / 32;
  const int lane = tid % 32;
  const int64_t x_first = t.o[0] + g.offset[0];
  const int64_t y_first = t.o[1] + g.offset[1];
  const int64_t s0 = g.in_stride[0], s1 = g.in_stride[1];
  const bool x_inside = x_first >= 0 && x_first + columns <= g.in_extent[0];
  if (i2 < 0 || i3 < 0) {  // the whole plane is outside (zero boundary)
    for (int r = tid / 32; r < l.rows; r += warps) {
      for (int c = lane; c < columns; c += 32)
        tile[r * l.pitch + c] = 0.0f;
    }
    return;
  }
  const float* plane = in + i2 * g.in_stride[2] + i3 * g.in_stride[3];
  const int* column_map = maps;
  const int* row_map = maps + l.columns;
  if (x_inside && s0 == 1 && columns <= kCopyChunks * 32) {
    // Contiguous x and every column inside the volume (the usual case): a warp copies a row in
    // chunks of 32 columns at fixed offsets from one address per row, so that a copy is the
    // cp.async and its predicate, not 64-bit index arithmetic and loop control per column.
    bool chunk[kCopyChunks];
    NDCONV_UNROLL
    for (int k = 0; k < kCopyChunks; ++k)
      chunk[k] = k * 32 + lane < columns;
    const bool rows_inside = y_first >= 0 && y_first + l.rows <= g.in_extent[1];
    const float* first = plane + x_first + lane;
    for (int r = tid / 32; r < l.rows; r += warps) {
      float* dst = tile + r * l.pitch + lane;
      const int64_t i1 = rows_inside ? y_first + r : row_map[r];
      if (i1 < 0) {
        NDCONV_UNROLL
        for (int k = 0; k < kCopyChunks; ++k) {
          if (chunk[k])
            dst[32 * k] = 0.0f;
        }
        continue;
      }
      const float* src = first + i1 * s1;
      NDCONV_UNROLL
      for (int k = 0; k < kCopyChunks; ++k) {
        if (chunk[k])
          tiled_copy_valid(dst + 32 * k, src + 32 * k);
      }
    }
    return;
  }
  if (x_inside && y_first >= 0 && y_first + l.rows <= g.in_extent[1]) {
    // The whole plane tile lies inside the volume (most tiles of a large volume): every address
    // is an increment of the previous one.
    const float* from = plane + (y_first + tid / 32) * s1 + (x_first + lane) * s0;
    float* dst = tile + (tid / 32) * l.pitch + lane;
    for (int r = tid / 32; r < l.rows; r += warps, from += warps * s1, dst += warps * l.pitch) {
      for (int c = 0; c + lane < columns; c += 32)
        tiled_copy_valid(dst + c, from + c * s0);
    }
    return;
  }
  for (int r = tid / 32; r < l.rows; r += warps) {
    float* dst = tile + r * l.pitch;
    const int i1 = row_map[r];
    if (i1 < 0) {
      for (int c = lane; c < columns; c += 32)
        dst[c] = 0.0f;
      continue;
    }
    const float* src = plane + i1 * s1;
    if (x_inside) {
      const float* from = src + (x_first + lane) * s0;
      for (int c = lane; c < columns; c += 32, from += 32 * s0)
        tiled_copy_valid(dst + c, from);
      continue;
    }
    for (int c = lane; c < columns; c += 32) {
      const int i0 = column_map[c];
      if (i0 >= 0)
        tiled_copy_valid(dst + c, src + i0 * s0);
      else
        dst[c] = 0.0f;
    }
  }
}

/// The box of input plane (j2, s) of tile t that a bulk copy loads (bulk_copy.h): the coordinates
/// of its first element along the tensor map's four axes (the canonical axes of the input). Along
/// x and axis 1 the box starts at the tile's first input column and row, possibly outside the
/// volume: the copy fills zeros there, and the halo (tiled_halo.h) puts the other boundaries'
/// values in. Along axes 2 and 3 it is the plane's input index, boundary resolved, or for the zero
/// boundary the raw index, whose plane outside the volume the copy fills with zeros. In 32 bits
/// (tiled_index_fits), from (j2, s) rather than the plane's number: one thread works this out per
/// plane while the others wait at the iteration's barrier.
NDCONV_HD void tiled_bulk_box(const Geometry& g, const TileOrigin& t, int j2, int s, int (&c)[4]) {
  const int i2 = t.o[2] + static_cast<int>(g.offset[2]) + j2;
  const int i3 = t.o[3] + static_cast<int>(g.offset[3]) + s;
  const int m2 = boundary_index_t<int>(i2, static_cast<int>(g.in_extent[2]), g.boundary);
  const int m3 = boundary_index_t<int>(i3, static_cast<int>(g.in_extent[3]), g.boundary);
  c[0] = t.o[0] + static_cast<int>(g.offset[0]);
  c[1] = t.o[1] + static_cast<int>(g.offset[1]);
  c[2] = m2 >= 0 ? m2 : i2;
  c[3] = m3 >= 0 ? m3 : i3;
}

/// How a tiled launch loads its planes (the kernel's `loads` argument): thread by thread
/// (tiled_load_plane); by bulk copy, the face tiles then patching the halo that the copy filled
/// with zeros where the boundary is not zero (tiled_halo.h, l.halo_slots > 0), or, where the input
/// was padded, needing no halo; or by bulk copy with those zeros left in place, for a launch whose
/// outputs that read them the border kernel then corrects (border_thread.h).
enum TiledPlaneLoads : int { kTiledThreadCopies = 0, kTiledBulk = 1, kTiledBulkZeroFaces = 2 };

/// The plane loads of a launch by bulk copy or not, with the faces' zeros left for the border
/// kernel or not.
NDCONV_HD constexpr TiledPlaneLoads tiled_plane_loads(bool bulk, bool zero_faces) {
  return !bulk ? kTiledThreadCopies : (zero_faces ? kTiledBulkZeroFaces : kTiledBulk);
}

/// a * b + c, computed where it is used: on the GPU a volatile multiply-add, which the compiler
/// neither hoists out of a loop nor keeps across one. The thread's row offset in a plane tile is
/// the same for every plane; held from plane to plane in the kernels whose row code is fixed for
/// one filter width (TiledRowsFixed), it was spilled at the 96-register cap and loaded from local
/// memory once per plane (cuobjdump); recomputed, it costs one instruction per plane, and what
/// those kernels still spill (20 bytes) is stored and loaded once per tile.
NDCONV_HD int tiled_opaque_mad(int a, int b, int c) {
#ifdef __CUDA_ARCH__
  int d;
  asm volatile("mad.lo.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  return a * b + c;
#endif
}

/// Compute phase for plane p with kFirst lead taps skipped and kLast taps in the last block of
/// every tap row, kBlocks blocks per tap row (0: l.k0_padded / TX, read at run time). Output q of
/// the thread takes tap plane j3 = s - q of this plane, so the outputs with a tap here are
/// q_first..q_last; every tap row j1 reads its input row segment once for all of them.
template <typename S, int kFirst, int kLast, int kBlocks>
NDCONV_HD void tiled_compute_plane_last(const Geometry& g, const TiledLayout& l,
                                        const float* taps_s, const float* tile,
                                        float (&acc)[S::KO][S::TX], int j2, int s, int tx, int ty) {
  const int k0 = g.filter_extent[0], k1 = g.filter_extent[1], k3 = g.filter_extent[3];
  const int full = kBlocks > 0 ? kBlocks - 1 : (k0 - 1) / S::TX;
  const int pitch = kBlocks > 0 ? tiled_pitch<S>(kBlocks) : l.pitch;
  const int q_first = s - k3 + 1 > 0 ? s - k3 + 1 : 0;
  const int q_last = s < S::KO - 1 ? s : S::KO - 1;
  const float* row = tile + tiled_opaque_mad(ty, pitch, tx * S::TX);
  // Block 0 of tap row (j2, j3 = s - q, j1) = taps + j1 * row_floats - q * plane_floats, with
  // plane_floats = TX wherever KO > 1 (tiled_load_taps).
  const float* taps = taps_s + j2 * l.slice_floats + s * l.plane_floats;
  // The lead-tap shape counts its tap rows down: counting up, it spills at its register cap. The
  // others count up, which compiles to a slightly faster loop for them.
  if constexpr (S::kLeads) {
    for (int j1 = k1; j1 > 0; --j1, row += pitch, taps += l.row_floats)
      tiled_row<S, kFirst, kLast>(acc, row, taps, l.block_floats, q_first, q_last, full);
  } else {
    for (int j1 = 0; j1 < k1; ++j1, row += pitch, taps += l.row_floats)
      tiled_row<S, kFirst, kLast>(acc, row, taps, l.block_floats, q_first, q_last, full);
  }
}

/// Picks the instantiation of tiled_compute_plane_last for a run-time last-block size (once per
/// plane, warp-uniform), counting down from TX. Shapes with lead taps (the 3D/4D shape) take tap
/// rows of one or two blocks (filters up to TX or 2 * TX taps wide with their lead taps: 7^4 and
/// 5^3, 11^3) with the block count, and so the row pitch and the row's block loop, known at compile
/// time, instead of reading them from the constant bank every tap row; wider filters read them at
/// run time.
template <typename S, int kFirst, int kLast = S::TX>
NDCONV_HD void tiled_compute_plane_dispatch(int last, const Geometry& g, const TiledLayout& l,
                                            const float* taps_s, const float* tile,
                                            float (&acc)[S::KO][S::TX], int j2, int s, int tx,
                                            int ty) {
  if constexpr (kLast > 1) {
    if (last != kLast) {
      tiled_compute_plane_dispatch<S, kFirst, kLast - 1>(last, g, l, taps_s, tile, acc, j2, s, tx,
                                                         ty);
      return;
    }
  }
  if constexpr (S::kLeads) {
    if (l.k0_padded == S::TX)
      return tiled_compute_plane_last<S, kFirst, kLast, 1>(g, l, taps_s, tile, acc, j2, s, tx, ty);
    if (l.k0_padded == 2 * S::TX)
      return tiled_compute_plane_last<S, kFirst, kLast, 2>(g, l, taps_s, tile, acc, j2, s, tx, ty);
  }
  tiled_compute_plane_last<S, kFirst, kLast, 0>(g, l, taps_s, tile, acc, j2, s, tx, ty);
}

/// Where the compute phase's row code comes from (tiled_compute_plane): chosen per plane from the
/// lead taps, the last block's taps and the blocks per tap row (TiledRowsAny: one kernel serves
/// every filter width), or fixed at compile time (TiledRowsFixed: a kernel for one filter width,
/// whose compute phase is that width's row code alone). Fixed, a plane spends no instructions on
/// the choice, and the kernel's
/// hot loop is a few kilobytes of code instead of one path through 96 instantiations.
struct TiledRowsAny {
  static constexpr bool kFixed = false;
  static constexpr int kFirst = 0, kLast = 0, kBlocks = 0;
};
template <int kFirst_, int kLast_, int kBlocks_>
struct TiledRowsFixed {
  static constexpr bool kFixed = true;
  static constexpr int kFirst = kFirst_;    ///< lead taps skipped (TiledLayout::lead)
  static constexpr int kLast = kLast_;      ///< taps in a tap row's last block, 1..TX
  static constexpr int kBlocks = kBlocks_;  ///< blocks of TX taps per tap row: 1 or 2
  static_assert(kBlocks == 1 || kBlocks == 2, "tiled_compute_plane_last fixes 1 or 2 blocks");
};

/// Whether row code R computes layout l's planes on geometry g (TiledLayout::lead set).
template <typename S, typename R>
NDCONV_HD bool tiled_rows_fit(const Geometry& g, const TiledLayout& l) {
  return !R::kFixed || (S::kLeads && l.lead == R::kFirst &&
                        tiled_last_block_taps<S::TX>(g.filter_extent[0]) == R::kLast &&
                        l.k0_padded == R::kBlocks * S::TX);
}

/// Compute phase for plane p = j2 * (KO + K3 - 1) + s (see tiled_load_plane; the caller counts j2
/// and s instead of dividing p, which short filters would pay outside the row loop): thread (tx,
/// ty) adds the plane's contributions to its outputs. The lead taps and the last block's tap count
/// are resolved here, once per plane (or at compile time: R), so the per-row loop carries no
/// partial-block branches.
template <typename S, typename R = TiledRowsAny>
NDCONV_HD void tiled_compute_plane(const Geometry& g, const TiledLayout& l, const float* taps_s,
                                   const float* tile, float (&acc)[S::KO][S::TX], int j2, int s,
                                   int tx, int ty) {
  if constexpr (R::kFixed) {
    tiled_compute_plane_last<S, R::kFirst, R::kLast, R::kBlocks>(g, l, taps_s, tile, acc, j2, s, tx,
                                                                 ty);
  } else {
    const int last = tiled_last_block_taps<S::TX>(g.filter_extent[0]);
    if constexpr (S::kLeads) {
      switch (l.lead) {
        case 1:
          return tiled_compute_plane_dispatch<S, 1>(last, g, l, taps_s, tile, acc, j2, s, tx, ty);
        case 2:
          return tiled_compute_plane_dispatch<S, 2>(last, g, l, taps_s, tile, acc, j2, s, tx, ty);
        case 3:
          return tiled_compute_plane_dispatch<S, 3>(last, g, l, taps_s, tile, acc, j2, s, tx, ty);
        default:
          break;
      }
    }
    tiled_compute_plane_dispatch<S, 0>(last, g, l, taps_s, tile, acc, j2, s, tx, ty);
  }
}

/// TX consecutive floats from registers to global memory at p (16-byte aligned): 128-bit stores on
/// the GPU, so that a warp's store instruction covers whole 32-byte sectors instead of writing 32
/// floats 32 bytes apart (one sector each: 8 times the write transactions for TX = 8).
template <int TX>
NDCONV_HD void tiled_write(float* p, const float (&v)[TX]) {
#ifdef __CUDA_ARCH__
  NDCONV_UNROLL
  for (int m = 0; m < TX; m += 4)
    *reinterpret_cast<float4*>(p + m) = make_float4(v[m], v[m + 1], v[m + 2], v[m + 3]);
#else
  NDCONV_UNROLL
  for (int m = 0; m < TX; ++m)
    p[m] = v[m];
#endif
}

/// Stores the thread's outputs that exist: TX at once where they are contiguous, all exist and
/// start 16-byte aligned, else one by one.
template <typename S>
NDCONV_HD void tiled_store(const Geometry& g, float* out, const TileOrigin& t,
                           const float (&acc)[S::KO][S::TX], int tx, int ty) {
  const int64_t x0 = int64_t{t.o[0]} + tx * S::TX;
  const int64_t o1 = int64_t{t.o[1]} + ty;
  if (o1 >= g.out_extent[1])
    return;
  float* base = out + o1 * g.out_stride[1] + int64_t{t.o[2]} * g.out_stride[2];
  NDCONV_UNROLL
  for (int q = 0; q < S::KO; ++q) {
    if (t.o[3] + q >= g.out_extent[3])
      break;
    float* row = base + (t.o[3] + q) * g.out_stride[3];
    float* first = row + x0 * g.out_stride[0];
    if (g.out_stride[0] == 1 && x0 + S::TX <= g.out_extent[0] &&
        reinterpret_cast<uintptr_t>(first) % 16 == 0) {
      tiled_write<S::TX>(first, acc[q]);
      continue;
    }
    NDCONV_UNROLL
    for (int x = 0; x < S::TX; ++x) {
      if (x0 + x < g.out_extent[0])
        row[(x0 + x) * g.out_stride[0]] = acc[q][x];
    }
  }
}

/// Launch shapes (kernels/schedule.h's LaunchShape), shared by the launcher and the host emulation.

/// Tiled kernel: one block of S::kThreads threads per tile of S::kTileX x S::BY x S::KO outputs,
/// the tiles in tiled_origin's order on grid x (blocks walk tiles blockIdx.x + k * gridDim.x, so
/// the launcher may shrink the grid to the blocks the device holds: tiled_resident_grid); dynamic
/// shared memory for the taps and two input planes (and a halo, tiled_add_halo).
template <typename S>
LaunchShape tiled_launch_shape(const Geometry& g) {
  LaunchShape s;
  s.block[0] = S::kThreads;
  s.grid[0] = std::min<int64_t>(tiled_tile_count<S>(g), kMaxGridX);
  s.shared_bytes = static_cast<int>(sizeof(float)) * tiled_layout<S>(g).total_floats;
  return s;
}

/// The lead-tap shape's kernels with row code fixed for one filter width (TiledRowsFixed: lead
/// taps, taps in the last block of 8, blocks of 8 per tap row), for the odd widths 3, 5, ..., 15
/// of the same region, whose lead taps are (K0 - 1) / 2 mod 4 (tiled_lead); other widths take the
/// shape's kernel for every width. A width fixed at compile time unrolls the row loop completely
/// (no loop counters, taps at constant offsets), which pays most for short filters.
using TiledLeadShape = TiledShape<8, 4, 4, 32, true>;
using TiledFixedRowsList =
    std::tuple<TiledRowsFixed<3, 6, 1>, TiledRowsFixed<2, 7, 1>, TiledRowsFixed<1, 8, 1>,
               TiledRowsFixed<0, 1, 2>, TiledRowsFixed<3, 6, 2>, TiledRowsFixed<2, 7, 2>,
               TiledRowsFixed<1, 8, 2>>;

/// A tiled launch's grid where `resident_blocks` blocks fit on the device at once: at most that
/// many, each walking several tiles (0: one block per tile, up to the grid's limit).
inline void tiled_resident_grid(LaunchShape& s, int64_t resident_blocks) {
  if (resident_blocks > 0)
    s.grid[0] = std::min(s.grid[0], resident_blocks);
}

}  // namespace ndconv::kernels
