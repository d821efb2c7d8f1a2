// The CUDA backend's chunk pipeline on the host, in CI: the planner (src/cuda/chunk_plan.h) covers
// every output row once under the memory budget, the staged rows' runs follow the boundary, the
// buffer cache (src/cuda/block_cache.h) reuses and bounds what it keeps, and a volume filtered in
// the planned chunks, staged run by run as run_pipelined (src/cuda/cuda_backend.cu) stages them,
// with the kernel emulated on the host, equals one pass bit for bit and the float64 reference.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cases.h"
#include "cuda/block_cache.h"
#include "cuda/chunk_plan.h"
#include "cuda/plan.h"
#include "cuda/staging.h"
#include "emulate.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_backend::Chunk;
using cuda_backend::ChunkPlan;
using cuda_backend::ChunkRequest;
using cuda_backend::plan_chunks;

ChunkRequest request(int64_t rows, int64_t row, int64_t halo, int64_t budget, int64_t scratch = 0) {
  ChunkRequest r;
  r.out_rows = rows;
  r.in_rows = rows;
  r.in_row = row;
  r.out_row = row;
  r.halo = halo;
  r.offset_last = -(halo / 2);
  r.scratch_factor = scratch;
  r.budget_floats = budget;
  return r;
}

// Every output row once, in order; staged chunks read rows out_first + offset .. + halo.
void expect_covers(const ChunkRequest& r, const ChunkPlan& plan) {
  ASSERT_FALSE(plan.chunks.empty());
  int64_t next = 0;
  for (const Chunk& c : plan.chunks) {
    EXPECT_EQ(c.out_first, next);
    EXPECT_GE(c.out_rows, 1);
    if (plan.one_pass) {
      EXPECT_EQ(c.in_first, 0);
      EXPECT_EQ(c.in_rows, r.in_rows);
    } else {
      EXPECT_EQ(c.in_first, c.out_first + r.offset_last);
      EXPECT_EQ(c.in_rows, c.out_rows + r.halo);
      EXPECT_LE(c.in_rows * r.in_row, plan.in_buffer_floats);
      EXPECT_LE(c.out_rows * r.out_row, plan.out_buffer_floats);
    }
    next += c.out_rows;
  }
  EXPECT_EQ(next, r.out_rows);
  EXPECT_EQ(plan.one_pass, plan.chunks.size() == 1 && plan.chunks[0].in_first == 0 &&
                               plan.chunks[0].in_rows == r.in_rows);
  EXPECT_LE(plan.device_floats() + r.reserved_floats, r.budget_floats);
  EXPECT_EQ(plan.scratch_buffer_floats, plan.in_buffer_floats * r.scratch_factor);
}

TEST(ChunkPlan, SmallVolumesRunInOnePass) {
  const ChunkRequest r = request(64, 64 * 64, 4, int64_t{1} << 30);
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_TRUE(plan.one_pass);
  EXPECT_EQ(plan.buffer_sets, 1);
  expect_covers(r, plan);
}

TEST(ChunkPlan, LargeVolumesArePipelinedInTargetSizedChunks) {
  // 256^3 float32 (64 MiB): chunks of kTargetChunkFloats of input, three in flight.
  const ChunkRequest r = request(256, 256 * 256, 4, int64_t{1} << 30);
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_FALSE(plan.one_pass);
  EXPECT_FALSE(plan.memory_bound);
  EXPECT_EQ(plan.buffer_sets, cuda_backend::kMaxBufferSets);
  EXPECT_EQ(plan.chunks.size(), 8u);
  EXPECT_EQ(plan.chunks[0].out_rows * r.in_row, cuda_backend::kTargetChunkFloats);
  expect_covers(r, plan);
}

