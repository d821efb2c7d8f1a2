// Host emulation of the streaming kernel of separable filters (cuda/separable/stream_thread.h; CI,
// no GPU): which filters the plan gives it, its chunks along z, its results against the float64
// reference for every boundary, operation and region on volumes with partial tiles, smaller than
// the filter and cut into chunks, with a strided output and fresh random data in NaN-poisoned
// outputs; bit for bit the column passes' results (x, then y, then z, taps ascending); and a NaN
// that must stay inside its footprint.
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
constexpr int kTaps = 17;

cuda_backend::SeparablePlan stream_plan(const detail::SeparableProblem& p, bool stream = true) {
  return cuda_backend::plan_separable(
      p, [](int, int64_t, int64_t) { return 4; }, cuda_backend::SeparableKernels::kColumns, 0,
      false, stream);
}

TEST(StreamPlan, TakesThreeDimensionalFiltersTheCopyEngineReads) {
  std::vector<float> in, out;
  auto plan = stream_plan(problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out));
  ASSERT_EQ(plan.passes.size(), 1u);
  EXPECT_EQ(plan.passes[0].stream_taps, kTaps);
  EXPECT_EQ(plan.passes[0].slab_taps, 0);
  EXPECT_EQ(plan.passes[0].source, cuda_backend::kInputBuffer);
  EXPECT_EQ(plan.passes[0].destination, cuda_backend::kOutputBuffer);
  EXPECT_EQ(plan.scratch_halves, 0);
  EXPECT_FALSE(plan.passes[0].x_row());
  EXPECT_FALSE(plan.passes[0].blocked());
  EXPECT_EQ(plan.taps.size(), 3u * kTaps);
  // Not asked for: the column kernel's two passes.
  plan = stream_plan(problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out), false);
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[0].stream_taps, 0);
  // Tap counts that differ between axes or are not compiled, an unfiltered axis, or 4D.
  for (const auto& [dims, filter] :
       {std::pair{3, Index{17, 17, 9, 0}}, std::pair{3, Index{5, 5, 5, 0}},
        std::pair{3, Index{17, 0, 17, 0}}, std::pair{4, Index{17, 17, 17, 17}}}) {
    plan = stream_plan(problem_with_taps(dims, {100, 40, 30, 4}, filter, in, out));
    for (const auto& pass : plan.passes)
      EXPECT_EQ(pass.stream_taps, 0) << ShapeCase{dims, {100, 40, 30, 4}, filter};
  }
  // Inputs the copy engine cannot read: rows not 16-byte aligned, x strided, a misaligned start.
  detail::SeparableProblem p = problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out);
  p.input.stride[1] = 103;
  p.input.stride[2] = 103 * 40;
  in.resize(103 * 40 * 30);
  p.input.data = in.data();
  EXPECT_EQ(stream_plan(p).passes[0].stream_taps, 0);
  p = problem_with_taps(3, {50, 40, 30, 1}, {17, 17, 17, 0}, in, out);
  p.input.stride[0] = 2;
  EXPECT_EQ(stream_plan(p).passes[0].stream_taps, 0);
  p = problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out);
  in.push_back(0.0f);
  p.input.data = in.data() + 1;
  EXPECT_EQ(stream_plan(p).passes[0].stream_taps, 0);
  // The same region of a filter whose boxes would not start on 16-byte boundaries along x: an
  // x offset of -6 (13 taps) is not compiled anyway; an offset of -5 with 17 taps is refused.
  p = problem_with_taps(3, {100, 40, 30, 1}, {17, 17, 17, 0}, in, out);
  p.offset = Index{-5, -8, -8, 0};
  EXPECT_EQ(stream_plan(p).passes[0].stream_taps, 0);
}

