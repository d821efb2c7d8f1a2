// Host emulation of the slab kernel of separable filters (cuda/separable/slab_thread.h; CI, no
// GPU): which filters the plan gives it, and its results against the float64 reference for every
// boundary, operation and region, volumes with partial tiles and smaller than the filter, chunks
// along z shorter and longer than the filter (marching up and down), the 16-byte and 4-byte copy
// paths, offsets that are not multiples of 4, with fresh random data and NaN-poisoned outputs; a
// NaN that must stay inside its footprint; and the same bits from the slab kernel, the column
// passes and the tiled and blocked passes (every plan filters x, then y, then z alike).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "cases.h"
#include "cuda/separable/separable_plan.h"
#include "cuda/staging.h"
#include "emulate.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;
constexpr int kSlabTaps = 17;

cuda_backend::SeparablePlan slab_plan(const detail::SeparableProblem& p, bool slab = true) {
  return cuda_backend::plan_separable(
      p, [](int, int64_t, int64_t) { return 4; }, cuda_backend::SeparableKernels::kColumns, 0,
      slab);
}

TEST(SlabPlan, TakesThreeDimensionalFiltersWithOneCompiledTapCount) {
  std::vector<float> in, out;
  auto plan = slab_plan(problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 1u);
  EXPECT_EQ(plan.passes[0].slab_taps, 17);
  EXPECT_EQ(plan.passes[0].source, cuda_backend::kInputBuffer);
  EXPECT_EQ(plan.passes[0].destination, cuda_backend::kOutputBuffer);
  EXPECT_EQ(plan.scratch_halves, 0);
  EXPECT_FALSE(plan.passes[0].x_row());
  EXPECT_FALSE(plan.passes[0].blocked());
  EXPECT_EQ(plan.taps.size(), 3u * 17u);
  // Not asked for: the column kernel's two passes.
  plan = slab_plan(problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out), false);
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[0].slab_taps, 0);
  EXPECT_TRUE(plan.passes[0].fuse_x());
  // Tap counts that differ between axes, that are not compiled, an unfiltered axis, or 4D: the
  // column kernel's passes.
  for (const auto& [dims, filter] :
       {std::pair{3, Index{17, 17, 9, 0}}, std::pair{3, Index{5, 5, 5, 0}},
        std::pair{3, Index{17, 0, 17, 0}}, std::pair{4, Index{17, 17, 17, 17}}}) {
    plan = slab_plan(problem_with_taps(dims, {100, 40, 30, 4}, filter, in, out));
    for (const auto& pass : plan.passes)
      EXPECT_EQ(pass.slab_taps, 0) << ShapeCase{dims, {100, 40, 30, 4}, filter};
  }
}

// The plan's rule reads how much of the column kernel's 128-wide x tiles the output uses.
TEST(SlabPlan, ColumnXUse) {
  std::vector<float> in, out;
  EXPECT_DOUBLE_EQ(
      cuda_backend::column_x_use(problem_with_taps(3, {256, 4, 4, 1}, {17, 17, 17, 0}, in, out)),
      1.0);
  EXPECT_NEAR(
      cuda_backend::column_x_use(problem_with_taps(3, {272, 4, 4, 1}, {17, 17, 17, 0}, in, out)),
      272.0 / 384.0, 1e-12);
  EXPECT_NEAR(
      cuda_backend::column_x_use(problem_with_taps(3, {70, 4, 4, 1}, {17, 17, 17, 0}, in, out)),
      70.0 / 128.0, 1e-12);
}

// The launcher's chunks: about the device's resident blocks, at least min_chunk planes each, and
// every output plane in exactly one chunk.
TEST(SlabPlan, ChunksCoverEveryPlaneOnce) {
  for (const Index& extent : {Index{256, 256, 1, 256}, Index{70, 20, 1, 45}, Index{13, 7, 1, 5}}) {
    for (int64_t resident : {0, 1, 8, 264, 100000}) {
      kernels::Geometry g{};
      for (int a = 0; a < kernels::kAxes; ++a) {
        g.in_extent[a] = g.out_extent[a] = extent[a];
        g.filter_extent[a] = a == 2 ? 1 : kSlabTaps;
      }
      kernels::SlabLayout l = kernels::slab_layout<kSlabTaps>(g);
      const kernels::LaunchShape s = kernels::slab_launch_shape(g, l, resident, 4);
      std::vector<int> visits(static_cast<size_t>(extent[3]), 0);
      for (int64_t bz = 0; bz < s.grid[2]; ++bz) {
        const kernels::SlabBlock b = kernels::slab_block(g, l, 0, 0, bz);
        EXPECT_EQ(b.down, bz % 2 == 1);
        for (int n = kSlabTaps - 1; n < b.planes; ++n)
          ++visits[static_cast<size_t>(kernels::slab_output_plane(l, b, n))];
      }
      EXPECT_EQ(std::count(visits.begin(), visits.end(), 1), extent[3])
          << ShapeCase{4, extent, {}} << " resident " << resident;
      if (resident >= s.grid[0] * s.grid[1]) {
        EXPECT_LE(s.grid[0] * s.grid[1] * s.grid[2], std::max<int64_t>(resident, 1));
      }
    }
  }
  // 256^3 on 264 resident blocks: 64 tiles, 4 chunks of 64 planes.
  kernels::Geometry g{};
  for (int a = 0; a < kernels::kAxes; ++a) {
    g.in_extent[a] = g.out_extent[a] = a == 2 ? 1 : 256;
    g.filter_extent[a] = a == 2 ? 1 : kSlabTaps;
  }
  kernels::SlabLayout l = kernels::slab_layout<kSlabTaps>(g);
  const kernels::LaunchShape s = kernels::slab_launch_shape(g, l, 264, 32);
  EXPECT_EQ(s.grid[0] * s.grid[1], 64);
  EXPECT_EQ(s.grid[2], 4);
  EXPECT_EQ(l.chunk, 64);
}

