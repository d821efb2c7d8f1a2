// Host emulation of the fused separable kernel (CI, no GPU): dims 2, 3 and 4 (no t filter), filter
// extents 1, 2, 3, 5 and 17 per axis, mixed, skipped axes, every boundary, convolution and
// correlation, `same` and `valid`, volumes smaller than a tile, odd sizes larger than one, one or
// several z chunks, shrunken grids; against the float64 reference with fresh random data and
// NaN-poisoned outputs. Three shapes: the launcher's two (32 x 32 and 32 x 16 columns, 2 plane
// buffers) and a one-warp shape with 3 buffers, so the schedule is tested apart from the
// arithmetic.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "cases.h"
#include "cuda/fused_plan.h"
#include "emulate_fused.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

/// Shape 0: the launcher's default (32 x 32), 1: its 32 x 16 alternative, 2: one warp, 3 buffers.
using FusedParam = std::tuple<ShapeCase, int>;

class FusedEmulation : public ::testing::TestWithParam<FusedParam> {};

TEST_P(FusedEmulation, MatchesReference) {
  const ShapeCase& shape = std::get<0>(GetParam());
  const int which = std::get<1>(GetParam());
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(shape.dims, shape.volume), seed);
    const ConstVolumeView in_view = make_view(in.data(), shape.dims, shape.volume);
    Index filter_extent;
    const SeparableFilter f = random_fused_filter(shape, seed, filter_extent);
    const Index out_extent = reference_output_extent(in_view, filter_extent, region);
    std::vector<float> out(static_cast<size_t>(voxels(shape.dims, out_extent)));
    poison(out);
    const detail::SeparableProblem p = make_separable_problem(
        in_view, make_view(out.data(), shape.dims, out_extent), f, op, region, b);
    const cuda_backend::FusedPlan plan = cuda_backend::plan_fused(p);
    ASSERT_TRUE(plan.usable) << plan.reason;
    // Resident blocks: one (a single z chunk per column) or many (several chunks).
    const int64_t slots = seed % 2 == 0 ? 1 : 1000;
    const bool small_grid = (seed / 2) % 2 != 0;
    if (which == 0)
      emulate_fused<cuda_backend::FusedDefaultShape>(plan.geometry, in.data(), out.data(),
                                                     plan.taps.data(), slots, small_grid);
    else if (which == 1)
      emulate_fused<cuda_backend::FusedShortShape>(plan.geometry, in.data(), out.data(),
                                                   plan.taps.data(), slots, small_grid);
    else
      emulate_fused<kernels::FusedShape<16, 8, 3>>(plan.geometry, in.data(), out.data(),
                                                   plan.taps.data(), slots, small_grid);
    const std::vector<double> ref = reference_separable(in_view, f, op, b, region);
    EXPECT_LT(relative_l2_error(out, ref), kTolerance)
        << shape << " shape " << which << " " << to_string(b) << " " << to_string(op) << " "
        << to_string(region) << " slots=" << slots << " seed=" << seed;
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedEmulation,
                         ::testing::Combine(::testing::ValuesIn(fused_cases()),
                                            ::testing::Values(0, 1, 2)));

// Which problems the fused kernel takes: 2D, 3D, 4D without a t filter; not a t filter.
TEST(FusedPlan, CoversTwoToFourDimensionsWithoutT) {
  std::vector<float> in(6 * 5 * 4 * 3, 1.0f), out(in.size());
  detail::SeparableProblem p;
  p.input = make_view<const float>(in.data(), 4, {6, 5, 4, 3});
  p.output = make_view(out.data(), 4, {6, 5, 4, 3});
  p.taps[0] = {1.0f, 2.0f, 1.0f};
  p.taps[2] = {1.0f, 1.0f};
  const cuda_backend::FusedPlan plan = cuda_backend::plan_fused(p);
  ASSERT_TRUE(plan.usable) << plan.reason;
  EXPECT_EQ(plan.geometry.filter_extent[0], 3);
  EXPECT_EQ(plan.geometry.filter_extent[1], 1);  // skipped: one tap of 1
  EXPECT_EQ(plan.geometry.filter_extent[2], 2);
  EXPECT_EQ(plan.taps, (std::vector<float>{1.0f, 2.0f, 1.0f, 1.0f, 1.0f, 1.0f}));
  p.taps[3] = {1.0f, 1.0f, 1.0f};
  EXPECT_FALSE(cuda_backend::plan_fused(p).usable);
}

// The launcher's shapes for the Gaussian (256^3, 17 taps per axis) on an H100 (132 SMs,
// 228 KiB of shared memory per SM, 1 KiB reserved per block): chunks of 64 outputs along z, one
// wave of blocks, the blocks per SM the shared memory allows.
template <typename S>
void expect_one_wave(int blocks_per_sm, int64_t blocks) {
  kernels::Geometry g{};
  for (int a = 0; a < 3; ++a) {
    g.in_extent[a] = g.out_extent[a] = 256;
    g.filter_extent[a] = 17;
    g.offset[a] = -8;
  }
  g.in_extent[3] = g.out_extent[3] = 1;
  const kernels::FusedLayout l =
      kernels::fused_layout<S>(g, kernels::fused_chunk<S>(g, 132 * blocks_per_sm));
  EXPECT_EQ(l.chunk, 64);
  int64_t counts[3];
  kernels::fused_block_counts<S>(g, l, counts);
  EXPECT_EQ(counts[0] * counts[1] * counts[2], blocks);
  const int64_t bytes = l.total_floats * static_cast<int64_t>(sizeof(float));
  EXPECT_LE(blocks_per_sm * (bytes + 1024), 228 * 1024) << bytes;
  EXPECT_GT((blocks_per_sm + 1) * (bytes + 1024), 228 * 1024) << bytes;
}

TEST(FusedPlan, GaussianLayoutFillsOneWave) {
  expect_one_wave<cuda_backend::FusedDefaultShape>(2, 256);
  expect_one_wave<cuda_backend::FusedShortShape>(4, 512);
}

}  // namespace
}  // namespace ndconv::test
