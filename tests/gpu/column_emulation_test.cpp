// Host emulation of the column kernel of separable passes (cuda/separable/column_thread.h; CI, no
// GPU): which passes the plan gives it (x fused into the first other filtered axis), and its
// results against the float64 reference on volumes wide enough for whole warps inside the volume
// (128 x), partial last warps, 4-byte and 128-bit access paths, every boundary, fused and not, with
// fresh random data and NaN-poisoned outputs; plus a NaN that must stay inside its footprint.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"
#include "cuda/plan.h"
#include "cuda/separable/separable_plan.h"
#include "cuda/staging.h"
#include "emulate.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;
constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic, Boundary::Reflect};
using cuda_backend::SeparableKernels;

cuda_backend::SeparablePlan columns_plan(const detail::SeparableProblem& p, int ko = 0,
                                         SeparableKernels kernels = SeparableKernels::kColumns) {
  return cuda_backend::plan_separable(
      p, [](int, int64_t, int64_t) { return 4; }, kernels, ko);
}

TEST(ColumnPlan, FusesXIntoTheFirstOtherFilteredAxis) {
  std::vector<float> in, out;
  // 3D, every axis: x+y fused, then z; one scratch half.
  auto plan = columns_plan(problem_with_taps(3, {300, 20, 10, 1}, {17, 17, 17, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[0].axis, 1);
  EXPECT_TRUE(plan.passes[0].fuse_x());
  EXPECT_EQ(plan.passes[0].column_ko, cuda_backend::kColumnDefaultKo);
  EXPECT_EQ(plan.passes[1].axis, 2);
  EXPECT_FALSE(plan.passes[1].fuse_x());
  EXPECT_EQ(plan.passes[1].column_ko, cuda_backend::kColumnDefaultKo);
  EXPECT_EQ(plan.passes[0].column_form, kernels::ColumnForm::kFusedX);
  EXPECT_EQ(plan.passes[1].column_form, kernels::ColumnForm::kStaged);
  EXPECT_EQ(plan.scratch_halves, 1);
  // The fused pass's taps: its own axis, then x.
  EXPECT_EQ(plan.passes[0].geometry.tap_base, 0);
  EXPECT_EQ(plan.passes[1].geometry.tap_base, 34);
  // 4D: x+y, z, t.
  plan = columns_plan(problem_with_taps(4, {40, 6, 5, 4}, {3, 3, 3, 3}, in, out), 8);
  ASSERT_EQ(plan.passes.size(), 3u);
  EXPECT_TRUE(plan.passes[0].fuse_x());
  EXPECT_EQ(plan.passes[2].axis, 3);
  EXPECT_EQ(plan.passes[2].column_ko, 8);
  // x and z only: x fused into z.
  plan = columns_plan(problem_with_taps(3, {40, 6, 5, 1}, {5, 0, 3, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 1u);
  EXPECT_EQ(plan.passes[0].axis, 2);
  EXPECT_TRUE(plan.passes[0].fuse_x());
  // x only: the tiled x pass.
  plan = columns_plan(problem_with_taps(3, {40, 20, 5, 1}, {5, 0, 0, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 1u);
  EXPECT_EQ(plan.passes[0].column_ko, 0);
  EXPECT_GT(plan.passes[0].tiled_rows, 0);
  // No x filter: column passes only.
  plan = columns_plan(problem_with_taps(3, {40, 6, 5, 1}, {0, 3, 3, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_FALSE(plan.passes[0].fuse_x());
  EXPECT_EQ(plan.passes[0].column_ko, cuda_backend::kColumnDefaultKo);
  // A z filter too long for a staged tile (64 + 129 rows of 128 floats > 96 KiB): rows per lane.
  plan = columns_plan(problem_with_taps(3, {40, 6, 300, 1}, {0, 3, 130, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[0].column_form, kernels::ColumnForm::kStaged);
  EXPECT_EQ(plan.passes[1].column_form, kernels::ColumnForm::kDirect);
  EXPECT_EQ(plan.passes[1].column_ko, cuda_backend::kColumnDefaultKo);
  // An x filter too long for the staging buffers: x on its own pass, then columns.
  plan = columns_plan(problem_with_taps(3, {400, 6, 5, 1}, {1001, 3, 3, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 3u);
  EXPECT_EQ(plan.passes[0].axis, 0);
  EXPECT_EQ(plan.passes[0].column_ko, 0);
  EXPECT_FALSE(plan.passes[1].fuse_x());
  EXPECT_EQ(plan.passes[1].column_ko, cuda_backend::kColumnDefaultKo);
  EXPECT_EQ(plan.passes[1].geometry.tap_base, 1001);
  // A KO the column kernel does not have (forced for the blocked kernel): the passes before it.
  plan = columns_plan(problem_with_taps(3, {40, 6, 5, 1}, {3, 3, 3, 0}, in, out), 4);
  ASSERT_EQ(plan.passes.size(), 3u);
  for (const auto& pass : plan.passes)
    EXPECT_EQ(pass.column_ko, 0);
}

struct ColumnCase {
  int dims;
  Index volume;
  Index filter;
  int ko;
  int in_row_padding;  ///< extra floats per x row of the input view (4-byte path when not 0 mod 4)
};

std::ostream& operator<<(std::ostream& os, const ColumnCase& c) {
  return os << ShapeCase{c.dims, c.volume, c.filter} << " KO " << c.ko << " padding "
            << c.in_row_padding;
}

class ColumnEmulation : public ::testing::TestWithParam<ColumnCase> {};

TEST_P(ColumnEmulation, MatchesReference) {
  const ColumnCase c = GetParam();
  const ShapeCase shape{c.dims, c.volume, c.filter};
  // The fused pass stages lane by lane, or by bulk copy where the launcher would use it.
  for (const bool bulk : {false, true}) {
    for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
      const uint64_t seed = fresh_seed();
      // The input, possibly inside a wider allocation (rows padded along x).
      Index alloc = c.volume;
      alloc[0] += c.in_row_padding;
      std::vector<float> storage = random_values(voxels(c.dims, alloc), seed);
      ConstVolumeView in_view = make_view<const float>(storage.data(), c.dims, alloc);
      in_view.extent = c.volume;
      std::vector<float> dense(static_cast<size_t>(voxels(c.dims, c.volume)));
      cuda_backend::gather(in_view, dense.data());
      const ConstVolumeView dense_view = make_view<const float>(dense.data(), c.dims, c.volume);
      Index filter_extent;
      const SeparableFilter f = random_separable_filter(
          shape, seed, [&](int a) { return shape.filter[a] > 1; }, filter_extent);
      const Index out_extent = reference_output_extent(dense_view, filter_extent, region);
      std::vector<float> out(static_cast<size_t>(voxels(c.dims, out_extent)));
      poison(out);
      const detail::SeparableProblem p = make_separable_problem(
          in_view, make_view(out.data(), c.dims, out_extent), f, op, region, b);
      const cuda_backend::SeparablePlan plan = columns_plan(p, c.ko);
      ASSERT_EQ(plan.passes[0].column_ko, c.ko) << c;
      EXPECT_EQ(plan.passes[0].fuse_x(), c.filter[0] > 1) << c;
      emulate_separable(plan, storage.data(), out.data(), voxels(c.dims, c.volume), (seed & 1) != 0,
                        bulk);
      const std::vector<double> ref = reference_separable(dense_view, f, op, b, region);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << c << " " << to_string(b) << " " << to_string(op) << " " << to_string(region)
          << " bulk " << bulk << " seed=" << seed;
    });
  }
}

// Wide volumes: x from 129 (one whole warp and a partial one) to 300, so that warps lie inside
// the volume along x (no per-column boundary mapping) and the last lanes own 1-3 outputs.
INSTANTIATE_TEST_SUITE_P(
    Wide, ColumnEmulation,
    ::testing::Values(ColumnCase{3, {300, 5, 19, 1}, {9, 4, 6, 1}, 8, 0},
                      ColumnCase{3, {300, 5, 19, 1}, {9, 4, 6, 1}, 8, 0},
                      ColumnCase{3, {261, 3, 21, 1}, {17, 1, 5, 1}, 8, 0},
                      ColumnCase{3, {150, 4, 7, 1}, {1, 3, 2, 1}, 8, 0},
                      ColumnCase{2, {260, 37, 1, 1}, {17, 16, 1, 1}, 8, 0},
                      ColumnCase{2, {129, 41, 1, 1}, {2, 23, 1, 1}, 8, 0},
                      ColumnCase{4, {140, 3, 5, 6}, {3, 2, 3, 4}, 8, 0},
                      ColumnCase{4, {135, 2, 4, 9}, {4, 1, 1, 7}, 8, 0},
                      // Long filtered axes: most warps read every row inside the volume (the
                      // direct path), the first and last ones map rows at the faces.
                      ColumnCase{3, {140, 2, 90, 1}, {1, 1, 5, 1}, 8, 0},
                      ColumnCase{3, {132, 3, 70, 1}, {1, 1, 17, 1}, 8, 0},
                      ColumnCase{2, {132, 100, 1, 1}, {3, 9, 1, 1}, 8, 0},
                      // The first pass's axis holds several tiles of 64 outputs (the last one
                      // partial): tiles after a column's first take over its last x-filtered
                      // rows (ColumnLayout::reuse_rows), 16 and 4 of them; with K3 - 1 > 64 none.
                      ColumnCase{3, {140, 150, 3, 1}, {5, 17, 3, 1}, 8, 0},
                      ColumnCase{2, {136, 200, 1, 1}, {9, 5, 1, 1}, 8, 0},
                      ColumnCase{2, {132, 140, 1, 1}, {3, 67, 1, 1}, 8, 0},
                      // Narrower than a tile with 17 taps along x: more face columns than a bulk
                      // staged block fixes under the other boundaries (lane-by-lane staging).
                      ColumnCase{3, {100, 5, 70, 1}, {17, 9, 3, 1}, 8, 0},
                      // Rows padded by 3 floats: every row start misaligned (4-byte path).
                      ColumnCase{3, {200, 6, 9, 1}, {5, 3, 4, 1}, 8, 3},
                      ColumnCase{3, {200, 6, 9, 1}, {1, 5, 4, 1}, 8, 3},
                      // Padded by 4: aligned rows inside a wider allocation (128-bit path).
                      ColumnCase{3, {200, 6, 9, 1}, {1, 5, 4, 1}, 8, 4},
                      // A z filter too long for a staged tile: rows per lane (ColumnForm::kDirect)
                      // after the staged y pass.
                      ColumnCase{3, {130, 4, 150, 1}, {1, 3, 130, 1}, 8, 0}));

// The pass-by-pass float64 reference (for the GPU suite's large volumes) against the dense one.
TEST(ReferenceSeparablePasses, MatchesTheDenseReference) {
  for (const ShapeCase& s :
       {ShapeCase{3, {11, 7, 9, 1}, {5, 4, 3, 1}}, ShapeCase{2, {13, 6, 1, 1}, {7, 1, 1, 1}},
        ShapeCase{4, {5, 4, 6, 3}, {3, 2, 4, 2}}}) {
    for (Boundary b : kBoundaries) {
      for (Operation op : {Operation::Correlation, Operation::Convolution}) {
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
        const ConstVolumeView view = make_view(in.data(), s.dims, s.volume);
        Index filter_extent;
        const SeparableFilter f = random_separable_filter(
            s, seed, [&](int a) { return s.filter[a] > 1; }, filter_extent);
        const std::vector<double> dense = reference_separable(view, f, op, b, OutputRegion::Same);
        const std::vector<double> passes = reference_separable_passes(view, f, op, b);
        ASSERT_EQ(dense.size(), passes.size());
        // The dense reference rounds each outer-product tap to float (about 3e-8 relative); an
        // indexing or boundary mistake would be of order 1.
        EXPECT_LT(relative_l2_error(passes, dense), 1e-6)
            << s << " " << to_string(b) << " seed=" << seed;
      }
    }
  }
}

// The host emulation cannot see a read past the end of shared memory, so check the layout: each
// tile must hold every row the last warp's window reads (whole blocks of KO from its first row).
TEST(ColumnLayout, TileHoldsEveryRowTheWindowsRead) {
  using kernels::ColumnForm;
  for (ColumnForm form : {ColumnForm::kStaged, ColumnForm::kFusedX}) {
    for (int k3 = 1; k3 <= 40; ++k3) {
      for (int k0 : {1, 5, 17, 33}) {
        kernels::Geometry g{};
        for (int a = 0; a < kernels::kAxes; ++a) {
          g.filter_extent[a] = 1;
          g.in_extent[a] = g.out_extent[a] = 64;
        }
        g.filter_extent[3] = k3;
        if (form == ColumnForm::kFusedX)
          g.filter_extent[0] = k0;
        using S = cuda_backend::ColumnFusedShape;
        const kernels::ColumnLayout l = kernels::column_layout<S>(g, form);
        const int reads = ((k3 - 1) / S::KO + 2) * S::KO;
        const int last_row_read = S::kTileRows - S::KO + reads - 1;
        // Each tile holds the rows its windows read, and the tiles end before the staging buffers.
        EXPECT_LE((last_row_read + 1) * S::kTileX, l.tile_floats)
            << "form " << static_cast<int>(form) << " K3 " << k3 << " K0 " << k0;
        EXPECT_EQ(l.tiles, form == ColumnForm::kStaged ? 2 : 1);
        EXPECT_LE(l.filtered + l.tiles * l.tile_floats, l.stage);
        EXPECT_LE(l.stage + S::kWarps * l.stage_floats, l.total_floats);
        EXPECT_EQ(l.rows, S::kTileRows + k3 - 1);
      }
    }
  }
}

// The launcher caps the grid near the blocks the device holds (column_launch_shape); the blocks'
// walks (column_next_tile) must then still cover every block tile exactly once. The fused form's
// tiles that take over rows (column_first_staged_row > 0) must come right after the tile before
// them in the same column, in the same block.
TEST(ColumnWalk, CoversEveryTileOnceUnderAnyCap) {
  using S = cuda_backend::ColumnStagedShape;
  static_assert(S::kTileRows == cuda_backend::ColumnFusedShape::kTileRows, "one walk for both");
  for (kernels::ColumnForm form : {kernels::ColumnForm::kStaged, kernels::ColumnForm::kFusedX}) {
    for (const Index& extent : {Index{256, 256, 1, 256}, Index{300, 7, 5, 130}, Index{10, 1, 1, 3},
                                Index{129, 70000, 1, 65}}) {
      for (int64_t resident : {0, 1, 5, 264, 100000}) {
        kernels::Geometry g{};
        for (int a = 0; a < kernels::kAxes; ++a) {
          g.filter_extent[a] = 1;
          g.in_extent[a] = g.out_extent[a] = extent[a];
        }
        g.filter_extent[3] = 17;
        const kernels::ColumnLayout l = kernels::column_layout<S>(g, form);
        EXPECT_EQ(l.reuse_rows, form == kernels::ColumnForm::kFusedX ? 16 : 0);
        const kernels::LaunchShape s = kernels::column_launch_shape<S>(g, l, resident);
        int64_t counts[3];
        kernels::column_block_counts<S>(g, counts);
        const int64_t blocks = s.grid[0] * s.grid[1] * s.grid[2];
        if (resident > 0 && resident >= s.grid[0]) {
          EXPECT_LE(blocks, resident) << ShapeCase{4, extent, {}} << " resident " << resident;
        }
        std::vector<int> visits(static_cast<size_t>(counts[1] * counts[2]), 0);
        int64_t reused = 0;
        for (int64_t gy = 0; gy < s.grid[1]; ++gy) {
          for (int64_t gz = 0; gz < s.grid[2]; ++gz) {
            int64_t by = gy, bz = gz, last_by = -1, last_bz = -1;
            do {
              ++visits[static_cast<size_t>(by * counts[2] + bz)];
              if (kernels::column_first_staged_row<S>(g, l, bz, s.grid[2]) > 0) {
                ++reused;
                EXPECT_TRUE(last_by == by && last_bz == bz - 1)
                    << ShapeCase{4, extent, {}} << " resident " << resident << " tile " << by
                    << ", " << bz;
              }
              last_by = by;
              last_bz = bz;
            } while (kernels::column_next_tile(counts, gz, s.grid[1], s.grid[2], by, bz));
          }
        }
        EXPECT_EQ(std::count(visits.begin(), visits.end(), 1), counts[1] * counts[2])
            << ShapeCase{4, extent, {}} << " resident " << resident;
        // With a capped grid the fused form takes over rows in every tile but a column's first.
        const int64_t tiles3 = (extent[3] + S::kTileRows - 1) / S::kTileRows;
        if (form == kernels::ColumnForm::kFusedX && resident > 0) {
          EXPECT_EQ(reused, counts[1] * counts[2] / tiles3 * (tiles3 - 1))
              << ShapeCase{4, extent, {}};
        }
      }
    }
  }
}

TEST(ColumnEmulationNan, StaysInsideTheFootprint) {
  const ShapeCase shape{3, {200, 7, 30, 1}, {9, 3, 9, 1}};  // x offset -4: bulk copies fit
  for (int ko : cuda_backend::kColumnKos) {
    for (auto [x_filtered, bulk] :
         {std::pair{true, false}, std::pair{true, true}, std::pair{false, false}}) {
      const uint64_t seed = fresh_seed();
      std::vector<float> in = random_values(voxels(3, shape.volume), seed);
      in[(14 * 7 + 3) * 200 + 150] = std::numeric_limits<float>::quiet_NaN();
      const ConstVolumeView in_view = make_view<const float>(in.data(), 3, shape.volume);
      Index filter_extent;
      const SeparableFilter f = random_separable_filter(
          shape, seed, [&](int a) { return a > 0 || x_filtered; }, filter_extent);
      std::vector<float> out(in.size());
      poison(out);
      const detail::SeparableProblem p =
          make_separable_problem(in_view, make_view(out.data(), 3, shape.volume), f,
                                 Operation::Correlation, OutputRegion::Same, Boundary::Zero);
      const cuda_backend::SeparablePlan plan = columns_plan(p, ko);
      ASSERT_EQ(plan.passes[0].column_ko, ko);
      emulate_separable(plan, in.data(), out.data(), voxels(3, shape.volume), false, bulk);
      const std::vector<double> ref = reference_separable(in_view, f, Operation::Correlation,
                                                          Boundary::Zero, OutputRegion::Same);
      EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0)
          << "KO=" << ko << " x filtered=" << x_filtered << " bulk " << bulk << " seed=" << seed;
    }
  }
}

}  // namespace
}  // namespace ndconv::test