// The launch's chunks: about the device's resident blocks, at least min_chunk planes and at most
// kStreamMaxChunk each, and every output plane in exactly one chunk.
TEST(StreamPlan, ChunksCoverEveryPlaneOnce) {
  for (const Index& extent :
       {Index{256, 256, 1, 256}, Index{70, 20, 1, 45}, Index{13, 7, 1, 5}, Index{40, 40, 1, 600}}) {
    for (int64_t resident : {0, 1, 8, 264, 100000}) {
      kernels::Geometry g{};
      for (int a = 0; a < kernels::kAxes; ++a) {
        g.in_extent[a] = g.out_extent[a] = extent[a];
        g.filter_extent[a] = a == 2 ? 1 : kTaps;
      }
      kernels::StreamLayout l = kernels::stream_layout<kTaps>(g);
      const kernels::LaunchShape s = kernels::stream_launch_shape(g, l, resident, 4);
      EXPECT_LE(l.chunk, kernels::kStreamMaxChunk);
      std::vector<int> visits(static_cast<size_t>(extent[3]), 0);
      for (int64_t bz = 0; bz < s.grid[2]; ++bz) {
        const kernels::StreamBlock b = kernels::stream_block(g, l, 0, 0, static_cast<int>(bz));
        EXPECT_EQ(b.planes, b.o_hi - b.o_lo + kTaps - 1);
        for (int o = b.o_lo; o < b.o_hi; ++o)
          ++visits[static_cast<size_t>(o)];
      }
      EXPECT_EQ(std::count(visits.begin(), visits.end(), 1), extent[3])
          << ShapeCase{4, extent, {}} << " resident " << resident;
    }
  }
  // 256^3 on 264 resident blocks: 64 tiles of 32 x 32, 4 chunks of 64 planes.
  kernels::Geometry g{};
  for (int a = 0; a < kernels::kAxes; ++a) {
    g.in_extent[a] = g.out_extent[a] = a == 2 ? 1 : 256;
    g.filter_extent[a] = a == 2 ? 1 : kTaps;
  }
  kernels::StreamLayout l = kernels::stream_layout<kTaps>(g);
  const kernels::LaunchShape s = kernels::stream_launch_shape(g, l, 264, 32);
  EXPECT_EQ(s.grid[0] * s.grid[1], 64);
  EXPECT_EQ(s.grid[2], 4);
  EXPECT_EQ(l.chunk, 64);
}

// The face tiles' halo: none under the zero boundary, copied within the plane for replicate,
// mirror and reflect, fetched for periodic where a tile does not span the volume.
TEST(StreamPlan, HaloModes) {
  kernels::Geometry g{};
  for (int a = 0; a < kernels::kAxes; ++a) {
    g.in_extent[a] = g.out_extent[a] = a == 2 ? 1 : 100;
    g.filter_extent[a] = a == 2 ? 1 : kTaps;
    g.offset[a] = a == 2 ? 0 : -8;
  }
  g.boundary = kernels::kZero;
  EXPECT_EQ(cuda_backend::stream_layout_for(g).halo.halo_slots, 0);
  for (int b : {kernels::kReplicate, kernels::kMirror, kernels::kReflect, kernels::kPeriodic}) {
    g.boundary = b;
    const kernels::StreamLayout l = cuda_backend::stream_layout_for(g);
    EXPECT_GT(l.halo.halo_slots, 0) << b;
    EXPECT_EQ(l.halo.halo_local != 0, b != kernels::kPeriodic) << b;
    EXPECT_LE(l.total_floats * 4, cuda_backend::kStreamMaxSharedBytes);
  }
}

struct StreamCase {
  Index volume;
  int out_row_padding;  ///< extra floats per x row of the output view (a strided output)
};

class StreamEmulation : public ::testing::TestWithParam<StreamCase> {};

