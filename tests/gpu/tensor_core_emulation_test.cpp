// Host emulation of the tensor-core filter bank (src/cuda/bank/tensor_core_layout.h), run in CI
// without a GPU: the weights' split into 8-bit digits, the 8-bit padded input, the B fragments'
// layout read back through the MMA's fragment mapping (the same integer sums as the plain sliced
// arithmetic, bit for bit), and the accuracy test that chose the digit count: per voxel, max
// |error| / sum |w| |x| against float64 on uniform, dark-speckle and echo-like 8-bit volumes with
// the quadrature bank's 12 real 7^3 filters, against the CPU's FP32 bank on the same data.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/canonical_axes.h"
#include "core/padding.h"
#include "cpu/cpu_backend.h"
#include "cuda/bank/tensor_core_layout.h"
#include "cuda/bank/tensor_core_policy.h"
#include "cuda/bank/tensor_core_tile.h"
#include "eight_bit_volumes.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_bank::TensorCoreGeometry;
using cuda_bank::TensorCoreShape;

const Index kFilter{7, 7, 7, 1};           // a 3D filter, volume axes
const Index kFilter4d{7, 7, 7, 7};         // a 4D filter
const Index kCanonicalFilter{7, 7, 1, 7};  // the 3D filter, canonical axes

// The volume's axes: 4 where n[3] > 1.
int dims_of(const Index& n) {
  return n[3] > 1 ? 4 : 3;
}

// A 3D or 4D volume (extents n, volume axes) padded as the FP32 bank pads it (zero boundary,
// `same` region, 7 taps along every axis), then as the tensor-core kernel's bytes.
struct PaddedBytes {
  TensorCoreGeometry geometry;
  std::vector<uint8_t> bytes;
};

// A size^dims filter, volume axes (7 unless told).
Index filter_of(int dims, int size = 7) {
  return {size, size, size, dims == 4 ? size : 1};
}

PaddedBytes padded_bytes(const std::vector<float>& input, const Index& n, int count, bool& packed,
                         int size = 7) {
  const int dims = dims_of(n);
  PaddedBytes p;
  TensorCoreGeometry& g = p.geometry;
  const int h = size / 2;
  Index stride{1, n[0], n[0] * n[1], n[0] * n[1] * n[2]}, offset{-h, -h, -h, -h};
  const Index cn = core::to_canonical(dims, n, 1);
  g.outputs = cn;
  g.filter = core::to_canonical(dims, filter_of(dims, size), 1);
  g.count = count;
  g.padded_extent = {0, cn[1] + g.filter[1] - 1, cn[2] + g.filter[2] - 1, cn[3] + g.filter[3] - 1};
  g.row_bytes = cuda_bank::tensor_core_row_bytes(n[0], g.taps().groups);
  const int64_t float_row = (n[0] + size - 1 + 3) / 4 * 4 + 4;  // any row at least x_count long
  core::PaddedVolume floats;
  core::build_padded(input.data(), cn, core::to_canonical(dims, stride, 0),
                     core::to_canonical(dims, offset, 0), g.padded_extent, n[0] + size - 1,
                     float_row, Boundary::Zero, 1, {}, floats);
  p.bytes.assign(static_cast<size_t>(g.padded_bytes()), 0xAB);
  packed = cuda_bank::pack_padded_bytes(g, floats.storage.get(), float_row, p.bytes.data(), 2);
  return p;
}

// A uniform 8-bit volume of extents n with `count` filters of spread taps, packed and split.
struct UniformBank {
  std::vector<float> input, taps;
  bool packed = false;
  PaddedBytes padded;
  cuda_bank::TensorCoreWeights weights;
  UniformBank(const Index& n, int count, uint64_t seed, int size = 7)
      : input(eight_bit_volume(EightBitKind::Uniform, n, seed)),
        taps(spread_taps(count, seed ^ 0x7a95, dims_of(n), size)),
        padded(padded_bytes(input, n, count, packed, size)),
        weights(cuda_bank::tensor_core_weights(padded.geometry, taps.data())) {}
};

