// The validation windows: their choice under a CPU budget, and the CPU backend's window results
// compared with the float64 reference (tests/common), so that a wrong window offset cannot make
// every sweep point "pass".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "perf/check.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::perf {
namespace {

TEST(ChooseWindows, WholeVolumeWhenAffordable) {
  const Shape v = parse_shape("64x32x16", "v");
  const auto w = choose_windows(v, 27, 1e12, {true, true, true, true});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].box, v);
  EXPECT_EQ(w[0].start, (Index{0, 0, 0, 0}));
}

TEST(ChooseWindows, TwoCornersWithinBudget) {
  const Shape v = parse_shape("160x160x160x20", "v");
  const double taps = 6561, budget = 2e9;
  const auto w = choose_windows(v, taps, budget, {true, true, true, true});
  ASSERT_EQ(w.size(), 2u);
  for (const auto& x : w) {
    EXPECT_LE(static_cast<double>(x.box.count()) * taps, budget);
    EXPECT_EQ(x.box.extent[0], 160);  // x stays whole
  }
  EXPECT_EQ(w[0].start, (Index{0, 0, 0, 0}));
  for (int a = 0; a < 4; ++a)
    EXPECT_EQ(w[1].start[a] + w[1].box.extent[a], v.extent[a]);  // ends at the far corner
}

TEST(ChooseWindows, KeepsSeveralPlanesAlongTheBlockedAxis) {
  const Shape v = parse_shape("256x256x256", "v");
  const auto w = choose_windows(v, 3375, 2e9, {true, true, true, true});
  EXPECT_EQ(w[0].box.extent[2], 40);
  EXPECT_LT(w[0].box.extent[1], 256);
}

TEST(ChooseWindows, AxesThatCannotShrinkStayWhole) {
  const Shape v = parse_shape("64x64x64", "v");
  const auto w = choose_windows(v, 10, 1000, {true, false, true, true});
  EXPECT_EQ(w[0].box.extent[1], 64);
}

void expect_windows_match_reference(const Shape& vol, const Shape& filter, Boundary b) {
  const uint64_t seed = test::fresh_seed();
  const DenseCase c = make_dense_case(vol, filter, b, seed);
  // A small budget forces real windows (two corners, shrunk axes).
  const CheckPlan plan = cpu_check(c, c.filter.count() * vol.count() / 5.0);
  ASSERT_EQ(plan.windows.size(), 2u);
  EXPECT_LT(plan.covered_fraction, 1.0);
  DenseFilter f;
  f.dims = vol.dims;
  f.extent = filter.extent;
  f.taps = c.taps.data();
  const std::vector<double> ref =
      test::reference_dense(make_view(c.input.data(), vol.dims, vol.extent), f,
                            Operation::Correlation, b, OutputRegion::Same);
  std::vector<float> full(ref.begin(), ref.end());
  EXPECT_LT(window_error(plan, vol, full), 1e-5) << "seed " << seed;
  // A wrong voxel inside a window is caught; NaN gives infinity.
  const CheckWindow& last = plan.windows.back();
  int64_t at = 0, stride = 1;
  for (int a = 0; a < vol.dims; ++a) {
    at += (last.start[a] + last.box.extent[a] - 1) * stride;
    stride *= vol.extent[a];
  }
  full[static_cast<std::size_t>(at)] += 1.0f;
  EXPECT_GT(window_error(plan, vol, full), 1e-4);
  full[static_cast<std::size_t>(at)] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isinf(window_error(plan, vol, full)));
}

TEST(CpuCheck, DenseWindowsMatchTheReference) {
  expect_windows_match_reference(parse_shape("23x17x13", "v"), parse_shape("3x5x4", "f"),
                                 Boundary::Zero);
  expect_windows_match_reference(parse_shape("19x11x7x9", "v"), cube(4, 3), Boundary::Periodic);
  expect_windows_match_reference(parse_shape("37x29", "v"), cube(2, 7), Boundary::Mirror);
}

TEST(CpuCheck, SeparableWindowsMatchTheReference) {
  const Shape vol = parse_shape("21x18x15", "v");
  std::array<std::vector<float>, kMaxDims> taps;
  taps[0] = {0.25f, 0.5f, 0.25f};
  taps[2] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};  // y skipped
  const SeparableCase c = make_separable_case(vol, taps, Boundary::Replicate, test::fresh_seed());
  const CheckPlan plan = cpu_check(c, c.fmas() / 4);
  ASSERT_EQ(plan.windows.size(), 2u);
  EXPECT_EQ(plan.windows[0].box.extent[1], 18);  // a skipped axis is never shrunk
  SeparableFilter f;
  f.dims = 3;
  f.taps = taps;
  const std::vector<double> ref =
      test::reference_separable(make_view(c.input.data(), 3, vol.extent), f, Operation::Correlation,
                                Boundary::Replicate, OutputRegion::Same);
  EXPECT_LT(window_error(plan, vol, std::vector<float>(ref.begin(), ref.end())), 1e-5);
}

TEST(RandomVolume, FreshNonZeroValues) {
  const auto a = random_volume(10000, 1), b = random_volume(10000, 2);
  EXPECT_NE(a, b);
  for (float x : a) {
    EXPECT_NE(x, 0.0f);
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
  EXPECT_NE(fresh_seed(), fresh_seed());
}

}  // namespace
}  // namespace ndconv::perf
