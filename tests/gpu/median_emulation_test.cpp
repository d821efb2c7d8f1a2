// The GPU median's per-block code (src/cuda/median/median_select.h) run on the host over every
// block and thread of the launch grid, as the kernel runs it, with each selection (counting, and
// forgetful for the windows the kernel gives it): against the float64 reference
// median in 2D, 3D and 4D, for every boundary, every block shape and radii up to the largest
// along the last axis, on continuous data, data with many ties (8-bit values) and data with NaN
// and infinities; and its key order (NaN above every number). Needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "cuda/median/median_columns.h"
#include "cuda/median/median_merge.h"
#include "cuda/median/median_select.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_median::MedianGrid;

template <typename Select>
void run_blocks(const MedianGrid& g, const std::vector<float>& in, std::vector<float>& out) {
  std::vector<uint32_t> tile(static_cast<size_t>(g.tile_keys()));
  for (int64_t block = 0; block < g.block_count(); ++block) {
    int64_t origin[4];
    cuda_median::block_origin(g, block, origin);
    // Every thread's share of the copy, as the kernel spreads it.
    for (int y = 0; y < g.threads_y; ++y)
      for (int x = 0; x < g.threads_x; ++x)
        cuda_median::load_tile(g, origin, tile.data(), x, g.threads_x, y, g.threads_y,
                               [&](int64_t i) { return in[i]; });
    for (int y = 0; y < g.threads_y; ++y)
      for (int x = 0; x < g.threads_x; ++x)
        cuda_median::store_thread_medians<Select>(g, origin, tile.data(), x, y,
                                                  [&](int64_t i, float v) { out[i] = v; });
  }
}

// The sorted-columns kernel (3D radius 1) over its grid: every thread's share of the columns,
// then every thread's medians, as the kernel runs them.
template <typename Shape>
void run_columns(const std::vector<float>& in, const Index& extent, Boundary boundary,
                 float outside, std::vector<float>& out) {
  const MedianGrid g =
      cuda_median::column_grid<Shape>(extent.data(), static_cast<int>(boundary), outside);
  ASSERT_TRUE(cuda_median::column_offsets_fit<Shape>(extent.data()));
  std::vector<uint32_t> columns(static_cast<size_t>(Shape::kKeys));
  for (int64_t block = 0; block < g.block_count(); ++block) {
    std::fill(columns.begin(), columns.end(),
              0x3a5a5a5au);  // poison: the key of -5.3e3, no input value
    int64_t origin[4];
    cuda_median::block_origin(g, block, origin);
    for (int t = 0; t < Shape::kThreads; ++t)
      cuda_median::load_columns<Shape>(g, origin, columns.data(), t,
                                       [&](int64_t i) { return in[i]; });
    for (int y = 0; y < Shape::kY; ++y)
      for (int x = 0; x < Shape::kX; ++x)
        cuda_median::store_column_medians<Shape>(g, origin, columns.data(), x, y,
                                                 [&](int64_t i, float v) { out[i] = v; });
  }
}

template <int... kRadii>
void dispatch(std::integer_sequence<int, kRadii...>, const MedianGrid& g,
              const std::vector<float>& in, std::vector<float>& out) {
  ((kRadii == g.radius[g.last] ? run_blocks<cuda_median::CountingSelect<kRadii>>(g, in, out)
                               : void()),
   ...);
}

// The grid run with the counting selection or, where `forgetful` and the kernel would take one,
// the selection in registers the launcher picks (sorted columns for 3D radius 1, with the
// product's 32 x 4 threads and 14 outputs for the 32 x 4 shape and 8 x 2 threads with 8 outputs
// for the others, else forgetful).
std::vector<float> emulate_median(const std::vector<float>& in, int dims, const Index& extent,
                                  const Index& radius, Boundary boundary, int threads_x,
                                  int threads_y, bool forgetful, float outside = 0.0f) {
  using cuda_median::ForgetfulSelect;
  const MedianGrid g =
      cuda_median::median_grid(dims, extent.data(), radius.data(), static_cast<int>(boundary),
                               outside, threads_x, threads_y);
  std::vector<float> out(in.size(), std::numeric_limits<float>::quiet_NaN());
  const int r = forgetful ? cuda_median::forgetful_radius(g) : 0;
  if (dims == 2 && r == 1)
    run_blocks<ForgetfulSelect<2, 1>>(g, in, out);
  else if (dims == 2 && r == 2)
    run_blocks<ForgetfulSelect<2, 2>>(g, in, out);
  else if (dims == 2 && r == 3)
    run_blocks<ForgetfulSelect<2, 3>>(g, in, out);
  else if (dims == 3 && r == 1 && threads_x == 32 && threads_y == 4)
    run_columns<cuda_median::ColumnShape<32, 4, 14>>(in, extent, boundary, outside, out);
  else if (dims == 3 && r == 1)
    run_columns<cuda_median::ColumnShape<8, 2, 8>>(in, extent, boundary, outside, out);
  else
    dispatch(std::make_integer_sequence<int, cuda_median::kMaxLastRadius + 1>{}, g, in, out);
  return out;
}

