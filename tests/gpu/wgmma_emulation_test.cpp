// Host emulation of the wgmma filter bank (src/cuda/bank/wgmma_layout.h, wgmma_kernel.cuh), run in
// CI without a GPU: the kernel block by block, warpgroup by warpgroup and lane by lane with its own
// index functions (the staged rows, the A fragments, B read through the matrix descriptor's
// addressing from the weights' shared-memory layout, the accumulators through the wgmma D
// fragment's mapping, the mma.sync epilogue), bit for bit against emulate_tensor_core_bank (the
// mma.sync kernel's arithmetic, checked against float64 in tensor_core_emulation_test.cpp), 3D and
// 4D, extents that are no multiple of the tiles, two passes.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/bank/tensor_core_layout.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/bank/wgmma_layout.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_bank::TensorCoreCopies;
using cuda_bank::TensorCoreGeometry;
using cuda_bank::TensorCoreShape;
using cuda_bank::TensorCoreTile;
using cuda_bank::WgmmaShape;

// The epilogue reads the wgmma accumulators as the mma.sync C fragments of 6 n tiles: register
// r = 4 n + q of warp w is C register q of n tile n for the warp's 16 rows.
TEST(WgmmaLayout, TheAccumulatorsAreTheMmaSyncFragmentsPerNTile) {
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int r = 0; r < WgmmaShape::accumulators(2); ++r) {
        EXPECT_EQ(cuda_bank::wgmma_accumulator_row(w, lane, r),
                  16 * w + cuda_bank::c_fragment_row(lane, r % 4));
        // Row v's 48 columns in registers 24 v to 24 v + 23.
        EXPECT_EQ(cuda_bank::wgmma_accumulator_column(lane, r) / TensorCoreShape::kColumns,
                  r / (TensorCoreShape::kColumns / 2));
        EXPECT_EQ(cuda_bank::wgmma_accumulator_column(lane, r),
                  8 * (r / 4) + cuda_bank::c_fragment_column(lane, r % 4));
      }
}

// Every byte of a chunk's B (two rows' columns) once, where the descriptor's addressing finds it.
TEST(WgmmaLayout, TheDescriptorReadsEveryWeightByteOnce) {
  const uint64_t d = cuda_bank::wgmma_b_descriptor(0);
  std::vector<int> seen(WgmmaShape::chunk_bytes(2), 0);
  for (int k = 0; k < WgmmaShape::kK; ++k)
    for (int n = 0; n < WgmmaShape::n(2); ++n) {
      const int64_t byte = cuda_bank::wgmma_descriptor_byte(d, k, n);
      ASSERT_EQ(byte, cuda_bank::wgmma_b_offset(k, n));
      ASSERT_GE(byte, 0);
      ASSERT_LT(byte, WgmmaShape::chunk_bytes(2));
      ++seen[static_cast<size_t>(byte)];
    }
  for (int s : seen)
    EXPECT_EQ(s, 1);
  // The address field: 16-byte units, 14 bits; the offsets' fields from bit 16 and bit 32.
  const uint64_t at = cuda_bank::wgmma_b_descriptor(0x1230);
  EXPECT_EQ(at & 0x3fff, 0x123u);
  EXPECT_EQ(at >> 16 & 0x3fff, uint64_t{WgmmaShape::kKCoreBytes / 16});
  EXPECT_EQ(at >> 32 & 0x3fff, uint64_t{WgmmaShape::kNCoreBytes / 16});
  EXPECT_EQ(at >> 62, 0u);
}

// A padded 8-bit volume of canonical output extents n (random bytes, the border too: the kernel
// and the emulation read the same bytes) with `count` filters of 7 x 7 x frames x 7 taps.
struct Problem {
  TensorCoreGeometry g;
  std::vector<uint8_t> bytes;
  std::vector<float> taps;
};

