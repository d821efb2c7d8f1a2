// The tensor-core bank kernel's indexing (tensor_core_kernel.cuh), host and device: the tiles, the
// rows a block stages, the A fragments' words and the epilogue's exchange of digits. The host
// emulation (tests/gpu/tensor_core_emulation_test.cpp) runs these very functions lane by lane in
// CI, so that a mistake in the kernel's index arithmetic shows without a GPU.
#pragma once

#include <cstdint>

#include "cuda/bank/tensor_core_layout.h"

namespace ndconv::cuda_bank {

struct TensorCoreArgs {
  const uint8_t* padded;  ///< the 8-bit padded volume (tensor_core_layout.h)
  int64_t row_bytes, e1, e2, e3;
  int64_t n0, n1, n2, n3;
  int64_t tiles_x, tiles_y;  ///< tiles along x and axis 1; then n2, n3 positions
  int count;                 ///< filters
  int frames;                ///< tap frames (TensorCoreGeometry::frames)
  const int32_t* fragments;  ///< TensorCoreWeights::fragments
  const float* scales;       ///< TensorCoreWeights::scales
  float* out;
  int64_t stride;  ///< floats between the filters' output volumes
  /// The weighted sum (a kernel compiled Weighted, one pass): filter f's weight at weights + f *
  /// stride + voxel, the sum into `sum` (one volume); `out` unused.
  const float* weights;
  float* sum;
  int64_t copy_bytes;  ///< bytes between the padded volume's shifted copies (Global tiles)
};

/// A tile's first output.
struct TensorCoreOrigin {
  int64_t x0, y0, m2, m3;
};

/// The 4 bytes that start `shift` bits (0 to 24) into `lo`, continued in `hi`: a funnel shift.
NDCONV_HD uint32_t shifted_word(uint32_t lo, uint32_t hi, int shift) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, shift);
#else
  return static_cast<uint32_t>(((uint64_t{hi} << 32 | lo) >> shift) & 0xffffffffu);
#endif
}

/// The 4 bytes that start `shift` bits into word `word`: two aligned loads and a funnel shift.
NDCONV_HD uint32_t unaligned_word(const uint32_t* words, int word, int shift) {
  return shifted_word(words[word], words[word + 1], shift);
}

/// Where a block's A windows come from. Funnel: one copy of each staged row, two aligned loads and
/// a funnel shift per window. Shared, Global: each staged row kept as 4 copies, copy s starting s
/// bytes into the row, so that every window is one aligned word of the copy its first byte's
/// offset picks; Shared builds copies 1 to 3 in shared memory from copy 0 once per tile, Global
/// stages them from 4 shifted copies of the padded volume in device memory (shift_padded_copies).
enum class TensorCoreCopies { Funnel, Shared, Global };

/// A block's shape and its staged rows: MTiles M tiles of 16 outputs along x per warp, Warps warps
/// of Rows output rows along axis 1 each, the windows from Copies, the filter's K slots Taps
/// (TensorCoreTapShape). Rows 2 (2 groups a tap row): a warp's two rows share its A fragments:
/// each K chunk is 4 consecutive staged rows of one plane (two chunks a plane, rows y .. y + 7 of
/// the pair's y, y + 1), which meet output y with tap rows 4h .. 4h + 3 and output y + 1 with
/// 4h - 1 .. 4h + 2, so each chunk has two B operands (chunk_weight_row), one per output row, and
/// every A fragment feeds both. StreamWeights: the pass's weights pass through shared memory a tap
/// frame at a time (two frames' buffers, the next (tile, frame)'s copied with its rows), for
/// filters whose every frame's weights do not fit (9^4: 567 KB a pass); else all frames' stay.
template <int MTiles, int Warps, TensorCoreCopies Copies, int Rows = 1,
          class Taps = TensorCoreQuadratureTaps, bool StreamWeights = false>