struct SlabCase {
  Index volume;
  int in_row_padding;  ///< extra floats per x row of the input view (4-byte path when not 0 mod 4)
};

class SlabEmulation : public ::testing::TestWithParam<SlabCase> {};

TEST_P(SlabEmulation, MatchesReference) {
  const SlabCase c = GetParam();
  const ShapeCase shape{3, c.volume, {kSlabTaps, kSlabTaps, kSlabTaps, 1}};
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    Index alloc = c.volume;
    alloc[0] += c.in_row_padding;
    std::vector<float> storage = random_values(voxels(3, alloc), seed);
    ConstVolumeView in_view = make_view<const float>(storage.data(), 3, alloc);
    in_view.extent = c.volume;
    std::vector<float> dense(static_cast<size_t>(voxels(3, c.volume)));
    cuda_backend::gather(in_view, dense.data());
    const ConstVolumeView dense_view = make_view<const float>(dense.data(), 3, c.volume);
    Index filter_extent;
    const SeparableFilter f = random_separable_filter(
        shape, seed, [](int) { return true; }, filter_extent);
    const Index out_extent = reference_output_extent(dense_view, filter_extent, region);
    std::vector<double> ref = reference_separable_passes(dense_view, f, op, b);
    if (region == OutputRegion::Valid)
      ref = reference_separable(dense_view, f, op, b, region);
    const detail::SeparableProblem p0 = make_separable_problem(
        in_view, make_view(static_cast<float*>(nullptr), 3, out_extent), f, op, region, b);
    const cuda_backend::SeparablePlan plan = slab_plan(p0);
    ASSERT_EQ(plan.passes.size(), 1u);
    ASSERT_EQ(plan.passes[0].slab_taps, kSlabTaps);
    // One chunk, chunks of at least 4 planes on a device of 8 or 40 resident blocks.
    for (int64_t resident : {0, 8, 40}) {
      std::vector<float> out(static_cast<size_t>(voxels(3, out_extent)));
      poison(out);
      detail::SeparableProblem p = p0;
      p.output = make_view(out.data(), 3, out_extent);
      const cuda_backend::SeparablePlan run = slab_plan(p);
      test::emulate_slab(run.passes[0].geometry, storage.data(), out.data(), run.taps.data(),
                         resident, 4);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << shape << " padding " << c.in_row_padding << " " << to_string(b) << " " << to_string(op)
          << " " << to_string(region) << " resident " << resident << " seed=" << seed;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Volumes, SlabEmulation,
    ::testing::Values(
        // Partial last tiles along x and y; 3 x 1 tiles, so 8 and 40 resident blocks cut z.
        SlabCase{{70, 20, 45, 1}, 0},
        // Several whole tiles and a partial one along x, two along y.
        SlabCase{{150, 40, 20, 1}, 0},
        // Smaller than the filter along every axis: every raw quad at a face.
        SlabCase{{13, 7, 5, 1}, 0},
        // Rows padded by 3 floats: the 4-byte copy path; by 4: 16-byte copies in a wider
        // allocation.
        SlabCase{{70, 18, 21, 1}, 3}, SlabCase{{70, 18, 21, 1}, 4}));

// Offsets that are not multiples of 4 (the raw rows start `shift` columns early, the y-filtered
// tile is written shifted): the low-level problem's offsets set directly, against a float64 loop.
TEST(SlabEmulationOffsets, ShiftedRows) {
  const Index volume{75, 19, 23, 1};
  for (const Index& offset : {Index{-5, -3, -11, 0}, Index{-7, -16, 0, 0}, Index{-1, 2, -6, 0}}) {
    for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(3, volume), seed);
      std::vector<float> out(in.size());
      poison(out);
      detail::SeparableProblem p;
      p.input = make_view<const float>(in.data(), 3, volume);
      p.output = make_view(out.data(), 3, volume);
      p.boundary = b;
      for (int a = 0; a < 3; ++a) {
        p.taps[a] = random_values(kSlabTaps, seed + 11 + a);
        p.offset[a] = offset[a];
      }
      const cuda_backend::SeparablePlan plan = slab_plan(p);
      ASSERT_EQ(plan.passes[0].slab_taps, kSlabTaps);
      emulate_slab(plan.passes[0].geometry, in.data(), out.data(), plan.taps.data(), 8, 4);
      std::vector<double> ref(in.size());
      auto at = [&](int64_t x, int64_t y, int64_t z) -> double {
        const int64_t ix = detail::boundary_index(x, volume[0], b);
        const int64_t iy = detail::boundary_index(y, volume[1], b);
        const int64_t iz = detail::boundary_index(z, volume[2], b);
        if (ix < 0 || iy < 0 || iz < 0)
          return 0.0;
        return in[static_cast<size_t>((iz * volume[1] + iy) * volume[0] + ix)];
      };
      for (int64_t z = 0; z < volume[2]; ++z)
        for (int64_t y = 0; y < volume[1]; ++y)
          for (int64_t x = 0; x < volume[0]; ++x) {
            double sum = 0.0;
            for (int jz = 0; jz < kSlabTaps; ++jz)
              for (int jy = 0; jy < kSlabTaps; ++jy)
                for (int jx = 0; jx < kSlabTaps; ++jx)
                  sum += double(p.taps[2][jz]) * p.taps[1][jy] * p.taps[0][jx] *
                         at(x + offset[0] + jx, y + offset[1] + jy, z + offset[2] + jz);
            ref[static_cast<size_t>((z * volume[1] + y) * volume[0] + x)] = sum;
          }
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << to_string(b) << " offset " << offset[0] << "," << offset[1] << "," << offset[2]
          << " seed=" << seed;
    }
  }
}