Problem make_problem(const Index& n, int frames, int count, uint64_t seed) {
  Problem p;
  p.g.outputs = n;
  p.g.filter = {7, 7, frames, 7};
  p.g.count = count;
  p.g.padded_extent = {0, n[1] + 6, n[2] + frames - 1, n[3] + 6};
  p.g.row_bytes = cuda_bank::tensor_core_row_bytes(n[0]);
  std::mt19937_64 rng(seed);
  p.bytes.resize(static_cast<size_t>(p.g.padded_bytes()));
  for (uint8_t& b : p.bytes)
    b = static_cast<uint8_t>(rng() & 0xff);
  p.taps.resize(static_cast<size_t>(count) * 343 * frames);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < p.taps.size(); ++i)
    p.taps[i] = u(rng) * std::pow(10.0f, -static_cast<float>(i % 4));
  return p;
}

// The wgmma kernel on the host: `grid_x` blocks per pass walk the tiles; each (tile, frame)'s rows
// staged into a buffer of garbage as the kernel's copies place them and, for shifted copies, built
// as the kernel builds them; per warpgroup, M tile and K chunk the 64 x 32 A from the 4 warps'
// fragments, the 32 x 48 B through the descriptor from the WgmmaWeights bytes, the products into
// each lane's accumulator registers; the epilogue as the kernel's. PairTails: the warp-specialised
// kernel's paired tail chunks (wgmma_pair_chunk, wgmma_pair_chunk_rows): a block's (tile, frame)
// items staged into two buffers in turn, the second frame of a pair reading the first's buffer
// in its tail chunk.
template <class Tile, bool PairTails = false>
void emulate_wgmma_kernel(const cuda_bank::TensorCoreArgs& a, const uint8_t* weights,
                          int64_t grid_x, int passes) {
  namespace epilogue = cuda_bank::tensor_core_epilogue;
  using S = TensorCoreShape;
  using W = WgmmaShape;
  constexpr int kN = W::n(Tile::kRows), kAcc = W::accumulators(Tile::kRows);
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const uint64_t descriptor = cuda_bank::wgmma_b_descriptor(0);
  constexpr int kTileWords = Tile::kTileBytes / 4;
  std::vector<uint32_t> buffers(2 * kTileWords);
  for (int pass = 0; pass < passes; ++pass)
    for (int64_t block = 0; block < grid_x; ++block)
      for (int64_t t = block; t < pass_tiles; t += grid_x) {
        const cuda_bank::TensorCoreOrigin o = Tile::origin(a, t);
        // [warp][lane][m][r]
        std::vector<int32_t> acc(static_cast<size_t>(Tile::kWarps * 32 * Tile::kMTiles * kAcc), 0);
        auto acc_of = [&](int warp, int lane, int m, int r) -> int32_t& {
          return acc[static_cast<size_t>(((warp * 32 + lane) * Tile::kMTiles + m) * kAcc + r)];
        };
        for (int frame = 0; frame < a.frames; ++frame) {
          // The block's item (tile, frame) and its buffer.
          const int buffer =
              PairTails ? static_cast<int>(((t - block) / grid_x * a.frames + frame) % 2) : 0;
          uint32_t* const staged = buffers.data() + buffer * kTileWords;
          std::fill(staged, staged + kTileWords, 0xA5C3E1F7u);
          uint8_t* bytes = reinterpret_cast<uint8_t*>(staged);
          for (int i = 0; i < Tile::kStageItems; ++i) {
            const int64_t source = Tile::staged_source(a, o, frame, i);
            if (source < 0)
              std::memset(bytes + Tile::staged_offset(i), 0, 16);
            else
              std::memcpy(bytes + Tile::staged_offset(i), a.padded + source, 16);
          }
          for (int i = 0; i < Tile::kBuildItems; ++i)
            Tile::build_shifted(staged, i);
          // PairTails: frame 2p's chunks but its tail, 2p + 1's tail chunk (both frames' tail
          // rows) and its others; an odd last frame all its own.
          const bool first_of_pair = PairTails && frame % 2 == 0 && frame + 1 < a.frames;
          const bool second_of_pair = PairTails && frame % 2 == 1;
          const int chunks = first_of_pair ? Tile::kChunks - 1 : Tile::kChunks;
          for (int group = 0; group < Tile::kWarps / 4; ++group)
            for (int c = 0; c < chunks; ++c) {
              const int64_t first_chunk = PairTails
                                              ? int64_t{pass} * a.frames * Tile::kChunks +
                                                    cuda_bank::wgmma_pair_chunk(frame)
                                              : (int64_t{pass} * a.frames + frame) * Tile::kChunks;
              const uint8_t* chunk = weights + (first_chunk + c) * W::chunk_bytes(Tile::kRows);
              int32_t matrix_b[32][kN];
              for (int k = 0; k < 32; ++k)
                for (int n = 0; n < kN; ++n)
                  matrix_b[k][n] = static_cast<int8_t>(
                      chunk[cuda_bank::wgmma_descriptor_byte(descriptor, k, n)]);
              for (int m = 0; m < Tile::kMTiles; ++m) {
                int32_t matrix_a[64][32];
                for (int w = 0; w < 4; ++w) {
                  const int warp = 4 * group + w;
                  const uint32_t* words = staged + Tile::warp_word(warp);
                  for (int lane = 0; lane < 32; ++lane) {
                    uint32_t frag[4];
                    int lo = 0, hi = 0;
                    if constexpr (PairTails) {
                      if (second_of_pair)
                        cuda_bank::wgmma_pair_chunk_rows<Tile>((1 - 2 * buffer) * kTileWords, c,
                                                               lane % 4, lo, hi);
                      else
                        Tile::chunk_rows(c, lane % 4, lo, hi);
                    } else {
                      Tile::chunk_rows(c, lane % 4, lo, hi);
                    }
                    Tile::a_fragment(words + Tile::lane_word(lane), lo, hi, m,
                                     Tile::lane_shift(lane), frag);
                    for (int q = 0; q < 4; ++q)
                      for (int i = 0; i < 4; ++i)
                        matrix_a[cuda_bank::wgmma_a_row(w, lane, q)][cuda_bank::a_fragment_k(
                            lane, q, i)] = static_cast<uint8_t>(frag[q] >> (8 * i));
                  }
                }
                for (int w = 0; w < 4; ++w)
                  for (int lane = 0; lane < 32; ++lane)
                    for (int r = 0; r < kAcc; ++r) {
                      const int row = cuda_bank::wgmma_accumulator_row(w, lane, r),
                                column = cuda_bank::wgmma_accumulator_column(lane, r);
                      int32_t sum = 0;
                      for (int k = 0; k < 32; ++k)
                        sum += matrix_a[row][k] * matrix_b[k][column];
                      acc_of(4 * group + w, lane, m, r) += sum;
                    }
              }
            }
        }
        for (int warp = 0; warp < Tile::kWarps; ++warp)
          for (int v = 0; v < Tile::kRows; ++v) {
            const int64_t m1 = o.y0 + Tile::kRows * warp + v;
            const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
            for (int p = 0; p < S::kNTiles / 2; ++p)
              for (int lane = 0; lane < 32; ++lane) {
                const int f = pass * S::kFilters + epilogue::kept_filter(lane, p);
                for (int m = 0; m < Tile::kMTiles; ++m)
                  for (int half = 0; half < 2; ++half) {
                    int32_t even[4], odd[4], digits[4];
                    for (int q = 0; q < 4; ++q) {
                      even[q] = acc_of(warp, lane, m, S::kColumns / 2 * v + 8 * p + q);
                      odd[q] = acc_of(warp, lane, m, S::kColumns / 2 * v + 8 * p + 4 + q);
                    }
                    epilogue::lane_digits(even, odd, half, digits);
                    const int64_t x = o.x0 + 16 * m + epilogue::kept_x(lane, half);
                    if (f < a.count && x < a.n0 && m1 < a.n1)
                      a.out[f * a.stride + first + x] =
                          detail::combine_slices(digits, S::kSlices, a.scales[f]);
                  }
              }
          }
      }
}