TEST(TensorCoreSplit, DigitsStayInRangeAndLoseAtMostHalfTheLastDigit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<float> taps = spread_taps(3, seed);
  for (int slices : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(slices) + " slices");
    for (int f = 0; f < 3; ++f) {
      const float* filter = taps.data() + f * 343;
      const detail::SplitFilter s = detail::split_filter(filter, 343, slices);
      float largest = 0;
      for (int j = 0; j < 343; ++j)
        largest = std::max(largest, std::fabs(filter[j]));
      EXPECT_FLOAT_EQ(s.scale, largest / 127.0f);
      for (int d = 0; d < slices; ++d)
        for (int j = 0; j < 343; ++j)
          EXPECT_LE(std::abs(s.digits[d * 343 + j]), d == 0 ? 127 : 64);
      // Each later digit is 2^-7 of the one before; the remainder after the last is at most half
      // of it (the scale's own rounding adds a few float ulps).
      const double bound = 0.5 * std::pow(2.0, -7.0 * (slices - 1)) / 127.0;
      const double e = detail::split_error(filter, 343, s, slices);
      EXPECT_LE(e, bound * (1 + 1e-6));
      EXPECT_GT(e, 0.0);
    }
  }
  const std::vector<float> zeros(343, 0.0f);
  const detail::SplitFilter z = detail::split_filter(zeros.data(), 343, 4);
  EXPECT_EQ(z.scale, 0.0f);
  EXPECT_EQ(detail::split_error(zeros.data(), 343, z, 4), 0.0);
}

// combine_slices joins the two smallest digits in int32: the same float as the plain Horner scheme
// (a fused multiply-add at every step) for every accumulator a sum of fewer than 2^9 u8 x s8 taps
// can hold, the extremes included.
TEST(TensorCoreSplit, TheCombinationIsTheHornerSchemeBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int32_t top = 127 * 255 * 511, later = 64 * 255 * 511;  // the bounds, 2^9 - 1 taps
  std::uniform_int_distribution<int32_t> d0(-top, top), d(-later, later);
  const float scale = 0.0123f;
  auto horner = [&](const int32_t* acc, int slices) {
    float t = static_cast<float>(acc[slices - 1]);
    for (int s = slices - 2; s >= 0; --s)
      t = std::fma(t, 1.0f / 128, static_cast<float>(acc[s]));
    return t * scale;
  };
  for (int i = 0; i < 200000; ++i) {
    int32_t acc[4] = {d0(rng), d(rng), d(rng), d(rng)};
    if (i < 16)  // the extremes
      for (int s = 0; s < 4; ++s)
        acc[s] = ((i >> s) & 1 ? 1 : -1) * (s == 0 ? top : later);
    for (int slices : {2, 3, 4}) {
      const float got = detail::combine_slices(acc, slices, scale), want = horner(acc, slices);
      ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
          << slices << " slices: " << acc[0] << " " << acc[1] << " " << acc[2] << " " << acc[3];
    }
  }
}

TEST(TensorCoreSplit, TheSliceTestTakesFourDigitsNotThree) {
  const std::vector<float> taps = quadrature_bank_taps();
  TensorCoreGeometry g;
  g.filter = kCanonicalFilter;
  g.count = 12;
  const cuda_backend::TensorCoreBankPolicy policy;
  EXPECT_LE(cuda_bank::worst_split_error(g, taps.data(), 4), policy.max_split_error);
  EXPECT_GT(cuda_bank::worst_split_error(g, taps.data(), 3), policy.max_split_error);
}

TEST(TensorCorePack, TakesOnlyIntegersFrom0To255) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{19, 5, 4, 1};
  std::vector<float> input = eight_bit_volume(EightBitKind::Uniform, n, seed);
  input[0] = 255.0f;
  input[1] = 0.0f;
  bool packed = false;
  const PaddedBytes p = padded_bytes(input, n, 1, packed);
  ASSERT_TRUE(packed);
  const TensorCoreGeometry& g = p.geometry;
  // Output (x, y, z) reads padded (x + 3, y + 3, z + 3) at tap (3, 3, 3): the input voxel itself.
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x)
        ASSERT_EQ(p.bytes[static_cast<size_t>(((z + 3) * g.padded_extent[1] + y + 3) * g.row_bytes +
                                              x + 3)],
                  input[static_cast<size_t>((z * n[1] + y) * n[0] + x)]);
  for (float bad : {0.5f, 256.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity(), -0.25f}) {
    std::vector<float> changed = input;
    changed[changed.size() / 2] = bad;
    padded_bytes(changed, n, 1, packed);
    EXPECT_FALSE(packed) << bad;
  }
}