TEST(ChunkPlan, LongFiltersGetFewerLongerChunks) {
  // A halo of 30 rows: at least 4 output rows per halo row, so 2 chunks of 128 rows (not 120, 120
  // and a last one of 16).
  const ChunkRequest r = request(256, 256 * 256, 30, int64_t{1} << 30);
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_FALSE(plan.one_pass);
  EXPECT_EQ(plan.chunks.size(), 2u);
  EXPECT_EQ(plan.chunks[0].out_rows, 128);
  expect_covers(r, plan);
  // Too long for two such chunks: one pass.
  const ChunkRequest longer = request(256, 256 * 256, 100, int64_t{1} << 30);
  EXPECT_TRUE(plan_chunks(longer).one_pass);
}

TEST(ChunkPlan, TheMemoryBudgetBoundsTheChunks) {
  for (int64_t scratch : {0, 2}) {
    for (int64_t budget : {int64_t{9000}, int64_t{5000}, int64_t{1500}}) {
      const ChunkRequest r = request(57, 100, 6, budget, scratch);
      if (budget < (r.halo + 1) * r.in_row * (1 + scratch) + r.out_row) {
        EXPECT_THROW(plan_chunks(r), InvalidArgument) << budget;
        continue;
      }
      const ChunkPlan plan = plan_chunks(r);
      EXPECT_FALSE(plan.one_pass) << budget;
      EXPECT_TRUE(plan.memory_bound) << budget;
      expect_covers(r, plan);
    }
  }
  // A budget that holds one row but not two sets: one set in flight.
  ChunkRequest r = request(57, 100, 6, 0);
  r.budget_floats = 7 * 100 + 100 + 50;
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_EQ(plan.buffer_sets, 1);
  EXPECT_EQ(plan.chunks.size(), 57u);
  expect_covers(r, plan);
  r.budget_floats = 7 * 100 + 99;
  EXPECT_THROW(plan_chunks(r), InvalidArgument);
}

TEST(ChunkPlan, ReservedMemoryCounts) {
  ChunkRequest r = request(57, 100, 2, 57 * 200 + 1000);
  EXPECT_TRUE(plan_chunks(r).one_pass);
  r.reserved_floats = 2000;
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_FALSE(plan.one_pass);
  expect_covers(r, plan);
}

TEST(ChunkPlan, RowRunsFollowTheBoundary) {
  const int64_t n = 10;
  const Chunk interior{3, 4, 2, 6};  // rows 2..7: all inside
  auto runs = cuda_backend::row_runs(
      interior, [&](int64_t i) { return detail::boundary_index(i, n, Boundary::Mirror); });
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, 2);
  EXPECT_EQ(runs[0].rows, 6);

  const Chunk first{0, 3, -2, 5};  // rows -2..2
  runs = cuda_backend::row_runs(
      first, [&](int64_t i) { return detail::boundary_index(i, n, Boundary::Zero); });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].source, -1);
  EXPECT_EQ(runs[0].rows, 2);
  EXPECT_EQ(runs[1].source, 0);
  EXPECT_EQ(runs[1].rows, 3);

  runs = cuda_backend::row_runs(
      first, [&](int64_t i) { return detail::boundary_index(i, n, Boundary::Periodic); });
  ASSERT_EQ(runs.size(), 2u);  // rows 8, 9 then 0, 1, 2
  EXPECT_EQ(runs[0].source, 8);
  EXPECT_EQ(runs[0].rows, 2);
  EXPECT_EQ(runs[1].first, 2);

  runs = cuda_backend::row_runs(
      first, [&](int64_t i) { return detail::boundary_index(i, n, Boundary::Replicate); });
  ASSERT_EQ(runs.size(), 3u);  // 0, 0, then 0..2
  int64_t rows = 0;
  for (const auto& run : runs)
    rows += run.rows;
  EXPECT_EQ(rows, first.in_rows);
}

