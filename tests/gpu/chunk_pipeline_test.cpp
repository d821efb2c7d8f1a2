// The CUDA backend's chunk pipeline on the host, in CI: the planner (src/cuda/chunk_plan.h) covers
// every output row once under the memory budget, the staged rows' runs follow the boundary, the
// resident plan's pieces, chunk input rows and waits are right for every boundary, the buffer
// cache (src/cuda/block_cache.h) reuses and bounds what it keeps, and a volume filtered in the
// planned chunks, staged run by run or resident as run_pipelined (src/cuda/cuda_backend.cu) runs
// them, with the kernels emulated on the host, equals one pass bit for bit and the float64
// reference.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cases.h"
#include "cuda/block_cache.h"
#include "cuda/chunk_plan.h"
#include "cuda/plan.h"
#include "cuda/separable/separable_plan.h"
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
  // 1 MiB, and just under kMinPipelinedFloats (16 MiB): one pass.
  ChunkRequest r = request(64, 64 * 64, 4, int64_t{1} << 30);
  EXPECT_TRUE(plan_chunks(r).one_pass);
  r = request(63, 256 * 256, 4, int64_t{1} << 30);
  EXPECT_LT(r.in_rows * r.in_row, cuda_backend::kMinPipelinedFloats);
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_TRUE(plan.one_pass);
  EXPECT_FALSE(plan.resident);
  EXPECT_EQ(plan.buffer_sets, 1);
  expect_covers(r, plan);
}

// The resident plan's invariants: the pieces cover the input once, in order; every output row in
// one chunk, in order, rows a multiple of kResidentRowMultiple but the last; each chunk's input
// rows inside the input, holding every row the chunk reads, resolving the boundary as the whole
// input does; its wait piece the one holding the last of those rows.
void expect_resident(const ChunkRequest& r, const ChunkPlan& plan) {
  ASSERT_TRUE(plan.resident);
  EXPECT_FALSE(plan.one_pass);
  EXPECT_EQ(plan.buffer_sets, 1);
  ASSERT_GE(plan.pieces.size(), 2u);
  int64_t next = 0;
  for (const cuda_backend::Piece& piece : plan.pieces) {
    EXPECT_EQ(piece.first, next);
    EXPECT_GE(piece.rows, 1);
    next += piece.rows;
  }
  EXPECT_EQ(next, r.in_rows);
  ASSERT_GE(plan.chunks.size(), 2u);
  next = 0;
  int64_t widest = 0;
  for (size_t k = 0; k < plan.chunks.size(); ++k) {
    const Chunk& c = plan.chunks[k];
    EXPECT_EQ(c.out_first, next);
    EXPECT_GE(c.out_rows, 1);
    if (k + 1 < plan.chunks.size()) {
      EXPECT_EQ(c.out_rows % cuda_backend::kResidentRowMultiple, 0);
    }
    next += c.out_rows;
    ASSERT_GE(c.in_first, 0);
    ASSERT_LE(c.in_first + c.in_rows, r.in_rows);
    widest = std::max(widest, c.in_rows);
    for (int64_t i = c.out_first + r.offset_last;
         i < c.out_first + c.out_rows + r.offset_last + r.halo; ++i) {
      const int64_t whole = detail::boundary_index(i, r.in_rows, r.boundary);
      const int64_t local = detail::boundary_index(i - c.in_first, c.in_rows, r.boundary);
      EXPECT_EQ(whole < 0 ? -1 : whole - c.in_first, local) << "row " << i << " chunk " << k;
    }
    ASSERT_GE(c.wait_piece, 0);
    ASSERT_LT(c.wait_piece, static_cast<int>(plan.pieces.size()));
    const cuda_backend::Piece& wait = plan.pieces[static_cast<size_t>(c.wait_piece)];
    EXPECT_GE(wait.first + wait.rows, c.in_first + c.in_rows) << "chunk " << k;
    EXPECT_LT(wait.first, c.in_first + c.in_rows) << "chunk " << k;
  }
  EXPECT_EQ(next, r.out_rows);
  EXPECT_EQ(plan.in_buffer_floats, r.in_rows * r.in_row);
  EXPECT_EQ(plan.out_buffer_floats, r.out_rows * r.out_row);
  EXPECT_EQ(plan.scratch_buffer_floats, widest * r.in_row * r.scratch_factor);
  EXPECT_GE(plan.compute_streams, 1);
  EXPECT_LE(plan.compute_streams * plan.scratch_buffer_floats,
            plan.in_buffer_floats * r.scratch_factor);
  EXPECT_LE(plan.device_floats() + r.reserved_floats, r.budget_floats);
}

