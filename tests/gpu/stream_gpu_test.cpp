// The streaming kernel of separable filters (cuda/separable/stream_thread.h) on the GPU (skipped
// without a usable GPU): against the float64 reference for every boundary, both operations and
// regions, on volumes with partial tiles and smaller than the filter; every plan of a separable
// filter (the streaming pass, the column passes) forced on the same random data gives the same
// bits, on volumes whose extents are not multiples of the tile, under several boundaries, into
// NaN-poisoned outputs, dense and strided; a NaN stays inside its footprint.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cases.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "separable_kernel_cases.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "cuda/tuning.h"
#include "device_copies.h"
#endif

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;  // float32 lands near 1e-6

bool ran_stream(const RunReport& r) {
  return r.outputs_per_thread_reason.find("streaming kernel") != std::string::npos;
}

TEST(CudaStream, MatchesReferenceEveryBoundaryOperationAndRegion) {
  NDCONV_REQUIRE_GPU();
  // x a multiple of 4: the copy engine reads rows 16 bytes apart (the host call stages the input
  // densely). Partial tiles along x and y, two chunks along z; smaller than the filter.
  expect_separable_kernel_matches_reference({ShapeCase{3, {68, 20, 24, 1}, {17, 17, 17, 1}},
                                             ShapeCase{3, {12, 7, 5, 1}, {17, 17, 17, 1}}},
                                            "streaming kernel", kTolerance);
}

#ifdef NDCONV_HAVE_CUDA

using cuda_backend::DeviceBuffer;

// One plan forced through the launch-level API: the output (its view's allocation, NaN-poisoned
// first) and the plan's family.
struct Forced {
  std::vector<float> out;
  std::string family;
};

Forced run_forced(const detail::SeparableProblem& host, const DeviceBuffer& in, const Index& alloc,
                  const cuda_backend::Tuning& tuning) {
  std::vector<float> poisoned(static_cast<size_t>(voxels(3, alloc)));
  poison(poisoned);
  DeviceBuffer out = to_device(poisoned);
  detail::SeparableProblem p = host;
  p.input.data = in.get();
  p.output.data = out.get();
  DeviceBuffer scratch(std::max<std::size_t>(1, cuda_backend::separable_scratch_floats(p)));
  const cuda_backend::LaunchPlan plan =
      cuda_backend::launch_separable_device(p, scratch.get(), 0, nullptr, 0, tuning);
  return {to_host(out, poisoned.size()), plan.family};
}

// Every plan gives the same bits: the streaming pass (the default where it can run) against the
// column passes, forced by the tuning, on random data; outputs dense and in a wider allocation
// (rows 5 floats longer: any output strides).
TEST(CudaStream, EveryPlanGivesTheSameBits) {
  NDCONV_REQUIRE_GPU();
  cuda_backend::Tuning columns;
  columns.separable_stream = false;
  columns.separable_slab = false;
  for (const auto& [volume, k] :
       {std::pair{Index{100, 70, 50, 1}, 17}, std::pair{Index{272, 140, 72, 1}, 17},
        std::pair{Index{48, 40, 300, 1}, 17}, std::pair{Index{100, 70, 50, 1}, 9}}) {
    for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
      for (int padding : {0, 5}) {
        const uint64_t seed = fresh_seed();
        const ShapeCase shape{3, volume, {k, k, k, 1}};
        const std::vector<float> in = random_values(voxels(3, volume), seed);
        Index filter_extent;
        const SeparableFilter f = random_separable_filter(
            shape, seed, [](int) { return true; }, filter_extent);
        Index alloc = volume;
        alloc[0] += padding;
        VolumeView out_view = make_view(static_cast<float*>(nullptr), 3, alloc);
        out_view.extent = volume;
        const detail::SeparableProblem p =
            make_separable_problem(make_view<const float>(nullptr, 3, volume), out_view, f,
                                   Operation::Correlation, OutputRegion::Same, b);
        const DeviceBuffer d_in = to_device(in);
        const Forced stream = run_forced(p, d_in, alloc, cuda_backend::Tuning{});
        const Forced column = run_forced(p, d_in, alloc, columns);
        EXPECT_EQ(stream.family, "stream");
        EXPECT_EQ(column.family, "column");
        int64_t differ = 0, nan = 0;
        for (int64_t z = 0; z < volume[2]; ++z)
          for (int64_t y = 0; y < volume[1]; ++y)
            for (int64_t x = 0; x < volume[0]; ++x) {
              const size_t i = static_cast<size_t>((z * alloc[1] + y) * alloc[0] + x);
              nan += std::isnan(stream.out[i]) || std::isnan(column.out[i]);
              differ += std::memcmp(&stream.out[i], &column.out[i], sizeof(float)) != 0;
            }
        // The padding columns stay as poisoned: nothing is written outside the view.
        int64_t outside = 0;
        for (int64_t r = 0; r < volume[1] * volume[2] && padding > 0; ++r)
          for (int64_t x = volume[0]; x < alloc[0]; ++x)
            outside += !std::isnan(stream.out[static_cast<size_t>(r * alloc[0] + x)]);
        EXPECT_EQ(nan, 0) << k << " taps " << volume[0] << "x" << volume[1] << "x" << volume[2]
                          << " " << to_string(b) << " padding " << padding << " seed=" << seed;
        EXPECT_EQ(differ, 0) << k << " taps " << volume[0] << "x" << volume[1] << "x" << volume[2]
                             << " " << to_string(b) << " padding " << padding << " seed=" << seed;
        EXPECT_EQ(outside, 0) << "padding " << padding;
      }
    }
  }
}

#endif  // NDCONV_HAVE_CUDA

TEST(CudaStream, NanStaysInsideTheFootprint) {
  NDCONV_REQUIRE_GPU();
  NanSeparableCase n = nan_separable_case(148, 17);
  const RunReport r =
      filter_separable(n.c.in_view, n.c.filter, make_view(n.c.out.data(), 3, n.c.out_extent),
                       cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same));
  EXPECT_TRUE(ran_stream(r)) << r.outputs_per_thread_reason;
  EXPECT_EQ(nan_mask_mismatches(n.c.out, n.ref, 1e-5), 0) << "seed=" << n.seed;
}

}  // namespace
}  // namespace ndconv::test