// The chunks of `plan`, staged run by run (zero runs cleared, source runs copied) and filtered by
// the emulated blocked kernel with KO `ko`, as run_pipelined composes them.
std::vector<float> pipelined(const detail::CorrelationProblem& p, const ChunkPlan& plan, int ko) {
  const int dims = p.input.dims, last = dims - 1;
  const int64_t in_row = p.input.voxel_count() / p.input.extent[last];
  const int64_t out_row = p.output.voxel_count() / p.output.extent[last];
  std::vector<float> out(static_cast<size_t>(p.output.voxel_count()));
  poison(out);
  const VolumeView out_view = make_view(out.data(), dims, p.output.extent);
  std::vector<float> staged(static_cast<size_t>(plan.in_buffer_floats));
  std::vector<float> chunk_out(static_cast<size_t>(plan.out_buffer_floats));
  for (const Chunk& c : plan.chunks) {
    poison(staged);
    poison(chunk_out);
    const auto runs = plan.one_pass
                          ? std::vector<cuda_backend::RowRun>{{0, c.in_rows, 0}}
                          : cuda_backend::row_runs(c, [&](int64_t i) {
                              return detail::boundary_index(i, p.input.extent[last], p.boundary);
                            });
    for (const auto& run : runs) {
      float* dst = staged.data() + run.first * in_row;
      if (run.source < 0)
        std::memset(dst, 0, sizeof(float) * static_cast<size_t>(run.rows * in_row));
      else
        std::memcpy(dst, p.input.data + run.source * in_row,
                    sizeof(float) * static_cast<size_t>(run.rows * in_row));
    }
    detail::CorrelationProblem s = p;
    Index in_extent = p.input.extent, out_extent = p.output.extent;
    in_extent[last] = c.in_rows;
    out_extent[last] = c.out_rows;
    s.input = make_view<const float>(staged.data(), dims, in_extent);
    s.output = make_view(chunk_out.data(), dims, out_extent);
    if (!plan.one_pass)
      s.offset[last] = 0;
    const std::vector<float> taps = cuda_backend::dense_tap_rows(s);
    emulate_blocked_ko(ko, cuda_backend::dense_geometry(s), s.input.data, s.output.data,
                       taps.data());
    std::memcpy(cuda_backend::last_axis_rows(out_view, c.out_first, c.out_rows).data,
                chunk_out.data(), sizeof(float) * static_cast<size_t>(c.out_rows * out_row));
  }
  return out;
}

TEST(ChunkPipeline, ChunksEqualOnePassBitForBit) {
  const ShapeCase shapes[] = {{2, {45, 37, 1, 1}, {3, 6, 1, 1}},
                              {3, {21, 9, 26, 1}, {3, 2, 5, 1}},
                              {4, {11, 5, 4, 13}, {3, 1, 2, 4}}};
  for (const ShapeCase& shape : shapes) {
    for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic}) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(shape.dims, shape.volume), seed);
        const std::vector<float> taps = random_values(voxels(shape.dims, shape.filter), seed + 1);
        const ConstVolumeView in_view = make_view(in.data(), shape.dims, shape.volume);
        const DenseFilter f{shape.dims, shape.filter, taps.data()};
        const Index out_extent = reference_output_extent(in_view, shape.filter, region);
        std::vector<float> unused(static_cast<size_t>(voxels(shape.dims, out_extent)));
        std::vector<float> flipped;
        const detail::CorrelationProblem p =
            make_problem(in_view, make_view(unused.data(), shape.dims, out_extent), f,
                         Operation::Convolution, region, b, flipped);
        const int last = shape.dims - 1;
        ChunkRequest r;
        r.out_rows = out_extent[last];
        r.in_rows = shape.volume[last];
        r.in_row = voxels(shape.dims, shape.volume) / r.in_rows;
        r.out_row = voxels(shape.dims, out_extent) / r.out_rows;
        r.halo = shape.filter[last] - 1;
        r.offset_last = p.offset[last];
        r.budget_floats = int64_t{1} << 30;
        const ChunkPlan one = plan_chunks(r);
        ASSERT_TRUE(one.one_pass);
        const std::vector<float> whole = pipelined(p, one, 4);
        const auto ref = reference_dense(in_view, f, Operation::Convolution, b, region);
        EXPECT_LT(relative_l2_error(whole, ref), 1e-5) << shape << " seed=" << seed;
        // Budgets for about a third, a sixth and one row of the volume per set.
        for (int64_t parts : {3, 6, 1000}) {
          r.budget_floats = (r.in_rows * r.in_row + r.out_rows * r.out_row) / parts +
                            (r.halo + 1) * r.in_row + r.out_row;
          const ChunkPlan plan = plan_chunks(r);
          ASSERT_FALSE(plan.one_pass) << shape << " parts " << parts;
          // Another KO for the chunks: the blocked kernel sums each output in the same order.
          const int ko = parts == 3 ? 2 : parts == 6 ? 8 : 4;
          const std::vector<float> got = pipelined(p, plan, ko);
          EXPECT_EQ(std::memcmp(got.data(), whole.data(), whole.size() * sizeof(float)), 0)
              << shape << " " << to_string(b) << " " << to_string(region) << " "
              << plan.chunks.size() << " chunks, seed=" << seed;
        }
      }
    }
  }
}

