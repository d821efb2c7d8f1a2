// The CUDA backend's host staging (src/cuda/staging.h), in CI: the memory-size setting, strided
// gather/scatter, the slab size, and slabbing itself. The slab test composes the staging functions
// exactly as run_in_slabs (src/cuda/cuda_backend.cu) does, with the kernels emulated on the host,
// and checks that slabs give the same result as one pass and as the float64 reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases.h"
#include "cuda/chunk_plan.h"
#include "cuda/plan.h"
#include "cuda/staging.h"
#include "emulate.h"
#include "reference.h"
#include "scoped_env.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_backend::parse_memory_size;

TEST(Staging, ParsesMemorySizes) {
  EXPECT_EQ(parse_memory_size("4096", "cap"), 4096u);
  EXPECT_EQ(parse_memory_size("3K", "cap"), 3u * 1024);
  EXPECT_EQ(parse_memory_size("64m", "cap"), 64u << 20);
  EXPECT_EQ(parse_memory_size("2G", "cap"), 2ull << 30);
  for (const char* bad : {"", "abc", "-5", "0", "12Q", "5KB", "1.5G", "K"})
    EXPECT_THROW(parse_memory_size(bad, "cap"), InvalidArgument) << bad;
}

TEST(Staging, MemoryCapPrefersTheOption) {
  Options o;
  {
    ScopedEnvs env;
    env.set("NDCONV_DEVICE_MEMORY_CAP", "2M");
    EXPECT_EQ(cuda_backend::memory_cap(o), 2u << 20);
    o.device_memory_cap = 1000;
    EXPECT_EQ(cuda_backend::memory_cap(o), 1000u);
    o.device_memory_cap = 0;
    env.set("NDCONV_DEVICE_MEMORY_CAP", "lots");
    EXPECT_THROW(cuda_backend::memory_cap(o), InvalidArgument);
  }
  ::unsetenv("NDCONV_DEVICE_MEMORY_CAP");  // neither the option nor the variable
  EXPECT_EQ(cuda_backend::memory_cap(o), 0u);
}

TEST(Staging, GatherScatterRoundTripStridedViews) {
  std::vector<float> big = random_values(9 * 8 * 7, fresh_seed());
  ConstVolumeView v = make_view<const float>(big.data() + 2, 3, {9, 8, 7});
  v.extent = {5, 6, 4, 1};
  std::vector<float> packed(5 * 6 * 4);
  cuda_backend::gather(v, packed.data());
  EXPECT_EQ(packed[0], big[2]);
  EXPECT_EQ(packed[5], big[2 + 9]);       // next y
  EXPECT_EQ(packed[30], big[2 + 9 * 8]);  // next z
  std::vector<float> back(big.size(), 0.0f);
  VolumeView w = make_view(back.data() + 2, 3, {9, 8, 7});
  w.extent = v.extent;
  cuda_backend::scatter(packed.data(), w);
  for (int64_t z = 0; z < 4; ++z)
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t x = 0; x < 5; ++x)
        EXPECT_EQ(w.at({x, y, z, 0}), v.at({x, y, z, 0}));
}

TEST(Staging, SlabRowsFitTheBudget) {
  // 100 floats per input row, 90 per output row, halo of 4 rows, one scratch copy of the input.
  cuda_backend::ChunkRequest r;
  r.in_row = 100;
  r.out_row = 90;
  r.halo = 4;
  r.scratch_factor = 1;
  const int64_t rows = cuda_backend::rows_fitting(r, 10000, 1);
  EXPECT_EQ(rows, (10000 - 4 * 200) / (200 + 90));
  EXPECT_LE((rows + 4) * 200 + rows * 90, 10000);
  EXPECT_EQ(cuda_backend::rows_fitting(r, 800, 1), 0);           // not even the halo fits
  EXPECT_EQ(cuda_backend::rows_fitting(r, 2 * 10000, 2), rows);  // per set in flight
}

// Slabs of `rows` output rows along the last axis, staged and filtered as run_in_slabs does.
std::vector<float> slabbed(const detail::CorrelationProblem& p, int64_t rows, int ko) {
  const int dims = p.input.dims, last = dims - 1;
  const int64_t halo = p.filter_extent[last] - 1;
  const int64_t in_row = p.input.voxel_count() / p.input.extent[last];
  std::vector<float> out(static_cast<size_t>(p.output.voxel_count()));
  poison(out);
  const VolumeView out_view = make_view(out.data(), dims, p.output.extent);
  for (int64_t o0 = 0; o0 < p.output.extent[last]; o0 += rows) {
    const int64_t n_rows = std::min(rows, p.output.extent[last] - o0);
    std::vector<float> staged(static_cast<size_t>((n_rows + halo) * in_row));
    cuda_backend::stage_slab_input(p.input, o0 + p.offset[last], n_rows + halo, p.boundary,
                                   staged.data());
    detail::CorrelationProblem s = p;
    Index in_extent = p.input.extent, out_extent = p.output.extent;
    in_extent[last] = n_rows + halo;
    out_extent[last] = n_rows;
    s.input = make_view<const float>(staged.data(), dims, in_extent);
    std::vector<float> slab_out(static_cast<size_t>(n_rows * (out.size() / p.output.extent[last])));
    s.output = make_view(slab_out.data(), dims, out_extent);
    s.offset[last] = 0;
    const std::vector<float> taps = cuda_backend::dense_tap_rows(s);
    emulate_blocked_ko(ko, cuda_backend::dense_geometry(s), s.input.data, s.output.data,
                       taps.data());
    cuda_backend::scatter(slab_out.data(), cuda_backend::last_axis_rows(out_view, o0, n_rows));
  }
  return out;
}

TEST(Staging, SlabsEqualOnePass) {
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
        std::vector<float> whole(static_cast<size_t>(voxels(shape.dims, out_extent)));
        std::vector<float> flipped;
        const detail::CorrelationProblem p =
            make_problem(in_view, make_view(whole.data(), shape.dims, out_extent), f,
                         Operation::Convolution, region, b, flipped);
        const std::vector<float> tap_rows = cuda_backend::dense_tap_rows(p);
        emulate_blocked_ko(4, cuda_backend::dense_geometry(p), in.data(), whole.data(),
                           tap_rows.data());
        const std::vector<double> whole_d(whole.begin(), whole.end());
        const auto ref = reference_dense(in_view, f, Operation::Convolution, b, region);
        for (int64_t rows : {1, 3, 4}) {
          const std::vector<float> got = slabbed(p, rows, rows == 3 ? 2 : 8);
          EXPECT_LT(relative_l2_error(got, whole_d), 1e-6)
              << shape << " " << to_string(b) << " rows=" << rows << " seed=" << seed;
          EXPECT_LT(relative_l2_error(got, ref), 1e-5)
              << shape << " " << to_string(b) << " rows=" << rows << " seed=" << seed;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ndconv::test
