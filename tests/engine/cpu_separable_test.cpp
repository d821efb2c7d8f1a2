// The CPU backend's separable path against the float64 reference (the dense reference with the
// outer product of the 1D filters), over dimension x volume shape x boundary x 1D filter lengths
// (one test each, a skipped axis in the `mixed` case); inside each test convolution and
// correlation, `same` and `valid`, every instruction set, every blocking factor, contiguous and
// strided views, one and three threads. Plus long filters (up to the 1023-tap limit) along each
// axis, Gaussians, the identity (every axis skipped), and volumes whose last axis runs in slabs.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "cpu_cases.h"
#include "every_isa_and_layout.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

// Checks one filter and region under every ISA x blocking factor x layout against the
// reference; returns early after the first failure.
void check_separable(int dims, const Index& extent, const SeparableFilter& filter,
                     Boundary boundary, Operation operation, OutputRegion region, uint64_t seed) {
  const std::vector<float> values = random_values(count_of(dims, extent), seed);
  const ConstVolumeView input = make_view(values.data(), dims, extent);
  StridedBuffer strided_input(dims, extent, 2);
  strided_input.fill(values);
  Index k{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a)
    k[a] = filter.taps[a].empty() ? 1 : static_cast<int64_t>(filter.taps[a].size());
  const float value = test_boundary_value(boundary, seed);
  const std::vector<double> reference =
      reference_separable(input, filter, operation, boundary, region, value);
  const OutputGeometry g = output_geometry(dims, extent, k, operation, region);
  ASSERT_EQ(g.extent, reference_output_extent(input, k, region));
  Options options;
  options.operation = operation;
  options.boundary = boundary;
  options.boundary_value = value;
  options.region = region;
  check_every_isa_and_layout(
      input, strided_input, g.extent, options, reference,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_separable(in, filter, out, o);
      },
      [](const RunReport&, int) {});
}

class CpuSeparable : public ::testing::TestWithParam<CaseParam> {};