// Voxels where `got` differs from the reference (NaN equals NaN).
int64_t differences(const std::vector<float>& got, const std::vector<double>& ref) {
  int64_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double r = ref[i];
    n += !(static_cast<double>(got[i]) == r || (std::isnan(got[i]) && std::isnan(r)));
  }
  return n;
}

std::vector<float> eight_bit_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> u(0, 6);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v)
    x = static_cast<float>(40 * u(rng));
  return v;
}

TEST(MedianEmulation, KeysOrderLikeFloatsWithNanLast) {
  const float values[] = {
      -std::numeric_limits<float>::infinity(), -3.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 2.0f,
      std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i + 1 < std::size(values); ++i)
    EXPECT_LE(cuda_median::median_key(values[i]), cuda_median::median_key(values[i + 1])) << i;
  for (float v : values)
    EXPECT_EQ(cuda_median::median_value(cuda_median::median_key(v)), v);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_GT(cuda_median::median_key(nan), cuda_median::median_key(values[7]));
  EXPECT_GT(cuda_median::median_key(-nan), cuda_median::median_key(values[7]));
  EXPECT_TRUE(std::isnan(cuda_median::median_value(cuda_median::median_key(nan))));
}

TEST(MedianEmulation, MatchesReferenceEveryDimensionBoundaryAndShape) {
  const Boundary boundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                 Boundary::Periodic, Boundary::Reflect};
  const float inf = std::numeric_limits<float>::infinity();
  for (int dims = 2; dims <= 4; ++dims) {
    const Index extent = dims == 2   ? Index{37, 21, 1, 1}
                         : dims == 3 ? Index{35, 9, 11, 1}
                                     : Index{9, 5, 4, 10};
    const int64_t n = extent[0] * extent[1] * extent[2] * extent[3];
    std::vector<float> continuous = random_values(n, fresh_seed());
    continuous[2] = continuous[3] = continuous[7];  // ties
    std::vector<float> special = random_values(n, fresh_seed());
    special[n / 2] = std::numeric_limits<float>::quiet_NaN();
    special[n / 3] = inf;
    special[n / 5] = -inf;
    special[n / 7] = -0.0f;
    const std::vector<float> inputs[] = {continuous, eight_bit_values(n, fresh_seed()), special};
    const Index radii[] = {{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3},
                           {2, 0, 1, 2}, {0, 1, 0, 7}, {1, 0, 2, 5}};
    const int shapes[][2] = {{32, 4}, {8, 2}};
    for (const Index& r : radii) {
      Index radius{0, 0, 0, 0};
      for (int a = 0; a < dims; ++a)
        radius[a] = r[a];
      if (dims == 4 && r[0] == 3)
        continue;               // 7^4 windows: covered by the GPU suite, slow here
      radius[dims - 1] = r[3];  // the last axis takes the large radii
      for (const auto& input : inputs)
        for (Boundary b : boundaries) {
          const auto ref = reference_median(
              make_view(static_cast<const float*>(input.data()), dims, extent), radius, b);
          for (const auto& shape : shapes) {
            SCOPED_TRACE(std::to_string(dims) + "D " + to_string(b) + " radius " +
                         std::to_string(radius[0]) + "x" + std::to_string(radius[1]) + "x" +
                         std::to_string(radius[2]) + "x" + std::to_string(radius[3]) + " block " +
                         std::to_string(shape[0]) + "x" + std::to_string(shape[1]));
            for (bool forgetful : {false, true}) {
              const auto got =
                  emulate_median(input, dims, extent, radius, b, shape[0], shape[1], forgetful);
              EXPECT_EQ(differences(got, ref), 0) << (forgetful ? "forgetful" : "counting");
            }
          }
        }
    }
  }
}