TEST(TensorCoreEmulation, FragmentsGiveTheSlicedArithmeticBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Extents that are no multiple of the kernel's tiles; 13 filters: two passes, the second of one;
  // a 4D sequence: 7 tap frames.
  struct Case {
    Index n;
    int count;
  };
  for (const Case& c :
       {Case{{37, 11, 9, 1}, 12}, Case{{37, 11, 9, 1}, 13}, Case{{11, 5, 4, 6}, 13}}) {
    const Index& n = c.n;
    const int count = c.count;
    SCOPED_TRACE(std::to_string(dims_of(n)) + "D, " + std::to_string(count) + " filters");
    const UniformBank b(n, count, seed + count);
    ASSERT_TRUE(b.packed);
    const std::vector<float>& input = b.input;
    const std::vector<float>& taps = b.taps;
    const PaddedBytes& p = b.padded;
    const TensorCoreGeometry& g = p.geometry;
    const cuda_bank::TensorCoreWeights& w = b.weights;
    std::vector<float> fragments(static_cast<size_t>(g.voxels() * count)), sliced(fragments.size());
    poison(fragments);
    poison(sliced);
    cuda_bank::emulate_tensor_core_bank(g, p.bytes.data(), w, fragments.data());
    cuda_bank::emulate_sliced_bank(g, p.bytes.data(), taps.data(), TensorCoreShape::kSlices,
                                   sliced.data());
    EXPECT_EQ(std::memcmp(fragments.data(), sliced.data(), fragments.size() * sizeof(float)), 0);
    const BankReference ref =
        bank_reference(input, n, dims_of(n) == 4 ? kFilter4d : kFilter, count, taps);
    EXPECT_LT(worst_voxel_error(ref, fragments.data()), 1e-6);
  }
}