TEST_P(CpuSeparable, MatchesFloat64Reference) {
  const auto [dims, shape, boundary, filter_case] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Index extent = volume_shape(dims, shape);
  const Index k = filter_extent(filter_case, dims, extent, kMaxSeparableExtent);
  SeparableFilter filter;
  filter.dims = dims;
  for (int a = 0; a < dims; ++a) {
    // The mixed case skips y (an empty tap list) instead of filtering it with one tap.
    if (filter_case == FilterCase::Mixed && a == 1)
      continue;
    filter.taps[a] = random_taps(k[a], seed + 1 + a);
  }
  // The passes' order matters under the constant boundary: half the runs take the last axis
  // first (scipy's order for a C-ordered array).
  if ((seed >> 3) % 2 == 1) {
    for (int i = 0; i < dims; ++i)
      filter.pass_order[i] = dims - 1 - i;
  }
  for (const auto& [operation, region] : {std::pair(Operation::Convolution, OutputRegion::Same),
                                          std::pair(Operation::Convolution, OutputRegion::Valid),
                                          std::pair(Operation::Correlation, OutputRegion::Same),
                                          std::pair(Operation::Correlation, OutputRegion::Valid)}) {
    SCOPED_TRACE(std::string(to_string(operation)) + ", region " + to_string(region));
    bool fits = true;
    for (int a = 0; a < dims; ++a)
      fits = fits && k[a] <= extent[a];
    if (region == OutputRegion::Valid && !fits) {
      std::vector<float> values(count_of(dims, extent), 1.0f), out(count_of(dims, extent));
      Options options;
      options.backend = Backend::Cpu;
      options.region = region;
      EXPECT_THROW(filter_separable(make_view<const float>(values.data(), dims, extent), filter,
                                    make_view(out.data(), dims, extent), options),
                   InvalidArgument);
      continue;
    }
    check_separable(dims, extent, filter, boundary, operation, region, seed);
    if (HasFailure())
      return;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, CpuSeparable, all_cases(), case_name);

// One long 1D filter along one axis at a time (the others skipped), up to the 1023-tap limit,
// in volumes much shorter than the filter.
class CpuSeparableLong
    : public ::testing::TestWithParam<std::tuple<std::pair<int, int>, Boundary>> {};

TEST_P(CpuSeparableLong, LongFilterAlongOneAxis) {
  const auto [dims_axis, boundary] = GetParam();
  const auto [dims, axis] = dims_axis;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index extent = volume_shape(dims, 0);
  for (int64_t length : {int64_t{62}, kMaxSeparableExtent}) {
    SCOPED_TRACE("taps " + std::to_string(length));
    SeparableFilter filter;
    filter.dims = dims;
    filter.taps[axis] = random_taps(length, seed + length);
    check_separable(dims, extent, filter, boundary, Operation::Convolution, OutputRegion::Same,
                    seed);
    if (HasFailure())
      return;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllAxes, CpuSeparableLong,
    ::testing::Combine(::testing::Values(std::pair(2, 0), std::pair(2, 1), std::pair(3, 0),
                                         std::pair(3, 1), std::pair(3, 2), std::pair(4, 0),
                                         std::pair(4, 1), std::pair(4, 2), std::pair(4, 3)),
                       every_boundary()));

TEST(CpuSeparableGaussian, MatchesReferenceAndPreservesConstants) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index extent{23, 17, 9, 1};
  const SeparableFilter g = gaussian_filter(3, {1.5, 0.0, 2.0, 0.0});
  check_separable(3, extent, g, Boundary::Replicate, Operation::Convolution, OutputRegion::Same,
                  seed);
  // A Gaussian (sum 1) with replicate boundaries leaves a constant volume unchanged.
  std::vector<float> constant(23 * 17 * 9, 0.75f), out(constant.size());
  poison(out);
  Options options;
  options.backend = Backend::Cpu;
  filter_separable(make_view<const float>(constant.data(), 3, extent), g,
                   make_view(out.data(), 3, extent), options);
  for (float v : out)
    ASSERT_NEAR(v, 0.75f, 1e-5f);
}

TEST(CpuSeparableIdentity, EveryAxisSkippedCopiesTheInput) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index extent{19, 4, 3, 2};
  SeparableFilter none;
  none.dims = 4;
  check_separable(4, extent, none, Boundary::Zero, Operation::Correlation, OutputRegion::Valid,
                  seed);
}

// A last axis without taps runs slab by slab (whole frames, 16 MiB of intermediate each): frames
// of 1.5 M floats give two frames per slab, so these volumes run a slab of two and one of one.
TEST(CpuSeparableSlabs, FramesInSeveralSlabsMatchTheReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  SeparableFilter echo;  // a 4D series, each 3D frame on its own
  echo.dims = 4;
  echo.taps[0] = random_taps(5, seed + 1);
  echo.taps[1] = random_taps(3, seed + 2);
  echo.taps[2] = random_taps(3, seed + 3);
  check_separable(4, {1100, 700, 2, 3}, echo, Boundary::Replicate, Operation::Correlation,
                  OutputRegion::Same, seed);
  {
    const Index extent{1100, 700, 2, 3};
    const std::vector<float> values = random_values(count_of(4, extent), seed + 7);
    std::vector<float> out(values.size());
    Options options;
    options.backend = Backend::Cpu;
    const RunReport r = filter_separable(make_view(values.data(), 4, extent), echo,
                                         make_view(out.data(), 4, extent), options);
    EXPECT_EQ(r.slabs, 2);  // frames 0-1, then 2
  }
  SeparableFilter slices;  // a stack of 2D slices, the valid region
  slices.dims = 3;
  slices.taps[0] = random_taps(5, seed + 4);
  slices.taps[1] = random_taps(3, seed + 5);
  check_separable(3, {1500, 1000, 3, 1}, slices, Boundary::Mirror, Operation::Convolution,
                  OutputRegion::Valid, seed + 6);
}

}  // namespace
}  // namespace ndconv::test
