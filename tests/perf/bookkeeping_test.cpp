// The bench's "rule vs best KO" bookkeeping, the seed method's load factor and the study's grid,
// on recorded numbers. (The rule's own cases are in tests/gpu/ko_rule_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "perf/sweep.h"

namespace ndconv::perf {
namespace {

TEST(KoOutcome, BestAndTimeLost) {
  // Recorded shape of a 3D 256^3 11^3 point: KO=8 best, the rule picked 4.
  const std::vector<std::pair<int, double>> timed{
      {1, 9.0}, {2, 5.0}, {4, 2.2}, {8, 2.0}, {16, 2.6}};
  const KoOutcome o = ko_outcome(timed, 4);
  EXPECT_EQ(o.best_ko, 8);
  EXPECT_DOUBLE_EQ(o.best_ms, 2.0);
  EXPECT_EQ(o.auto_ko, 4);
  EXPECT_DOUBLE_EQ(o.auto_ms, 2.2);
  EXPECT_NEAR(o.auto_loss, 0.10, 1e-12);
  EXPECT_DOUBLE_EQ(ko_outcome(timed, 8).auto_loss, 0.0);
}

TEST(KoOutcome, FailedPointsAreIgnored) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const KoOutcome o = ko_outcome({{1, 3.0}, {2, nan}, {4, 1.5}}, 1);
  EXPECT_EQ(o.best_ko, 4);
  EXPECT_DOUBLE_EQ(o.auto_loss, 1.0);
  EXPECT_THROW(ko_outcome({{1, 3.0}, {2, nan}}, 2), std::invalid_argument);
  EXPECT_THROW(ko_outcome({{1, 3.0}}, 4), std::invalid_argument);
  EXPECT_THROW(ko_outcome({}, 1), std::invalid_argument);
}

TEST(LoadFactor, SeedMethod) {
  EXPECT_DOUBLE_EQ(theoretical_load_factor(11, 1), 1.0);
  EXPECT_DOUBLE_EQ(theoretical_load_factor(1, 16), 1.0);  // nothing to reuse
  EXPECT_DOUBLE_EQ(theoretical_load_factor(11, 8), 88.0 / 18.0);
  EXPECT_LT(theoretical_load_factor(3, 16), 3.0);  // tends to k as KO grows
}

TEST(Presets, StudyGridMatchesTheIssue) {
  const SweepConfig s = study_config();
  ASSERT_EQ(s.volumes.size(), 4u);
  EXPECT_EQ(format_shape(s.volumes[0]), "4096x4096");
  EXPECT_EQ(format_shape(s.volumes[3]), "160x160x160x20");
  EXPECT_EQ(default_filters(2, false).back(), 17);
  EXPECT_EQ(default_filters(3, false).back(), 15);
  EXPECT_EQ(default_filters(4, false), (std::vector<int64_t>{3, 5, 7, 9}));
  EXPECT_TRUE(s.flush_l2);
  EXPECT_GE(s.repetitions, 5);
}

}  // namespace
}  // namespace ndconv::perf