struct TensorCoreTile {
  using S = TensorCoreShape;
  using TapShape = Taps;
  static_assert(Rows == 1 || (Rows == 2 && Taps::kGroups == 2 && Taps::kK1 <= 2 * S::kChunkRows),
                "one or two rows");
  static constexpr int kMTiles = MTiles;
  static constexpr int kWarps = Warps;
  static constexpr int kRows = Rows;
  static constexpr int kBlockRows = Warps * Rows;  ///< output rows along axis 1 per block
  static constexpr int kK1 = Taps::kK1, kK3 = Taps::kK3, kGroups = Taps::kGroups;
  /// K chunks per output: 8 of the flattened tap rows' groups each (Rows 1), or two per plane
  /// (Rows 2).
  static constexpr int kChunks = Rows == 1 ? Taps::kChunks : 2 * kK3;
  /// B operands per pass (chunk x output row of the warp's) and their words, per tap frame.
  static constexpr int kWeightChunks = kChunks * Rows;
  static constexpr int kFragmentWords = kWeightChunks * S::kNTiles * 32 * 2;
  static constexpr bool kStreamWeights = StreamWeights;
  static constexpr TensorCoreCopies kCopyMode = Copies;
  static constexpr bool kShifted = Copies != TensorCoreCopies::Funnel;
  static constexpr int kThreads = 32 * Warps;
  static constexpr int kWarpX = 16 * MTiles;  ///< outputs along x per warp and per block
  static_assert(S::kRowAlign % kWarpX == 0, "tiles inside the padded rows");
  /// Bytes of an input row a block stages: its outputs' inputs and the last windows' overhang.
  static constexpr int kRowBytes = kWarpX + Taps::kRowOverhang;
  static constexpr int kRowChunks = kRowBytes / 16;  ///< 16-byte copies per staged row
  static constexpr int kCopyWords = kRowBytes / 4;
  static constexpr int kCopies = kShifted ? 4 : 1;
  /// Copies of each row that the tile's 16-byte copies stage (the others built in shared memory).
  static constexpr int kStagedCopies = Copies == TensorCoreCopies::Global ? 4 : 1;
  /// Words of a staged row: its copies; words between planes: the rows and a pad that keeps the
  /// two tap rows a fragment reads in distinct banks across a plane's end as within a plane.
  static constexpr int kRowWords = kCopies * kCopyWords;
  static constexpr int kRowsY = kBlockRows + kK1 - 1;
  static constexpr int kPlanePad = (((kK1 - kRowsY) * kRowWords) % 32 + 32) % 32;
  static constexpr int kPlaneWords = kRowsY * kRowWords + kPlanePad;
  static constexpr int kStagedRows = kRowsY * kK3;
  static constexpr int kTileBytes = kK3 * kPlaneWords * 4;
  /// Entries (pairs of ints: lo, hi) of the chunks' row table, [chunk][t] (chunk_rows), and its
  /// bytes in shared memory, a whole number of 16-byte chunks.
  static constexpr int kRowTableEntries = 4 * kChunks;
  static constexpr int kRowTableBytes = (kRowTableEntries * 8 + 15) / 16 * 16;
  /// Tap frames' weights in shared memory at once: two (streamed), or every frame's.
  NDCONV_HD static constexpr int weight_frames(int frames) { return StreamWeights ? 2 : frames; }
  /// Shared bytes of a launch of `frames` tap frames: the pass's fragments (weight_frames), the
  /// row table and two tiles' rows (one frame's each).
  NDCONV_HD static constexpr int shared_bytes(int frames) {
    return weight_frames(frames) * kFragmentWords * 4 + kRowTableBytes + 2 * kTileBytes;
  }
  /// Words of each shifted copy one tile builds (copies 1 to 3 of each staged row): all but the
  /// last, which would need bytes past the row.
  static constexpr int kBuiltWords = kCopyWords - 1;
  /// The last word of a copy that a fragment reads (lane_word's largest 1, the last group's
  /// kGroups - 1, the last M tile's second window 4 MTiles - 2 on, the funnel's next word): inside
  /// the words staged (funnel) or built (shifted copies).
  static constexpr int kLastWord = 4 * MTiles + kGroups - 2 + (kShifted ? 0 : 1);
  static_assert(kLastWord < (kShifted ? kBuiltWords : kCopyWords), "inside the staged row");
  static constexpr int kBuildItems =
      Copies == TensorCoreCopies::Shared ? kStagedRows * kBuiltWords : 0;
  /// 16-byte copies a tile stages.
  static constexpr int kStageItems = kStagedRows * kRowChunks * kStagedCopies;
  static_assert(kPlanePad % 4 == 0 && kRowWords % 4 == 0, "16-byte aligned rows");

  /// Staged row `row` (plane j3 = row / kRowsY, row yy = row % kRowsY) in words from the tile.
  NDCONV_HD static int row_word(int row) {
    return row / kRowsY * kPlaneWords + row % kRowsY * kRowWords;
  }