// The kernel (tensor_core_kernel.cuh) on the host, block by block, warp by warp and lane by lane
// with its own index functions (Tile, tensor_core_tile.h): `grid_x` blocks per pass walk the tiles;
// each tile's rows are staged as the kernel's copies place them (into a buffer holding garbage, so
// that a word the kernel reads but never writes shows) and, for shifted copies, built as the
// kernel builds them; the lanes' A fragments come from the staged words, each MMA is formed from
// the PTX fragment mappings (tensor_core_layout.h), and the epilogue's exchange runs between lane
// pairs. The weights pass through a shared buffer as the kernel stages them (weight_source,
// weight_offset: a streaming tile's frame buffers alternate with its (tile, frame) steps). With
// a.weights, the weighted epilogue: each lane's sum, the quad's butterfly shuffles lane by lane,
// the store by the lane stores_sum names.
template <class Tile>
void emulate_kernel(const cuda_bank::TensorCoreArgs& a, int64_t grid_x, int passes) {
  namespace epilogue = cuda_bank::tensor_core_epilogue;
  using S = TensorCoreShape;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  std::vector<uint32_t> staged(Tile::kTileBytes / 4, 0xA5C3E1F7u);
  std::vector<int32_t> shared_weights(
      static_cast<size_t>(Tile::weight_frames(a.frames) * Tile::kFragmentWords), 0x5A3C1E0F);
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t block = 0; block < grid_x; ++block) {
      int buffer = 0;  // the block's (tile, frame) steps alternate the buffers
      for (int64_t t = block; t < pass_tiles; t += grid_x) {
        const cuda_bank::TensorCoreOrigin o = Tile::origin(a, t);
        // Every warp's accumulators, [warp][lane][v][m][n], summed over the tap frames.
        std::vector<std::array<int32_t, 4>> acc(
            static_cast<size_t>(Tile::kWarps * 32 * Tile::kRows * Tile::kMTiles * S::kNTiles),
            {0, 0, 0, 0});
        auto acc_of = [&](int warp, int lane, int v, int m, int n) -> std::array<int32_t, 4>& {
          return acc[static_cast<size_t>(
              (((warp * 32 + lane) * Tile::kRows + v) * Tile::kMTiles + m) * S::kNTiles + n)];
        };
        for (int frame = 0; frame < a.frames; ++frame, buffer ^= 1) {
          for (int i = 0; i < Tile::kFragmentWords / 4; ++i)
            std::memcpy(&shared_weights[static_cast<size_t>(Tile::weight_offset(frame, buffer, i))],
                        a.fragments + Tile::weight_source(pass, a.frames, frame, i), 16);
          const int32_t* fragments = shared_weights.data() + Tile::weight_offset(frame, buffer, 0);
          uint8_t* bytes = reinterpret_cast<uint8_t*>(staged.data());
          for (int i = 0; i < Tile::kStageItems; ++i) {
            const int64_t source = Tile::staged_source(a, o, frame, i);
            if (source < 0)
              std::memset(bytes + Tile::staged_offset(i), 0, 16);
            else
              std::memcpy(bytes + Tile::staged_offset(i), a.padded + source, 16);
          }
          for (int i = 0; i < Tile::kBuildItems; ++i)
            Tile::build_shifted(staged.data(), i);
          for (int warp = 0; warp < Tile::kWarps; ++warp) {
            const uint32_t* words = staged.data() + Tile::warp_word(warp);
            for (int c = 0; c < Tile::kChunks; ++c)
              for (int m = 0; m < Tile::kMTiles; ++m) {
                int32_t matrix_a[16][32];
                for (int lane = 0; lane < 32; ++lane) {
                  uint32_t frag[4];
                  int lo = 0, hi = 0;
                  Tile::chunk_rows(c, lane % 4, lo, hi);
                  Tile::a_fragment(words + Tile::lane_word(lane), lo, hi, m, Tile::lane_shift(lane),
                                   frag);
                  for (int q = 0; q < 4; ++q)
                    for (int i = 0; i < 4; ++i)
                      matrix_a[cuda_bank::a_fragment_row(lane, q)][cuda_bank::a_fragment_k(
                          lane, q, i)] = static_cast<uint8_t>(frag[q] >> (8 * i));
                }
                for (int v = 0; v < Tile::kRows; ++v)
                  for (int n = 0; n < S::kNTiles; ++n) {
                    int32_t matrix_b[32][8];
                    for (int lane = 0; lane < 32; ++lane)
                      for (int q = 0; q < 2; ++q)
                        for (int i = 0; i < 4; ++i)
                          matrix_b[cuda_bank::b_fragment_k(lane, q, i)]
                                  [cuda_bank::b_fragment_column(lane)] = static_cast<int8_t>(
                                      static_cast<uint32_t>(fragments[cuda_bank::fragment_word(
                                          c * Tile::kRows + v, n, lane, q)]) >>
                                      (8 * i));
                    for (int lane = 0; lane < 32; ++lane)
                      for (int q = 0; q < 4; ++q) {
                        const int row = cuda_bank::c_fragment_row(lane, q),
                                  column = cuda_bank::c_fragment_column(lane, q);
                        for (int k = 0; k < 32; ++k)
                          acc_of(warp, lane, v, m, n)[static_cast<size_t>(q)] +=
                              matrix_a[row][k] * matrix_b[k][column];
                      }
                  }
              }
          }
        }
        auto digits_of = [&](int warp, int lane, int v, int m, int p, int half,
                             int32_t(&digits)[4]) {
          int32_t even[4], odd[4];
          for (int q = 0; q < 4; ++q) {
            even[q] = acc_of(warp, lane, v, m, 2 * p)[static_cast<size_t>(q)];
            odd[q] = acc_of(warp, lane, v, m, 2 * p + 1)[static_cast<size_t>(q)];
          }
          epilogue::lane_digits(even, odd, half, digits);
        };
        for (int warp = 0; warp < Tile::kWarps; ++warp) {
          for (int v = 0; v < Tile::kRows; ++v) {
            const int64_t m1 = o.y0 + Tile::kRows * warp + v;
            const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
            if (a.weights != nullptr) {
              for (int m = 0; m < Tile::kMTiles; ++m)
                for (int half = 0; half < 2; ++half) {
                  float sums[32];
                  for (int lane = 0; lane < 32; ++lane) {
                    const int64_t x = o.x0 + 16 * m + epilogue::kept_x(lane, half);
                    const bool inside = m1 < a.n1 && x < a.n0;
                    float s = 0.0f;
                    for (int p = 0; p < S::kNTiles / 2; ++p) {
                      const int f = pass * S::kFilters + epilogue::kept_filter(lane, p);
                      if (inside && f < a.count) {
                        int32_t digits[4];
                        digits_of(warp, lane, v, m, p, half, digits);
                        s = cuda_bank::lane_weighted_sum(
                            s, a.weights[f * a.stride + first + x],
                            detail::combine_slices(digits, S::kSlices, a.scales[f]));
                      }
                    }
                    sums[lane] = s;
                  }
                  for (int xor_mask : {1, 2}) {  // __shfl_xor_sync, then the add, per lane
                    float shuffled[32];
                    for (int lane = 0; lane < 32; ++lane)
                      shuffled[lane] = sums[lane ^ xor_mask];
                    for (int lane = 0; lane < 32; ++lane)
                      sums[lane] += shuffled[lane];
                  }
                  for (int lane = 0; lane < 32; ++lane) {
                    const int64_t x = o.x0 + 16 * m + epilogue::kept_x(lane, half);
                    if (m1 < a.n1 && x < a.n0 && epilogue::stores_sum(lane, m, half))
                      a.sum[first + x] = sums[lane];
                  }
                }
              continue;
            }
            for (int p = 0; p < S::kNTiles / 2; ++p)
              for (int lane = 0; lane < 32; ++lane) {
                const int f = pass * S::kFilters + epilogue::kept_filter(lane, p);
                for (int m = 0; m < Tile::kMTiles; ++m)
                  for (int half = 0; half < 2; ++half) {
                    int32_t digits[4];
                    digits_of(warp, lane, v, m, p, half, digits);
                    const int64_t x = o.x0 + 16 * m + epilogue::kept_x(lane, half);
                    if (f < a.count && x < a.n0 && m1 < a.n1)
                      a.out[f * a.stride + first + x] =
                          detail::combine_slices(digits, S::kSlices, a.scales[f]);
                  }
              }
          }
        }
      }
    }
  }
}