template <class Tile, bool PairTails = false>
void check_wgmma_indexing(uint64_t seed, const Index& n, int frames,
                          const std::vector<int64_t>& grids = {1, 5}) {
  const int count = 13;  // a second pass of one filter
  const Problem p = make_problem(n, frames, count, seed);
  const TensorCoreGeometry& g = p.g;
  const cuda_bank::TensorCoreWeights one_row = cuda_bank::tensor_core_weights(g, p.taps.data());
  std::vector<float> expected(static_cast<size_t>(g.voxels() * count));
  poison(expected);
  cuda_bank::emulate_tensor_core_bank(g, p.bytes.data(), one_row, expected.data());
  cuda_bank::WgmmaWeights w = cuda_bank::wgmma_weights(
      g, cuda_bank::tensor_core_weights(g, p.taps.data(), Tile::kRows), Tile::kRows);
  ASSERT_EQ(static_cast<int64_t>(w.b.size()),
            int64_t{g.passes()} * g.frames() * WgmmaShape::frame_bytes(Tile::kRows));
  if (PairTails)
    cuda_bank::wgmma_pair_tails(g, w);
  for (int64_t grid_x : grids) {
    SCOPED_TRACE("grid " + std::to_string(grid_x));
    std::vector<float> out(expected.size());
    poison(out);
    const cuda_bank::TensorCoreArgs a =
        cuda_bank::tensor_core_args<Tile>(g, p.bytes.data(), nullptr, w.scales.data(), out.data());
    emulate_wgmma_kernel<Tile, PairTails>(a, w.b.data(), grid_x, g.passes());
    EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)), 0);
  }
}

