// The fused separable kernel on the GPU, through the engine (filter_separable, Backend::Cuda):
// the emulation's shapes (fused_cases) for every boundary, convolution and correlation, same and
// valid, against the float64 reference, with the plan checked to be the fused kernel and the
// pass-by-pass kernels (NDCONV_CUDA_SEPARABLE=blocked) run on the same input as a second opinion;
// a Gaussian-sized filter on a volume of several tiles and z chunks; a 4D filter along t, which
// the fused kernel declines with its reason. Skipped with the reason without a usable GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cases.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "scoped_env.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

std::string all_notes(const RunReport& r) {
  std::string s;
  for (const std::string& n : r.notes)
    s += n + "\n";
  return s;
}

// Filters `in` separably on the GPU with NDCONV_CUDA_SEPARABLE set to `kernels` ("" = default,
// the pass-by-pass kernels; "fused" = the fused kernel, an experiment).
std::vector<float> gpu_separable(const ShapeCase& s, const std::vector<float>& in,
                                 const SeparableFilter& f, const Index& filter_extent, Operation op,
                                 Boundary b, OutputRegion region, const char* kernels,
                                 RunReport& report) {
  const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
  const Index out_extent = reference_output_extent(in_view, filter_extent, region);
  std::vector<float> out(static_cast<size_t>(voxels(s.dims, out_extent)));
  poison(out);
  Options o;
  o.backend = Backend::Cuda;
  o.operation = op;
  o.boundary = b;
  o.region = region;
  ScopedEnvs env;
  if (kernels[0] != '\0')
    env.set("NDCONV_CUDA_SEPARABLE", kernels);
  report = filter_separable(in_view, f, make_view(out.data(), s.dims, out_extent), o);
  return out;
}

class CudaFused : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CudaFused, MatchesReferenceAndThePassByPassKernels) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase& shape = GetParam();
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(shape.dims, shape.volume), seed);
    Index filter_extent;
    const SeparableFilter f = random_fused_filter(shape, seed, filter_extent);
    RunReport fused_report, passes_report;
    const std::vector<float> fused =
        gpu_separable(shape, in, f, filter_extent, op, b, region, "fused", fused_report);
    const std::vector<float> passes =
        gpu_separable(shape, in, f, filter_extent, op, b, region, "blocked", passes_report);
    const std::vector<double> ref =
        reference_separable(make_view(in.data(), shape.dims, shape.volume), f, op, b, region);
    const std::string what = std::string(to_string(b)) + " " + to_string(op) + " " +
                             to_string(region) + " seed=" + std::to_string(seed);
    EXPECT_LT(relative_l2_error(fused, ref), kTolerance) << shape << " fused " << what;
    EXPECT_LT(relative_l2_error(passes, ref), kTolerance) << shape << " passes " << what;
    EXPECT_NE(all_notes(fused_report).find("fused xyz"), std::string::npos)
        << all_notes(fused_report);
    EXPECT_EQ(all_notes(passes_report).find("fused"), std::string::npos)
        << all_notes(passes_report);
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaFused, ::testing::ValuesIn(fused_cases()));

// 17 taps per axis (the Gaussian's extent) on a volume of several tiles along x and y and several
// z chunks, every boundary.
TEST(CudaFusedLarge, SeventeenTapsPerAxis) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {45, 37, 70, 1}, {17, 17, 17, 1}};
  for (Boundary b : kAllBoundaries) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(3, s.volume), seed);
    Index filter_extent;
    const SeparableFilter f = random_separable_filter(
        s, seed, [](int) { return true; }, filter_extent);
    RunReport r;
    const std::vector<float> out = gpu_separable(s, in, f, filter_extent, Operation::Correlation, b,
                                                 OutputRegion::Same, "fused", r);
    const std::vector<double> ref = reference_separable(
        make_view(in.data(), 3, s.volume), f, Operation::Correlation, b, OutputRegion::Same);
    EXPECT_LT(relative_l2_error(out, ref), kTolerance) << to_string(b) << " seed=" << seed;
    EXPECT_NE(all_notes(r).find("fused xyz"), std::string::npos) << all_notes(r);
    EXPECT_NE(r.outputs_per_thread_reason.find("outputs along z per block"), std::string::npos)
        << r.outputs_per_thread_reason;
  }
}

// A filter along t of a 4D volume keeps the pass-by-pass kernels; the reason says why.
TEST(CudaFusedLarge, FourDWithTFilterIsNotFused) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{4, {19, 9, 7, 8}, {3, 3, 3, 3}};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(4, s.volume), seed);
  Index filter_extent;
  const SeparableFilter f = random_separable_filter(
      s, seed, [](int) { return true; }, filter_extent);
  RunReport r;
  const std::vector<float> out = gpu_separable(s, in, f, filter_extent, Operation::Convolution,
                                               Boundary::Mirror, OutputRegion::Same, "fused", r);
  const std::vector<double> ref =
      reference_separable(make_view(in.data(), 4, s.volume), f, Operation::Convolution,
                          Boundary::Mirror, OutputRegion::Same);
  EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "seed=" << seed;
  EXPECT_NE(r.outputs_per_thread_reason.find("not fused: the fused kernel does not filter along t"),
            std::string::npos)
      << r.outputs_per_thread_reason;
}

}  // namespace
}  // namespace ndconv::test