// Extents that leave partial tiles along x (70 = 64 + 6) and axis 1 (9 rows: 2 x 4 + 1, 1 x 8 +
// 1); 13 filters: a second pass of one; two grid sizes, so that blocks walk several tiles.
const Index kIndexing3d{70, 9, 5, 1};
// A 4D sequence: 7 tap frames, 13 rows (12 + 1 for a tile of 12 rows), two positions along z.
const Index kIndexing4d{70, 13, 2, 2};

template <class Tile>
void check_kernel_indexing(uint64_t seed, const Index& n = kIndexing3d, int size = 7,
                           int count = 13, std::vector<int64_t> grids = {1, 7}) {
  const UniformBank b(n, count, seed, size);
  ASSERT_TRUE(b.packed);
  const PaddedBytes& p = b.padded;
  const TensorCoreGeometry& g = p.geometry;
  std::vector<float> expected(static_cast<size_t>(g.voxels() * count));
  cuda_bank::emulate_tensor_core_bank(g, p.bytes.data(), b.weights, expected.data());
  const cuda_bank::TensorCoreWeights w =
      cuda_bank::tensor_core_weights(g, b.taps.data(), Tile::kRows);
  // What the device-resident stages reserve for them.
  EXPECT_EQ(cuda_bank::tensor_core_weights_bytes(g, Tile::kRows),
            static_cast<int64_t>((w.fragments.size() + w.scales.size()) * 4));
  // A Global tile reads the volume's 4 shifted copies.
  std::vector<uint8_t> bytes(p.bytes);
  if (Tile::kStagedCopies > 1) {
    bytes.resize(4 * bytes.size());
    cuda_bank::shift_padded_copies(g, bytes.data());
  }
  // The weighted sum (one pass): its emulation's sums from the same responses.
  const bool weighted = g.passes() == 1;
  const std::vector<float> weights = sum_weights(count, g.voxels(), seed ^ 0x3c);
  std::vector<float> expected_sum(static_cast<size_t>(g.voxels()));
  if (weighted)
    cuda_bank::emulate_tensor_core_weighted_sum(g, p.bytes.data(), b.weights, weights.data(),
                                                expected_sum.data());
  for (int64_t grid_x : grids) {
    SCOPED_TRACE("grid " + std::to_string(grid_x));
    std::vector<float> out(expected.size());
    poison(out);
    cuda_bank::TensorCoreArgs a = cuda_bank::tensor_core_args<Tile>(
        g, bytes.data(), w.fragments.data(), w.scales.data(), out.data());
    emulate_kernel<Tile>(a, grid_x, g.passes());
    EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)), 0);
    if (weighted) {
      std::vector<float> sum(expected_sum.size());
      poison(sum);
      a.weights = weights.data();
      a.sum = sum.data();
      emulate_kernel<Tile>(a, grid_x, 1);
      EXPECT_EQ(std::memcmp(sum.data(), expected_sum.data(), sum.size() * sizeof(float)), 0);
    }
  }
}