TEST(ChunkPlan, LargeVolumesThatFitArePipelinedResident) {
  // 256^3 float32 (64 MiB), an 11-tap filter: chunks of 8, 7 x 32, 16 and 8 rows on three streams;
  // each piece the rows its chunk reads beyond the earlier chunks'.
  for (Boundary b : kAllBoundaries) {
    ChunkRequest r = request(256, 256 * 256, 10, int64_t{1} << 30);
    r.boundary = b;
    const ChunkPlan plan = plan_chunks(r);
    expect_resident(r, plan);
    EXPECT_EQ(plan.compute_streams, 3);
    ASSERT_EQ(plan.chunks.size(), 10u);
    EXPECT_EQ(plan.chunks[0].out_rows, 8);
    for (size_t k = 1; k < 8; ++k)
      EXPECT_EQ(plan.chunks[k].out_rows, 32);
    EXPECT_EQ(plan.chunks[8].out_rows, 16);
    EXPECT_EQ(plan.chunks[9].out_rows, 8);
    // Chunk 1 reads rows 3..44, its own rows whatever the boundary.
    EXPECT_EQ(plan.chunks[1].in_first, 3);
    EXPECT_EQ(plan.chunks[1].in_rows, 42);
    const Chunk& first = plan.chunks[0];
    EXPECT_EQ(first.in_first, 0);
    if (b == Boundary::Periodic) {
      // The first chunk wraps to the end: the pieces are even and it waits for every one.
      EXPECT_EQ(first.in_rows, 256);
      ASSERT_EQ(plan.pieces.size(), 8u);
      EXPECT_EQ(first.wait_piece, 7);
      EXPECT_EQ(plan.pieces[0].rows, 32);
      EXPECT_EQ(plan.chunks[1].wait_piece, 1);
      continue;
    }
    // Zero, replicate and mirror: the first chunk reads rows 0..12, the first piece; each later
    // piece holds the rows its chunk reads next (32, then 16 and 3), so chunk k waits for piece k.
    EXPECT_EQ(first.in_rows, 13);
    ASSERT_EQ(plan.pieces.size(), 10u);
    EXPECT_EQ(plan.pieces[0].rows, 13);
    EXPECT_EQ(plan.pieces[1].first, 13);
    EXPECT_EQ(plan.pieces[1].rows, 32);
    EXPECT_EQ(plan.pieces[8].rows, 16);
    EXPECT_EQ(plan.pieces[9].rows, 3);
    for (size_t k = 0; k < 10; ++k)
      EXPECT_EQ(plan.chunks[k].wait_piece, static_cast<int>(k)) << "chunk " << k;
  }
  // Separable scratch for three streams where three chunks' scratch fits the whole input's.
  ChunkRequest r = request(256, 256 * 256, 16, int64_t{1} << 30);
  r.scratch_factor = 2;
  const ChunkPlan plan = plan_chunks(r);
  expect_resident(r, plan);
  EXPECT_EQ(plan.compute_streams, 3);
}

TEST(ChunkPlan, ResidentChunksOfAFourDimensionalSequence) {
  // 96^3 x 16 float32, a 7-tap filter along t: 4 chunks of 4 frames; the first reads frames 0..6.
  ChunkRequest r = request(16, 96 * 96 * 96, 6, int64_t{1} << 30);
  for (Boundary b : kAllBoundaries) {
    r.boundary = b;
    const ChunkPlan plan = plan_chunks(r);
    expect_resident(r, plan);
    EXPECT_EQ(plan.chunks.size(), 4u);
    EXPECT_EQ(plan.chunks[1].in_first, 1);  // frames 4..7 read 1..10
    EXPECT_EQ(plan.chunks[1].in_rows, 10);
    if (b == Boundary::Periodic) {
      EXPECT_EQ(plan.pieces.size(), 8u);  // the first chunk wraps: even pieces of 2 frames
      EXPECT_EQ(plan.chunks[1].wait_piece, 5);
    } else {
      ASSERT_EQ(plan.pieces.size(), 4u);  // frames 0..6, 7..10, 11..14 and 15
      EXPECT_EQ(plan.pieces[1].first, 7);
      EXPECT_EQ(plan.chunks[1].wait_piece, 1);
    }
  }
  // Separable scratch: as many input-sized rows as the widest chunk reads.
  r.scratch_factor = 2;
  expect_resident(r, plan_chunks(r));
}