// A fake allocator: addresses from a counter, every live block recorded.
struct FakeDevice {
  std::map<void*, size_t> live;
  size_t capacity = 1000;
  size_t used = 0;
  char* next = reinterpret_cast<char*>(0x1000);
  cuda_backend::BlockCache cache{[this](size_t bytes) -> void* {
                                   if (used + bytes > capacity)
                                     return nullptr;
                                   void* p = next;
                                   next += bytes;
                                   live[p] = bytes;
                                   used += bytes;
                                   return p;
                                 },
                                 [this](void* p) {
                                   used -= live.at(p);
                                   live.erase(p);
                                 }};
};

TEST(BlockCache, ReusesKeepsWithinTheLimitAndReleases) {
  using cuda_backend::BlockCache;
  EXPECT_EQ(BlockCache::round_up(1), size_t{1} << 16);
  EXPECT_EQ(BlockCache::round_up((size_t{1} << 20) + 1), size_t{2} << 20);
  FakeDevice d;
  d.capacity = size_t{64} << 20;
  const auto a = d.cache.take(3 << 20);
  ASSERT_NE(a.first, nullptr);
  EXPECT_EQ(a.second, size_t{3} << 20);
  d.cache.give(a.first, a.second, size_t{16} << 20);
  EXPECT_EQ(d.cache.idle_bytes(), size_t{3} << 20);
  // Same size again: the idle block, no allocation.
  const auto b = d.cache.take((3 << 20) - 100);
  EXPECT_EQ(b.first, a.first);
  EXPECT_EQ(d.cache.allocations(), 1u);
  EXPECT_EQ(d.cache.reuses(), 1u);
  // Much smaller: a new block (the idle one would waste more than half).
  d.cache.give(b.first, b.second, size_t{16} << 20);
  const auto c = d.cache.take(1 << 20);
  EXPECT_NE(c.first, a.first);
  // Beyond the kept limit: freed on return.
  d.cache.give(c.first, c.second, size_t{3} << 20);
  EXPECT_LE(d.cache.idle_bytes(), size_t{3} << 20);
  EXPECT_EQ(d.used, d.cache.idle_bytes());
  d.cache.release_idle();
  EXPECT_EQ(d.cache.idle_bytes(), 0u);
  EXPECT_TRUE(d.live.empty());
}

TEST(BlockCache, OutOfMemoryFreesIdleBlocksAndRetries) {
  FakeDevice d;
  d.capacity = size_t{4} << 20;
  const auto a = d.cache.take(3 << 20);
  d.cache.give(a.first, a.second, size_t{64} << 20);
  // 2 MiB more does not fit beside the idle 3 MiB; the cache frees it and succeeds.
  const auto b = d.cache.take(2 << 20);
  ASSERT_NE(b.first, nullptr);
  EXPECT_EQ(d.cache.idle_bytes(), 0u);
  // Nothing idle to free: null.
  const auto c = d.cache.take(3 << 20);
  EXPECT_EQ(c.first, nullptr);
  d.cache.give(b.first, b.second, 0);
  EXPECT_TRUE(d.live.empty());
}

}  // namespace
}  // namespace ndconv::test