// The product's tile and the others dev/tensor_bank_sweep.cu times.
TEST(TensorCoreEmulation, TheKernelsIndexingGivesTheArithmeticBitForBit) {
  using cuda_bank::TensorCoreCopies;
  using cuda_bank::TensorCoreTile;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  {
    SCOPED_TRACE("the default tile");
    check_kernel_indexing<cuda_bank::TensorCoreDefaultTile>(seed);
  }
  {
    SCOPED_TRACE("4 M tiles, 4 warps, shifted copies built in shared memory");
    check_kernel_indexing<TensorCoreTile<4, 4, TensorCoreCopies::Shared>>(seed);
  }
  {
    SCOPED_TRACE("4 M tiles, 4 warps, shifted copies staged from device memory");
    check_kernel_indexing<TensorCoreTile<4, 4, TensorCoreCopies::Global>>(seed);
  }
  {
    SCOPED_TRACE("2 M tiles, 8 warps, funnel shifts");
    check_kernel_indexing<TensorCoreTile<2, 8, TensorCoreCopies::Funnel>>(seed);
  }
  {
    SCOPED_TRACE("4 M tiles, 2 warps, shifted copies built in shared memory");
    check_kernel_indexing<TensorCoreTile<4, 2, TensorCoreCopies::Shared>>(seed);
  }
  {
    SCOPED_TRACE("2 M tiles, 4 warps of two rows, funnel shifts");
    check_kernel_indexing<TensorCoreTile<2, 4, TensorCoreCopies::Funnel, 2>>(seed);
  }
  {
    SCOPED_TRACE("2 M tiles, 2 warps of two rows, shifted copies staged from device memory");
    check_kernel_indexing<TensorCoreTile<2, 2, TensorCoreCopies::Global, 2>>(seed);
  }
}

// The tap frames' tile (TensorCoreFramesTile) on a 4D sequence.
TEST(TensorCoreEmulation, TheKernelsIndexingOverTapFramesGivesTheArithmeticBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_kernel_indexing<cuda_bank::TensorCoreFramesTile>(seed, kIndexing4d);
}

// The tap frames' tile takes the bank_4d filters in the H200's shared memory (227 KB a block).
TEST(TensorCoreEmulation, EveryTapFramesWeightsFitInSharedMemory) {
  EXPECT_LE(cuda_bank::TensorCoreFramesTile::shared_bytes(TensorCoreShape::kMaxFrames), 227 * 1024);
  EXPECT_EQ(cuda_bank::TensorCoreFramesTile::kRows, 1);
}

// Extents for the reconstruction's filters: a partial tile along x (70 = 64 + 6) and along axis 1
// (5 of 12 rows), two positions along t; few tiles, as each runs 9 or 11 frames of 31 or 46
// chunks.
const Index kIndexingWide{70, 5, 1, 2};

// The reconstruction's tiles (TensorCoreWideFramesTile: 3 groups of 4 taps a tap row, the weights
// streamed a frame at a time) on 11 filters of 11^4 (the default) and 9^4 (the echo preset),
// responses and weighted sum.
TEST(TensorCoreEmulation, TheWideTilesIndexingGivesTheArithmeticAndTheSumBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  {
    SCOPED_TRACE("11^4");
    check_kernel_indexing<cuda_bank::TensorCoreWideFramesTile11>(seed, kIndexingWide, 11, 11, {3});
  }
  {
    SCOPED_TRACE("9^4");
    check_kernel_indexing<cuda_bank::TensorCoreWideFramesTile9>(seed, kIndexingWide, 9, 11, {3});
  }
}

// The wide tiles' streamed weights (two frame buffers) fit in the H200's shared memory, where every
// frame's would not; their groups' words.
template <class W>
void check_wide_tile(int chunks) {
  EXPECT_LE(W::shared_bytes(W::TapShape::kMaxFrames), 227 * 1024);
  EXPECT_GT(W::TapShape::kMaxFrames * W::kFragmentWords * 4, 227 * 1024);
  EXPECT_EQ(W::kChunks, chunks);
  // Group q of a tap row starts 4 q bytes (q words) after the row.
  for (int r = 0; r < W::TapShape::kTapRows; ++r)
    for (int q = 0; q < 3; ++q)
      EXPECT_EQ(W::group_word(3 * r + q), W::tap_row_word(r) + q);
}