TEST(ChunkPlan, ResidentInputRowsKeepTheBoundaryExact) {
  // Short inputs and long halos: a mirror reflection past the rows read, or a periodic wrap, falls
  // back to the whole input; every case checked against the whole input's resolution.
  for (Boundary b : kAllBoundaries) {
    for (int64_t n : {1, 2, 5, 17}) {
      for (int64_t halo : {0, 3, 12, 40}) {
        ChunkRequest r = request(n, 4, halo, int64_t{1} << 30);
        r.boundary = b;
        for (int64_t count = 2; count <= n; ++count) {
          const ChunkPlan plan = cuda_backend::plan_resident(r, count);
          if (!plan.chunks.empty())
            expect_resident(r, plan);
        }
      }
    }
  }
  const cuda_backend::Piece far = detail::input_rows_read(0, 4, -20, 2, 8, Boundary::Mirror);
  EXPECT_EQ(far.first, 0);
  EXPECT_EQ(far.rows, 8);
}

TEST(ChunkPlan, MemoryBoundVolumesAreStillChunked) {
  // 256^3 float32 under a budget that holds the input and output once but not with the stored
  // copy of a uint8 input, or not at all: slabs with staged halos, as before.
  ChunkRequest r = request(256, 256 * 256, 10, 2 * 256 * 256 * 256 + 1000);
  r.stored_bytes = 1;
  ChunkPlan plan = plan_chunks(r);
  EXPECT_FALSE(plan.resident);
  EXPECT_FALSE(plan.one_pass);
  expect_covers(r, plan);
  r.stored_bytes = 0;
  EXPECT_TRUE(plan_chunks(r).resident);
  r.budget_floats = 256 * 256 * 256;
  plan = plan_chunks(r);
  EXPECT_FALSE(plan.resident);
  EXPECT_TRUE(plan.memory_bound);
  EXPECT_TRUE(plan.pieces.empty());
  expect_covers(r, plan);
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
      EXPECT_FALSE(plan.resident) << budget;
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

// The chunks of a resident plan as run_resident enqueues them: each the problem restricted to its
// output rows, reading the whole input with the offset moved (whole_views, the dense form) or the
// chunk's input rows (the separable form), filtered by `filter` into one output. The input goes up
// piece by piece into a device copy that starts as NaN, and each chunk runs once its wait piece is
// up, the chunks of one piece in reverse order (they may run at once on several streams): a chunk
// that read a row of a later piece, or depended on another chunk, would not equal one pass.
template <typename Problem, typename Filter>
std::vector<float> resident(const Problem& p, const ChunkPlan& plan, bool whole_views,
                            Filter filter) {
  const int dims = p.input.dims, last = dims - 1;
  EXPECT_TRUE(p.input.is_contiguous());
  const int64_t row = p.input.voxel_count() / p.input.extent[last];
  std::vector<float> device(static_cast<size_t>(p.input.voxel_count()),
                            std::numeric_limits<float>::quiet_NaN());
  const ConstVolumeView device_in = make_view<const float>(device.data(), dims, p.input.extent);
  std::vector<float> out(static_cast<size_t>(p.output.voxel_count()));
  poison(out);
  const VolumeView out_view = make_view(out.data(), dims, p.output.extent);
  for (size_t q = 0; q < plan.pieces.size(); ++q) {
    const cuda_backend::Piece& piece = plan.pieces[q];
    std::memcpy(device.data() + piece.first * row, p.input.data + piece.first * row,
                sizeof(float) * static_cast<size_t>(piece.rows * row));
    for (size_t k = plan.chunks.size(); k-- > 0;) {
      const Chunk& c = plan.chunks[k];
      if (c.wait_piece != static_cast<int>(q))
        continue;
      Problem s = p;
      s.input = device_in;
      s.output = cuda_backend::last_axis_rows(out_view, c.out_first, c.out_rows);
      s.offset[last] = p.offset[last] + c.out_first;
      if (!whole_views) {
        s.input = cuda_backend::last_axis_rows(device_in, c.in_first, c.in_rows);
        s.offset[last] -= c.in_first;
      }
      filter(s);
    }
  }
  return out;
}

ChunkRequest request_for(const ConstVolumeView& in, const Index& out_extent, int64_t halo,
                         int64_t offset_last, Boundary b) {
  const int last = in.dims - 1;
  ChunkRequest r;
  r.out_rows = out_extent[last];
  r.in_rows = in.extent[last];
  r.in_row = in.voxel_count() / r.in_rows;
  r.out_row = voxels(in.dims, out_extent) / r.out_rows;
  r.halo = halo;
  r.offset_last = offset_last;
  r.boundary = b;
  r.budget_floats = int64_t{1} << 30;
  return r;
}

const ShapeCase kPipelineShapes[] = {{2, {45, 37, 1, 1}, {3, 6, 1, 1}},
                                     {3, {21, 9, 26, 1}, {3, 2, 5, 1}},
                                     {4, {11, 5, 4, 13}, {3, 1, 2, 4}},
                                     {4, {9, 6, 5, 16}, {3, 3, 1, 7}}};

// Staged slabs and resident chunks (each chunk reading the whole input, as dense calls do, or its
// own input rows, as separable calls do) equal one pass bit for bit.
TEST(ChunkPipeline, ChunksEqualOnePassBitForBit) {
  for (const ShapeCase& shape : kPipelineShapes) {
    for (Boundary b : kAllBoundaries) {
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
        ChunkRequest r =
            request_for(in_view, out_extent, shape.filter[last] - 1, p.offset[last], b);
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
        for (int64_t count : {2, 3, 4}) {
          const ChunkPlan plan = cuda_backend::plan_resident(r, count);
          ASSERT_FALSE(plan.chunks.empty()) << shape << " count " << count;
          for (bool whole_views : {true, false}) {
            const int ko = count == 3 ? 8 : 4;
            const std::vector<float> got =
                resident(p, plan, whole_views, [&](const detail::CorrelationProblem& s) {
                  const std::vector<float> rows = cuda_backend::dense_tap_rows(s);
                  emulate_blocked_ko(ko, cuda_backend::dense_geometry(s), s.input.data,
                                     s.output.data, rows.data());
                });
            EXPECT_EQ(std::memcmp(got.data(), whole.data(), whole.size() * sizeof(float)), 0)
                << shape << " " << to_string(b) << " " << to_string(region) << " "
                << plan.chunks.size() << " resident chunks, whole views " << whole_views
                << ", seed=" << seed;
          }
        }
      }
    }
  }
}