// Volumes large enough for blocks whose input box lies inside the volume (load_tile's unmapped
// path) beside the face blocks, in 2D, 3D and 4D, both block shapes.
TEST(MedianEmulation, InteriorAndFaceBlocks) {
  struct Case {
    int dims;
    Index extent, radius;
  };
  const Case cases[] = {{3, {70, 20, 40, 1}, {1, 1, 1, 0}},
                        {3, {70, 20, 40, 1}, {2, 1, 3, 0}},
                        {2, {100, 60, 1, 1}, {3, 3, 0, 0}},
                        {4, {40, 12, 10, 24}, {1, 1, 1, 1}}};
  for (const Case& c : cases) {
    const int64_t n = c.extent[0] * c.extent[1] * c.extent[2] * c.extent[3];
    const std::vector<float> in = random_values(n, fresh_seed());
    for (Boundary b : {Boundary::Zero, Boundary::Reflect}) {
      const auto ref = reference_median(
          make_view(static_cast<const float*>(in.data()), c.dims, c.extent), c.radius, b);
      for (const auto& shape : {std::pair{32, 4}, std::pair{8, 2}}) {
        const auto got =
            emulate_median(in, c.dims, c.extent, c.radius, b, shape.first, shape.second, true);
        EXPECT_EQ(differences(got, ref), 0)
            << c.dims << "D " << to_string(b) << " radius " << c.radius[0] << "x" << c.radius[1]
            << "x" << c.radius[2] << "x" << c.radius[3] << " block " << shape.first << "x"
            << shape.second;
      }
    }
  }
}

// The sorted-planes selection's parts against std::nth_element on random keys with many ties
// (NaN and infinities among them): the 9-key network sorts, the merge keeps ranks 5 .. 14 of two
// sorted planes, and each output of planes_medians is the 14th of its 27 keys, bit for bit.
TEST(MedianEmulation, SortedPlanesAgainstNthElement) {
  std::mt19937_64 rng(fresh_seed());
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
  auto key = [&](int distinct) {
    std::uniform_int_distribution<int> u(0, distinct - 1);
    const int i = u(rng);
    return cuda_median::median_key(i < 5 && distinct > 20 ? specials[i]
                                                          : static_cast<float>(i) * 0.25f - 3.0f);
  };
  for (int trial = 0; trial < 20000; ++trial) {
    const int distinct = trial % 2 == 0 ? 4 : 1000;
    uint32_t a[9], b[9];
    for (int i = 0; i < 9; ++i) {
      a[i] = key(distinct);
      b[i] = key(distinct);
    }
    std::vector<uint32_t> both(a, a + 9);
    both.insert(both.end(), b, b + 9);
    cuda_median::sort_nine(a);
    cuda_median::sort_nine(b);
    ASSERT_TRUE(std::is_sorted(a, a + 9));
    uint32_t m[10];
    cuda_median::merge_middle(a, b, m);
    std::sort(both.begin(), both.end());
    for (int r = 0; r < 10; ++r)
      ASSERT_EQ(m[r], both[static_cast<size_t>(4 + r)]) << "rank " << r + 5;
  }
  // Whole selections of kN windows along z from kN + 2 random planes, each sorted by sort_nine
  // or from its three sorted columns: each output is the 14th of its 27 keys.
  auto selections = [&](auto n) {
    constexpr int kN = decltype(n)::value;
    uint32_t keys[(kN + 2) * 9];  // plane p: keys[9 p .. 9 p + 8]
    for (int trial = 0; trial < 2000; ++trial) {
      for (uint32_t& k : keys)
        k = key(trial % 2 == 0 ? 5 : 1000);
      for (const bool from_columns : {false, true}) {
        uint32_t median[kN] = {};
        int emitted = 0;
        cuda_median::planes_medians<kN>(
            [&](int p, uint32_t(&v)[9]) {
              std::copy(keys + 9 * p, keys + 9 * p + 9, v);
              if (from_columns) {
                for (int c = 0; c < 3; ++c)
                  cuda_median::sort_three(v[3 * c], v[3 * c + 1], v[3 * c + 2]);
                cuda_median::sort_nine_from_triples(v);
              } else {
                cuda_median::sort_nine(v);
              }
            },
            [&](int k, uint32_t m) {
              median[k] = m;
              ++emitted;
            });
        ASSERT_EQ(emitted, kN);
        for (int k = 0; k < kN; ++k) {
          std::vector<uint32_t> window(keys + 9 * k, keys + 9 * k + 27);
          std::nth_element(window.begin(), window.begin() + 13, window.end());
          ASSERT_EQ(median[k], window[13]) << "output " << k << " trial " << trial;
        }
      }
    }
  };
  selections(std::integral_constant<int, 8>{});
  selections(std::integral_constant<int, 14>{});
}