// Canonical extents: partial tiles along x (70 = 64 + 6) and axis 1 (9 = 8 + 1, 13 = 12 + 1).
TEST(WgmmaEmulation, TheKernelsIndexingGivesTheMmaSyncArithmeticBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  {
    SCOPED_TRACE("4 M tiles, 4 warps, funnel shifts");
    check_wgmma_indexing<TensorCoreTile<4, 4, TensorCoreCopies::Funnel>>(seed, {70, 9, 1, 5}, 1);
  }
  {
    SCOPED_TRACE("2 M tiles, 8 warps, shifted copies built in shared memory");
    check_wgmma_indexing<TensorCoreTile<2, 8, TensorCoreCopies::Shared>>(seed, {70, 9, 1, 5}, 1);
  }
  {
    SCOPED_TRACE("N 96: 2 M tiles, 4 warps of two rows, funnel shifts");
    check_wgmma_indexing<TensorCoreTile<2, 4, TensorCoreCopies::Funnel, 2>>(seed, {70, 9, 1, 5}, 1);
  }
  {
    SCOPED_TRACE("N 96: 1 M tile, 8 warps of two rows, shifted copies built in shared memory");
    check_wgmma_indexing<TensorCoreTile<1, 8, TensorCoreCopies::Shared, 2>>(seed, {70, 19, 1, 5},
                                                                            1);
  }
}

TEST(WgmmaEmulation, TheKernelsIndexingOverTapFramesGivesTheMmaSyncArithmeticBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_wgmma_indexing<TensorCoreTile<4, 12, TensorCoreCopies::Shared>>(seed, {70, 13, 2, 2}, 7,
                                                                        {3});
  {
    SCOPED_TRACE("paired tail chunks, 7 frames (an odd last frame) and 6");
    check_wgmma_indexing<TensorCoreTile<4, 12, TensorCoreCopies::Shared>, true>(
        seed, {70, 13, 2, 2}, 7, {3});
    check_wgmma_indexing<TensorCoreTile<4, 12, TensorCoreCopies::Shared>, true>(
        seed, {70, 13, 2, 2}, 6, {3});
  }
}

}  // namespace
}  // namespace ndconv::test