  /// Tile i (< tiles_x * tiles_y * n2 * n3) of a pass, x fastest.
  NDCONV_HD static TensorCoreOrigin origin(const TensorCoreArgs& a, int64_t i) {
    TensorCoreOrigin o;
    o.x0 = (i % a.tiles_x) * kWarpX;
    i /= a.tiles_x;
    o.y0 = (i % a.tiles_y) * kBlockRows;
    i /= a.tiles_y;
    o.m2 = i % a.n2;
    o.m3 = i / a.n2;
    return o;
  }

  /// The padded bytes that 16-byte copy `i` (< kStageItems) of a tile's tap frame `frame` reads
  /// (staged row (j3, yy) is padded row (y0 + yy, m2 + frame, m3 + j3), of copy i / (kStagedRows
  /// kRowChunks) of the padded volume), or -1 for a row past e1 (zeros); it lands at
  /// staged_offset(i) of the tile's buffer.
  NDCONV_HD static int64_t staged_source(const TensorCoreArgs& a, const TensorCoreOrigin& o,
                                         int frame, int i) {
    const int copy = i / (kStagedRows * kRowChunks);
    i %= kStagedRows * kRowChunks;
    const int row = i / kRowChunks, chunk = i % kRowChunks;
    const int j3 = row / kRowsY, yy = row % kRowsY;
    if (o.y0 + yy >= a.e1)
      return -1;
    return copy * a.copy_bytes +
           (((o.m3 + j3) * a.e2 + o.m2 + frame) * a.e1 + o.y0 + yy) * a.row_bytes + o.x0 +
           16 * chunk;
  }
  NDCONV_HD static int staged_offset(int i) {
    const int copy = i / (kStagedRows * kRowChunks);
    i %= kStagedRows * kRowChunks;
    return 4 * (row_word(i / kRowChunks) + copy * kCopyWords) + 16 * (i % kRowChunks);
  }

  /// Builds word w of copies 1 to 3 of staged row `row` (i = row * kBuiltWords + w <
  /// kBuildItems) from words w and w + 1 of its copy 0.
  NDCONV_HD static void build_shifted(uint32_t* tile, int i) {
    uint32_t* r = tile + row_word(i / kBuiltWords);
    const int w = i % kBuiltWords;
    const uint32_t lo = r[w], hi = r[w + 1];
    r[kCopyWords + w] = shifted_word(lo, hi, 8);
    r[2 * kCopyWords + w] = shifted_word(lo, hi, 16);
    r[3 * kCopyWords + w] = shifted_word(lo, hi, 24);
  }

  /// The staged row, in words from the tile, that tap row r (j3 * k1 + j1) of warp 0 reads; rows
  /// past the filter read row 0 (their weights are zero).
  NDCONV_HD static int tap_row_word(int r) {
    return r >= Taps::kTapRows ? 0 : row_word(r / kK1 * kRowsY + r % kK1);
  }
  /// The word, from the tile, where group G's windows start for warp 0 (output 0): its tap row's,
  /// 4 bytes (a word, in every copy) on per group; groups past the filter read row 0.
  NDCONV_HD static int group_word(int group) {
    return group >= Taps::kTapGroups ? 0 : tap_row_word(group / kGroups) + group % kGroups;
  }

  /// Streamed weights: the 16-byte copy i (< kFragmentWords / 4) of tap frame `frame`'s B fragments
  /// of pass `pass` (from a.fragments, in words) and where it lands in the frame buffer `buffer`
  /// (0, 1; in words from the block's fragments); without streaming, every frame's in place.
  NDCONV_HD static int64_t weight_source(int pass, int frames, int frame, int i) {
    return (int64_t{pass} * frames + frame) * kFragmentWords + 4 * i;
  }
  NDCONV_HD static int weight_offset(int frame, int buffer, int i) {
    return (StreamWeights ? buffer : frame) * kFragmentWords + 4 * i;
  }

  /// A lane's window within a staged row for its M tile 0 and group 0: bytes g on (the group's
  /// 4 (t % 2) or 4 q come from chunk_rows). Shifted: the copy g % 4 and the aligned word there;
  /// else the word it starts in and the shift into it.
  NDCONV_HD static int lane_word(int lane) {
    const int g = lane / 4;
    return (g % 4) * (kCopies > 1 ? kCopyWords : 0) + (g & ~3) / 4;
  }
  NDCONV_HD static int lane_shift(int lane) { return kShifted ? 0 : 8 * (lane / 4 % 4); }

