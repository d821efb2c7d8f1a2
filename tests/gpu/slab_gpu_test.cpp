// The slab kernel of separable filters (cuda/separable/slab_thread.h) on the GPU against the
// float64 reference (skipped without a usable GPU): every boundary, both operations and regions,
// volumes with partial tiles, smaller than the filter and cut into chunks along z, a strided input
// (4-byte copies), a NaN that must stay inside its footprint; the plan names the slab kernel
// where the column kernel's x tiles would leave lanes idle, and keeps the column passes where not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "separable_kernel_cases.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;  // float32 lands near 1e-6

bool ran_slab(const RunReport& r) {
  return r.outputs_per_thread_reason.find("slab kernel") != std::string::npos;
}

TEST(CudaSlab, MatchesReferenceEveryBoundaryOperationAndRegion) {
  NDCONV_REQUIRE_GPU();
  expect_separable_kernel_matches_reference({ShapeCase{3, {70, 20, 45, 1}, {17, 17, 17, 1}},
                                             ShapeCase{3, {13, 7, 5, 1}, {17, 17, 17, 1}}},
                                            "slab kernel", kTolerance);
}

// Gaussian-sized volumes (several tiles along x and y, chunks along z marching up and down; x 272,
// where the plan takes the slab kernel), the input dense or inside a wider allocation whose rows
// are 3 floats longer (4-byte copies).
TEST(CudaSlab, LargeVolumesDenseAndStrided) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {272, 140, 72, 1}, {17, 17, 17, 1}};
  for (int padding : {0, 3}) {
    for (Boundary b : kAllBoundaries) {
      const uint64_t seed = fresh_seed();
      Index alloc = s.volume;
      alloc[0] += padding;
      const std::vector<float> storage = random_values(voxels(3, alloc), seed);
      ConstVolumeView in_view = make_view(storage.data(), 3, alloc);
      in_view.extent = s.volume;
      std::vector<float> dense(static_cast<size_t>(voxels(3, s.volume)));
      for (int64_t z = 0; z < s.volume[2]; ++z)
        for (int64_t y = 0; y < s.volume[1]; ++y)
          for (int64_t x = 0; x < s.volume[0]; ++x)
            dense[static_cast<size_t>((z * s.volume[1] + y) * s.volume[0] + x)] =
                storage[static_cast<size_t>((z * alloc[1] + y) * alloc[0] + x)];
      Index filter_extent;
      const SeparableFilter f = random_separable_filter(
          s, seed, [](int) { return true; }, filter_extent);
      const std::vector<double> ref = reference_separable_passes(
          make_view(static_cast<const float*>(dense.data()), 3, s.volume), f,
          Operation::Correlation, b);
      std::vector<float> out(dense.size());
      poison(out);
      const RunReport r =
          filter_separable(in_view, f, make_view(out.data(), 3, s.volume),
                           cuda_options(Operation::Correlation, b, OutputRegion::Same));
      // The host call stages the input densely, rows 16-byte aligned at x 272: on a device with
      // the copy engine (sm_90) the streaming kernel comes first (stream_gpu_test.cpp).
      const bool bulk_device = cuda_status().devices.at(0).compute_capability_major >= 9;
      EXPECT_TRUE(bulk_device
                      ? r.outputs_per_thread_reason.find("streaming kernel") != std::string::npos
                      : ran_slab(r))
          << r.outputs_per_thread_reason;
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << to_string(b) << " padding " << padding << " seed=" << seed;
    }
  }
}

// Where the column kernel's x tiles are whole (x 256), the plan keeps the column passes.
TEST(CudaSlab, ColumnPassesWhereTheirTilesAreWhole) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {256, 20, 30, 1}, {17, 17, 17, 1}};
  SeparableCase c = separable_case(
      s, fresh_seed(), [](int) { return true; }, OutputRegion::Same);
  auto& [in, in_view, f, out_extent, out] = c;
  const RunReport r =
      filter_separable(in_view, f, make_view(out.data(), s.dims, out_extent),
                       cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same));
  EXPECT_FALSE(ran_slab(r)) << r.outputs_per_thread_reason;
  EXPECT_LT(relative_l2_error(out, reference_separable_passes(in_view, f, Operation::Correlation,
                                                              Boundary::Zero)),
            kTolerance);
}

TEST(CudaSlab, NanStaysInsideTheFootprint) {
  NDCONV_REQUIRE_GPU();
  NanSeparableCase n = nan_separable_case(150, 17);
  const RunReport r =
      filter_separable(n.c.in_view, n.c.filter, make_view(n.c.out.data(), 3, n.c.out_extent),
                       cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same));
  EXPECT_TRUE(ran_slab(r)) << r.outputs_per_thread_reason;
  EXPECT_EQ(nan_mask_mismatches(n.c.out, n.ref, 1e-5), 0) << "seed=" << n.seed;
}

}  // namespace
}  // namespace ndconv::test