// The sorted-columns kernel for every shape the launcher takes, against the sorting
// reference bit for bit: odd extents with blocks inside the volume and on every face, NaN, ties,
// signed zeros and infinities, every boundary (Constant with a value other than 0).
TEST(MedianEmulation, SortedColumnsEveryOutputCountAndBoundary) {
  const Index extent{69, 14, 37, 1};
  const int64_t n = extent[0] * extent[1] * extent[2];
  std::mt19937_64 rng(fresh_seed());
  std::uniform_int_distribution<int> pick(0, 99), level(0, 15);
  std::vector<float> in(static_cast<size_t>(n));
  for (float& v : in) {
    const int p = pick(rng);
    v = p < 4    ? std::numeric_limits<float>::quiet_NaN()
        : p < 6  ? -std::numeric_limits<float>::quiet_NaN()
        : p < 8  ? std::numeric_limits<float>::infinity()
        : p < 10 ? -std::numeric_limits<float>::infinity()
        : p < 13 ? -0.0f
        : p < 16 ? 0.0f
                 : static_cast<float>(level(rng) - 7) * 0.25f;
  }
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 3, extent);
  const Index radius{1, 1, 1, 0};
  for (size_t bi = 0; bi < kBoundaryCount; ++bi) {
    const auto b = static_cast<Boundary>(bi);
    const float outside = b == Boundary::Constant ? 0.37f : 0.0f;
    // The kernels take Constant as Zero with its value (as the engine passes it).
    const Boundary rule = b == Boundary::Constant ? Boundary::Zero : b;
    const std::vector<float> ref = reference_median_bits(iv, radius, b, outside);
    auto check = [&](auto shape) {
      using Shape = decltype(shape);
      std::vector<float> got(in.size(), std::numeric_limits<float>::quiet_NaN());
      run_columns<Shape>(in, extent, rule, outside, got);
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i)
        differ += std::memcmp(&got[i], &ref[i], sizeof(float)) != 0;
      EXPECT_EQ(differ, 0) << to_string(b) << ", " << Shape::kOutputs << " outputs a thread";
    };
    check(cuda_median::ColumnShape<32, 4, 8>{});
    check(cuda_median::ColumnShape<32, 4, 12>{});
    check(cuda_median::ColumnShape<32, 4, 14>{});
    check(cuda_median::ColumnShape<32, 4, 16>{});
  }
}

// The value of voxels outside the volume (Boundary::Constant, which the engine passes as Zero
// with its value): both selections, bit for bit against the sorting reference.
TEST(MedianEmulation, OutsideValue) {
  const float inf = std::numeric_limits<float>::infinity();
  const Index extent{21, 13, 9, 1};
  const int64_t n = extent[0] * extent[1] * extent[2];
  std::vector<float> in = random_values(n, fresh_seed());
  in[n / 2] = std::numeric_limits<float>::quiet_NaN();
  in[n / 3] = inf;
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 3, extent);
  for (const float outside : {0.37f, -2.5f, 1e30f})
    for (const Index& radius : {Index{1, 1, 1, 0}, Index{2, 3, 1, 0}}) {
      SCOPED_TRACE("outside " + std::to_string(outside) + " radius " + std::to_string(radius[1]));
      const std::vector<float> ref = reference_median_bits(iv, radius, Boundary::Zero, outside);
      for (bool forgetful : {false, true}) {
        const auto got =
            emulate_median(in, 3, extent, radius, Boundary::Zero, 32, 4, forgetful, outside);
        int64_t differ = 0;
        for (int64_t i = 0; i < n; ++i)
          differ += std::memcmp(&got[i], &ref[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0) << (forgetful ? "forgetful" : "counting");
      }
    }
}

}  // namespace
}  // namespace ndconv::test