  /// The words, from warp 0's window, where K chunk c's A fragments of the lanes with t = lane %
  /// 4 start: group 8c + t (registers 0, 1; K slots 4t ..) and 8c + 4 + t (registers 2, 3; 16 +
  /// 4t ..), each its tap row's word plus its group within the row. The kernel keeps them in a
  /// table (chunk_row_table), one 64-bit load per chunk.
  NDCONV_HD static void chunk_rows(int c, int t, int& lo, int& hi) {
    static_assert(S::kChunkGroups == 8, "groups 8c + t and 8c + 4 + t");
    if constexpr (Rows == 1) {
      lo = group_word(S::kChunkGroups * c + t);
      hi = group_word(S::kChunkGroups * c + 4 + t);
    } else {  // plane c / 2, staged rows 4 (c % 2) + t / 2 and + 2 of the warp's first
      const int first = c / 2 * kRowsY + 4 * (c % 2) + t / 2;
      lo = row_word(first) + t % 2;
      hi = row_word(first + 2) + t % 2;
    }
  }
  /// The warp's staged rows start Rows rows apart.
  NDCONV_HD static int warp_word(int warp) { return Rows * warp * kRowWords; }

  /// The A fragment of M tile m for the chunk whose words (chunk_rows for the lane's t) are lo
  /// and hi: `words` at the warp's row of the staged tile plus the lane's word; registers 0, 1 from
  /// row lo (outputs g, g + 8), 2, 3 from row hi.
  NDCONV_HD static void a_fragment(const uint32_t* words, int lo, int hi, int m, int shift,
                                   uint32_t (&a)[4]) {
    lo += 4 * m;
    hi += 4 * m;
    if constexpr (kShifted) {
      a[0] = words[lo];
      a[1] = words[lo + 2];
      a[2] = words[hi];
      a[3] = words[hi + 2];
    } else {
      a[0] = unaligned_word(words, lo, shift);
      a[1] = unaligned_word(words, lo + 2, shift);
      a[2] = unaligned_word(words, hi, shift);
      a[3] = unaligned_word(words, hi + 2, shift);
    }
  }
};

/// The kernel's arguments for `g` with Tile's tiles; `padded`, `fragments`, `scales` and `outputs`
/// on the device as launch_tensor_core_bank's (in host memory for
/// the emulation); for a Global tile `padded` holds the 4 shifted copies (shift_padded_copies).
template <class Tile>
TensorCoreArgs tensor_core_args(const TensorCoreGeometry& g, const uint8_t* padded,
                                const int32_t* fragments, const float* scales, float* outputs) {
  TensorCoreArgs a{};
  a.padded = padded;
  a.row_bytes = g.row_bytes;
  a.e1 = g.padded_extent[1];
  a.e2 = g.padded_extent[2];
  a.e3 = g.padded_extent[3];
  a.n0 = g.outputs[0];
  a.n1 = g.outputs[1];
  a.n2 = g.outputs[2];
  a.n3 = g.outputs[3];
  a.tiles_x = (a.n0 + Tile::kWarpX - 1) / Tile::kWarpX;
  a.tiles_y = (a.n1 + Tile::kBlockRows - 1) / Tile::kBlockRows;
  a.count = g.count;
  a.frames = g.frames();
  a.fragments = fragments;
  a.scales = scales;
  a.out = outputs;
  a.stride = g.voxels();
  a.weights = nullptr;
  a.sum = nullptr;
  a.copy_bytes = Tile::kStagedCopies > 1 ? g.padded_bytes() : 0;
  return a;
}

/// The kernel's compiled variant: 2 M tiles per warp, 4 warps of two output rows sharing their A
/// fragments, one copy of each staged row (funnel shifts), at 3 blocks per SM (tensor_core.cu): the
/// fastest of dev/tensor_bank_sweep.cu's 14 shapes (H200, run 16, 256^3 x 12 x 7^3): 1.244 ms
/// (171% of the FP32 peak in useful FLOP/s), against 1.317 ms for 4 M tiles of one row, 1.296 ms
/// with shifted copies built in shared memory, 1.300 ms with the K loop unrolled by 2, 1.34-1.86 ms
/// for the others.
using TensorCoreDefaultTile = TensorCoreTile<2, 4, TensorCoreCopies::Funnel, 2>;

/// The compiled variant for several tap frames (a 4D 7^4 filter): every frame's weights stay in
/// shared memory (7 frames x 19.5 KB with one output row per warp; two rows per warp need twice
/// that, more than an SM holds), so one block per SM (tensor_core.cu): 12 warps of 4 M tiles, the
/// rows' shifted copies built in shared memory (216 KB in all): the fastest of
/// dev/tensor_bank_sweep.cu's 4D shapes (H200, run 18, 128^3 x 32 x 24 x 7^4): 51.96 ms (230% of
/// the FP32 peak in useful FLOP/s), against 56.89 ms with funnel shifts, 55.45 ms with funnel
/// shifts and the K loop unrolled by 2, 60.86 ms for 8 warps, 60.77 ms for 16 warps of 2 M tiles.
using TensorCoreFramesTile = TensorCoreTile<4, 12, TensorCoreCopies::Shared>;