TEST(ChunkPipeline, ResidentSeparableChunksEqualOnePassBitForBit) {
  for (const ShapeCase& shape : kPipelineShapes) {
    for (Boundary b : kAllBoundaries) {
      for (auto kernels :
           {cuda_backend::SeparableKernels::kColumns, cuda_backend::SeparableKernels::kTiledX}) {
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(shape.dims, shape.volume), seed);
        const ConstVolumeView in_view = make_view(in.data(), shape.dims, shape.volume);
        Index filter_extent;
        const SeparableFilter f = random_separable_filter(
            shape, seed, [&](int a) { return shape.filter[a] > 1; }, filter_extent);
        std::vector<float> whole(in.size());
        poison(whole);
        const detail::SeparableProblem p =
            make_separable_problem(in_view, make_view(whole.data(), shape.dims, shape.volume), f,
                                   Operation::Convolution, OutputRegion::Same, b);
        auto filter = [kernels](const detail::SeparableProblem& s) {
          const cuda_backend::SeparablePlan plan = cuda_backend::plan_separable(
              s, [](int, int64_t, int64_t) { return 4; }, kernels);
          emulate_separable(plan, s.input.data, s.output.data, s.input.voxel_count());
        };
        filter(p);
        const auto ref =
            reference_separable(in_view, f, Operation::Convolution, b, OutputRegion::Same);
        EXPECT_LT(relative_l2_error(whole, ref), 1e-5) << shape << " seed=" << seed;
        const int last = shape.dims - 1;
        const ChunkRequest r =
            request_for(in_view, shape.volume, filter_extent[last] - 1, p.offset[last], b);
        for (int64_t count : {2, 4}) {
          const ChunkPlan plan = cuda_backend::plan_resident(r, count);
          ASSERT_FALSE(plan.chunks.empty()) << shape << " count " << count;
          const std::vector<float> got = resident(p, plan, false, filter);
          EXPECT_EQ(std::memcmp(got.data(), whole.data(), whole.size() * sizeof(float)), 0)
              << shape << " " << to_string(b) << " " << plan.chunks.size()
              << " chunks, seed=" << seed;
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