TEST(TensorCoreEmulation, TheWideTilesStreamTheirWeightsWithinSharedMemory) {
  check_wide_tile<cuda_bank::TensorCoreWideFramesTile11>(46);  // 121 tap rows x 3 groups, 8 a chunk
  check_wide_tile<cuda_bank::TensorCoreWideFramesTile9>(31);   // 81 x 3
  // The weighted sum's two shuffles give every lane of a quad the same sum, quad_sum's.
  const float lanes[4] = {1.0f, 1e-8f, -1.0f, 3e-8f};
  float s[4], t[4];
  for (int i = 0; i < 4; ++i)
    s[i] = lanes[i] + lanes[i ^ 1];
  for (int i = 0; i < 4; ++i)
    t[i] = s[i] + s[i ^ 2];
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(t[i], cuda_bank::quad_sum(lanes));
}

// The wide tap rows (11 or 9 taps along x: groups of taps 0..3, 4..7 and 8..) read back through
// the fragments give the plain sliced arithmetic bit for bit, and the weighted sum of the
// reconstruction's filters (11^4, 9^4) is within the FP32 bank's accuracy of float64 per voxel.
TEST(TensorCoreEmulation, WideFragmentsGiveTheSlicedArithmeticAndAnAccurateSum) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{11, 7, 4, 3};
  const int count = 11;
  for (int size : {11, 9}) {
    SCOPED_TRACE(std::to_string(size) + "^4");
    const std::vector<float> taps = reconstruction_bank_taps(size);
    ASSERT_EQ(taps.size(), static_cast<size_t>(count) * size * size * size * size);
    for (EightBitKind kind : kEightBitKinds) {
      if (size == 11 && kind != EightBitKind::EchoLike)
        continue;  // the 11^4 float64 references are the slow part (the GPU test has each kind)
      SCOPED_TRACE(eight_bit_name(kind));
      const std::vector<float> input = eight_bit_volume(kind, n, seed);
      bool packed = false;
      const PaddedBytes p = padded_bytes(input, n, count, packed, size);
      ASSERT_TRUE(packed);
      const TensorCoreGeometry& g = p.geometry;
      EXPECT_EQ(g.taps().groups, 3);
      EXPECT_EQ(cuda_bank::tensor_core_cannot_implement(g.filter, true), "");
      EXPECT_NE(cuda_bank::tensor_core_cannot_implement(g.filter), "");
      const cuda_bank::TensorCoreWeights w = cuda_bank::tensor_core_weights(g, taps.data());
      std::vector<float> fragments(static_cast<size_t>(g.voxels() * count)),
          sliced(fragments.size());
      poison(fragments);
      poison(sliced);
      cuda_bank::emulate_tensor_core_bank(g, p.bytes.data(), w, fragments.data());
      cuda_bank::emulate_sliced_bank(g, p.bytes.data(), taps.data(), TensorCoreShape::kSlices,
                                     sliced.data());
      EXPECT_EQ(std::memcmp(fragments.data(), sliced.data(), fragments.size() * sizeof(float)), 0);
      const std::vector<float> weights = sum_weights(count, g.voxels(), seed ^ 0x11);
      std::vector<float> sum(static_cast<size_t>(g.voxels()));
      poison(sum);
      cuda_bank::emulate_tensor_core_weighted_sum(g, p.bytes.data(), w, weights.data(), sum.data());
      const BankReference ref = bank_reference(input, n, filter_of(4, size), count, taps);
      const double responses = worst_voxel_error(ref, fragments.data());
      const double error = worst_sum_error(ref, weights, sum.data());
      std::cout << "[accuracy] " << size << "^4 reconstruction, " << eight_bit_name(kind)
                << ": responses " << responses << ", weighted sum " << error << "\n";
      EXPECT_LT(responses, 1e-6);
      EXPECT_LT(error, 1e-6);
    }
  }
}

// The 3D reconstruction's 11^3 (one frame) takes the wide tile as well; other widths and tap rows
// do not.
TEST(TensorCoreEmulation, TheWeightedSumTakesTheReconstructionsShapes) {
  EXPECT_EQ(cuda_bank::tensor_core_cannot_implement({11, 11, 1, 11}, true), "");
  EXPECT_EQ(cuda_bank::tensor_core_cannot_implement({9, 9, 9, 9}, true), "");
  EXPECT_EQ(cuda_bank::tensor_core_cannot_implement({12, 11, 11, 11}, true), "");
  EXPECT_NE(cuda_bank::tensor_core_cannot_implement({7, 7, 7, 7}, true), "");
  EXPECT_NE(cuda_bank::tensor_core_cannot_implement({13, 11, 11, 11}, true), "");
  EXPECT_NE(cuda_bank::tensor_core_cannot_implement({11, 11, 11, 9}, true), "");
  EXPECT_NE(cuda_bank::tensor_core_cannot_implement({9, 9, 11, 9}, true), "");
}