/// The compiled variants for the reconstruction's weighted sum (Taps:
/// TensorCoreReconstructionTaps11 or 9; 3 groups of 4 taps a tap row: 46 chunks a frame for 11 x 11
/// tap rows, 31 for 9 x 9): the pass's weights streamed a frame at a time (70.6 / 46.5 KB each, two
/// buffers), 16 warps of 2 M tiles, one row each, funnel shifts: 177 / 122 KB, one block per SM,
/// 110 registers. The fastest of dev/tensor_bank_sweep.cu's recon shapes (H200, tc-recon rounds
/// 2-3, 160^3 x 20 x 11 x 11^4, each checked bit for bit on the GPU first): 190.98-191.35 ms,
/// against 218.35-218.69 ms for 12 warps of 4 M tiles (161 registers), 220.42 ms for those with the
/// K loop unrolled by 2, 221.50 ms for 8 warps of 4 M tiles, 254.05 ms for 10, 197.02 ms for 24
/// warps of 2 M tiles; 20 warps (191.57 ms) and the K loop unrolled by 2 (190.47 ms) within the
/// noise. Shifted copies built in shared memory do not fit beside the two weight buffers (229 KB
/// for 9^4 with 12 warps of 4 M).
template <class Taps>
using TensorCoreWideFramesTile = TensorCoreTile<2, 16, TensorCoreCopies::Funnel, 1, Taps, true>;
using TensorCoreWideFramesTile11 = TensorCoreWideFramesTile<TensorCoreReconstructionTaps11>;
using TensorCoreWideFramesTile9 = TensorCoreWideFramesTile<TensorCoreReconstructionTaps9>;

/// Output rows per warp of the tile that runs `g` (what tensor_core_weights lays out for it).
inline int tensor_core_tile_rows(const TensorCoreGeometry& g) {
  return g.taps().groups > 2 ? TensorCoreWideFramesTile11::kRows
         : g.frames() > 1    ? TensorCoreFramesTile::kRows
                             : TensorCoreDefaultTile::kRows;
}
static_assert(
    TensorCoreDefaultTile::kStagedCopies == 1 && TensorCoreFramesTile::kStagedCopies == 1 &&
        TensorCoreWideFramesTile11::kStagedCopies == 1 &&
        TensorCoreWideFramesTile9::kStagedCopies == 1 &&
        TensorCoreWideFramesTile11::kRows == TensorCoreWideFramesTile9::kRows,
    "the compiled tiles read the 8-bit padded volume alone (padded_input_image copies 1)");

namespace tensor_core_epilogue {

/// The four digits of the lane's filter 4p + t (kept_filter) at its output `half` (row g + 8 half
/// of the M tile, kept_x) from its C fragments of n tiles 2p (`even`) and 2p + 1 (`odd`):
/// registers 2 half and 2 half + 1 of each (column_filter, column_digit).
NDCONV_HD void lane_digits(const int32_t (&even)[4], const int32_t (&odd)[4], int half,
                           int32_t (&digits)[4]) {
  digits[0] = even[2 * half];
  digits[1] = even[2 * half + 1];
  digits[2] = odd[2 * half];
  digits[3] = odd[2 * half + 1];
}
/// The filter (within the pass) of n tile pair p and the output along x (from the M tile's first)
/// of `half` that a lane writes.
NDCONV_HD int kept_filter(int lane, int p) {
  return 4 * p + lane % 4;
}
NDCONV_HD int kept_x(int lane, int half) {
  return lane / 4 + 8 * half;
}

/// The store of the weighted sum at the quad's output (m, half) (every lane of the quad holds it
/// after quad_sum's shuffles): lane t = (2 m + half) % 4, so each lane stores a share.
NDCONV_HD bool stores_sum(int lane, int m, int half) {
  return lane % 4 == (2 * m + half) % 4;
}

static_assert(TensorCoreShape::kSlices == 4 &&
                  TensorCoreShape::kFilters == 2 * TensorCoreShape::kNTiles,
              "each n tile pair holds the four digits of four filters");

}  // namespace tensor_core_epilogue

}  // namespace ndconv::cuda_bank