TEST_P(StreamEmulation, MatchesReference) {
  const StreamCase c = GetParam();
  const ShapeCase shape{3, c.volume, {kTaps, kTaps, kTaps, 1}};
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(3, c.volume), seed);
    const ConstVolumeView in_view = make_view<const float>(in.data(), 3, c.volume);
    Index filter_extent;
    const SeparableFilter f = random_separable_filter(
        shape, seed, [](int) { return true; }, filter_extent);
    const Index out_extent = reference_output_extent(in_view, filter_extent, region);
    std::vector<double> ref = reference_separable_passes(in_view, f, op, b);
    if (region == OutputRegion::Valid)
      ref = reference_separable(in_view, f, op, b, region);
    Index alloc = out_extent;
    alloc[0] += c.out_row_padding;
    // One chunk; chunks of at least 4 planes on a device of 40 resident blocks.
    for (int64_t resident : {0, 40}) {
      std::vector<float> storage(static_cast<size_t>(voxels(3, alloc)));
      poison(storage);
      VolumeView out_view = make_view(storage.data(), 3, alloc);
      out_view.extent = out_extent;
      const detail::SeparableProblem p =
          make_separable_problem(in_view, out_view, f, op, region, b);
      const cuda_backend::SeparablePlan plan = stream_plan(p);
      ASSERT_EQ(plan.passes.size(), 1u);
      ASSERT_EQ(plan.passes[0].stream_taps, kTaps);
      emulate_stream(plan.passes[0].geometry, in.data(), storage.data(), plan.taps.data(), resident,
                     4);
      std::vector<float> out(static_cast<size_t>(voxels(3, out_extent)));
      ConstVolumeView written = make_view<const float>(storage.data(), 3, alloc);
      written.extent = out_extent;
      cuda_backend::gather(written, out.data());
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << shape << " padding " << c.out_row_padding << " " << to_string(b) << " "
          << to_string(op) << " " << to_string(region) << " resident " << resident
          << " seed=" << seed;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Volumes, StreamEmulation,
    ::testing::Values(
        // Partial last tiles along x and y (3 x 1 tiles), chunks along z. (The copy engine reads
        // rows 16 bytes apart: x a multiple of 4 in a dense input.)
        StreamCase{{68, 20, 36, 1}, 0},
        // Several whole tiles and a partial one along x and y, a strided output.
        StreamCase{{76, 40, 20, 1}, 5},
        // Smaller than the filter along every axis: every tile a face tile.
        StreamCase{{12, 7, 5, 1}, 0}));

// Bit for bit the column passes (x fused into y, then z) on the same problem: every plan of a
// separable filter gives the same bits.
TEST(StreamEmulationBits, EqualsTheColumnPasses) {
  for (const auto& [volume, k] :
       {std::pair{Index{68, 45, 40, 1}, kTaps}, std::pair{Index{12, 7, 5, 1}, kTaps},
        std::pair{Index{44, 30, 20, 1}, 9}}) {
    for (Boundary b : kAllBoundaries) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(3, volume), seed);
      const ShapeCase shape{3, volume, {k, k, k, 1}};
      Index filter_extent;
      const SeparableFilter f = random_separable_filter(
          shape, seed, [](int) { return true; }, filter_extent);
      std::vector<float> streamed(in.size()), columns(in.size());
      poison(streamed);
      poison(columns);
      const ConstVolumeView in_view = make_view<const float>(in.data(), 3, volume);
      const detail::SeparableProblem ps =
          make_separable_problem(in_view, make_view(streamed.data(), 3, volume), f,
                                 Operation::Correlation, OutputRegion::Same, b);
      const detail::SeparableProblem pc =
          make_separable_problem(in_view, make_view(columns.data(), 3, volume), f,
                                 Operation::Correlation, OutputRegion::Same, b);
      const cuda_backend::SeparablePlan stream = stream_plan(ps);
      const cuda_backend::SeparablePlan column = stream_plan(pc, false);
      ASSERT_EQ(stream.passes[0].stream_taps, k);
      ASSERT_EQ(column.passes.size(), 2u);
      emulate_separable(stream, in.data(), streamed.data(), voxels(3, volume));
      emulate_separable(column, in.data(), columns.data(), voxels(3, volume));
      int64_t differ = 0;
      for (size_t i = 0; i < in.size(); ++i)
        differ += std::memcmp(&streamed[i], &columns[i], sizeof(float)) != 0;
      EXPECT_EQ(differ, 0) << k << " taps " << to_string(b) << " " << volume[0] << "x" << volume[1]
                           << "x" << volume[2] << " seed=" << seed;
    }
  }
}

TEST(StreamEmulationNan, StaysInsideTheFootprint) {
  for (int64_t resident : {0, 24}) {
    NanSeparableCase n = nan_separable_case(148, kTaps);
    const cuda_backend::SeparablePlan plan = stream_plan(make_separable_problem(
        n.c.in_view, make_view(n.c.out.data(), 3, n.c.out_extent), n.c.filter,
        Operation::Correlation, OutputRegion::Same, Boundary::Zero));
    ASSERT_EQ(plan.passes[0].stream_taps, kTaps);
    emulate_stream(plan.passes[0].geometry, n.c.in.data(), n.c.out.data(), plan.taps.data(),
                   resident, 4);
    EXPECT_EQ(nan_mask_mismatches(n.c.out, n.ref, 1e-5), 0)
        << "resident " << resident << " seed=" << n.seed;
  }
}

}  // namespace
}  // namespace ndconv::test