TEST(SlabEmulationNan, StaysInsideTheFootprint) {
  for (int64_t resident : {0, 24}) {
    NanSeparableCase n = nan_separable_case(150, kSlabTaps);
    const cuda_backend::SeparablePlan plan = slab_plan(make_separable_problem(
        n.c.in_view, make_view(n.c.out.data(), 3, n.c.out_extent), n.c.filter,
        Operation::Correlation, OutputRegion::Same, Boundary::Zero));
    ASSERT_EQ(plan.passes[0].slab_taps, kSlabTaps);
    emulate_slab(plan.passes[0].geometry, n.c.in.data(), n.c.out.data(), plan.taps.data(), resident,
                 4);
    EXPECT_EQ(nan_mask_mismatches(n.c.out, n.ref, 1e-5), 0)
        << "resident " << resident << " seed=" << n.seed;
  }
}

// Every GPU plan of a 3D separable filter gives the same bits (slab_thread.h's arithmetic): the
// slab kernel, the column passes (x fused into y, then z) and the tiled x pass with the blocked
// kernel's y and z passes (a forced KO), on fresh random data with NaN-poisoned outputs, shifts 0
// to 3 (the slab kernel's x filter reads its raw rows at each), every boundary.
TEST(SlabEmulationBits, EveryPlanGivesTheSameBits) {
  const Index volume{75, 19, 23, 1};
  int shift = 0;
  for (Boundary b : kAllBoundaries) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(3, volume), seed);
    detail::SeparableProblem p;
    p.input = make_view<const float>(in.data(), 3, volume);
    p.boundary = b;
    for (int a = 0; a < 3; ++a) {
      p.taps[a] = random_values(kSlabTaps, seed + 11 + a);
      p.offset[a] = a == 0 ? -8 + shift : -8;
    }
    std::vector<std::vector<float>> outs;
    for (int plan_index = 0; plan_index < 3; ++plan_index) {
      std::vector<float> out(in.size());
      poison(out);
      p.output = make_view(out.data(), 3, volume);
      const cuda_backend::SeparablePlan plan = plan_index == 2
                                                   ? cuda_backend::plan_separable(
                                                         p, [](int, int64_t, int64_t) { return 4; },
                                                         cuda_backend::SeparableKernels::kTiledX)
                                                   : slab_plan(p, plan_index == 0);
      ASSERT_EQ(plan.passes[0].slab_taps > 0, plan_index == 0);
      emulate_separable(plan, in.data(), out.data(), voxels(3, volume));
      for (float v : out)
        ASSERT_FALSE(std::isnan(v)) << "plan " << plan_index << " left an output unwritten";
      outs.push_back(out);
    }
    for (int plan_index = 1; plan_index < 3; ++plan_index) {
      EXPECT_EQ(std::memcmp(outs[0].data(), outs[plan_index].data(), in.size() * sizeof(float)), 0)
          << "plan " << plan_index << " against the slab kernel, " << to_string(b) << " shift "
          << shift << " seed=" << seed;
    }
    shift = (shift + 1) % 4;
  }
}

}  // namespace
}  // namespace ndconv::test