// The CPU's FP32 bank on the same input (the GPU test compares with the GPU's FP32 kernel).
std::vector<float> cpu_fp32_bank(const std::vector<float>& input, const Index& n, int count,
                                 const std::vector<float>& taps) {
  const int dims = dims_of(n);
  const int64_t voxels = n[0] * n[1] * n[2] * std::max<int64_t>(1, n[3]);
  std::vector<float> out(static_cast<size_t>(voxels * count));
  poison(out);
  detail::BankProblem p = seven_cubed_bank(input, n, count, taps, dims);
  for (int f = 0; f < count; ++f)
    p.outputs.push_back(make_view(out.data() + f * voxels, dims, n));
  Options o;
  o.backend = Backend::Cpu;
  RunReport report;
  cpu_backend::run_bank(p, o, report);
  return out;
}

TEST(TensorCoreAccuracy, FourDigitsAreAsAccurateAsTheFp32BankPerVoxel) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{40, 24, 18, 1};
  const std::vector<float> taps = quadrature_bank_taps();
  for (EightBitKind kind : kEightBitKinds) {
    SCOPED_TRACE(eight_bit_name(kind));
    const std::vector<float> input = eight_bit_volume(kind, n, seed);
    bool packed = false;
    const PaddedBytes p = padded_bytes(input, n, 12, packed);
    ASSERT_TRUE(packed);
    const BankReference ref = bank_reference(input, n, kFilter, 12, taps);
    const double fp32 = worst_voxel_error(ref, cpu_fp32_bank(input, n, 12, taps).data());
    double digits[5] = {};
    for (int slices : {2, 3, 4}) {
      std::vector<float> out(static_cast<size_t>(p.geometry.voxels() * 12));
      poison(out);
      cuda_bank::emulate_sliced_bank(p.geometry, p.bytes.data(), taps.data(), slices, out.data());
      digits[slices] = worst_voxel_error(ref, out.data());
    }
    std::cout << "[ accuracy ] " << eight_bit_name(kind)
              << ": max |error| / sum |w||x|: CPU FP32 bank " << fp32 << ", 2 digits " << digits[2]
              << ", 3 digits " << digits[3] << ", 4 digits " << digits[4] << "\n";
    EXPECT_LE(digits[4], fp32);
    EXPECT_GT(digits[3], fp32);  // three digits are not enough: the kernel's four are needed
  }
}

// The 4D quadrature bank (24 real 7^4 filters): four digits over 2401 taps (int32 sums above 2^24,
// rounded where combine_slices converts them) as accurate per voxel as the CPU's FP32 bank.
TEST(TensorCoreAccuracy, FourDigitsOverTapFramesAreAsAccurateAsTheFp32BankPerVoxel) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{9, 8, 7, 6};
  const std::vector<float> taps = quadrature_bank_taps(4);
  const int count = 24;
  ASSERT_EQ(taps.size(), static_cast<size_t>(count) * 2401);
  for (EightBitKind kind : kEightBitKinds) {
    SCOPED_TRACE(eight_bit_name(kind));
    const std::vector<float> input = eight_bit_volume(kind, n, seed);
    bool packed = false;
    const PaddedBytes p = padded_bytes(input, n, count, packed);
    ASSERT_TRUE(packed);
    const BankReference ref = bank_reference(input, n, kFilter4d, count, taps);
    const double fp32 = worst_voxel_error(ref, cpu_fp32_bank(input, n, count, taps).data());
    std::vector<float> out(static_cast<size_t>(p.geometry.voxels() * count));
    poison(out);
    cuda_bank::emulate_sliced_bank(p.geometry, p.bytes.data(), taps.data(),
                                   TensorCoreShape::kSlices, out.data());
    const double digits = worst_voxel_error(ref, out.data());
    std::cout << "[ accuracy ] 4D " << eight_bit_name(kind)
              << ": max |error| / sum |w||x|: CPU FP32 bank " << fp32 << ", 4 digits " << digits
              << "\n";
    EXPECT_LE(digits, fp32);
  }
}

}  // namespace
}  // namespace ndconv::test
