// The progress bar's arithmetic (src/cli/progress_track.h): stage shares in proportion to the
// estimates, a fraction that never goes back and reaches 1, and the time left on long runs.
#include "progress_track.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace ndconv::cli {
namespace {

TEST(ProgressTrack, StagesHoldSharesInProportionToTheirEstimates) {
  ProgressTrack t({1.0, 6.0, 3.0});
  EXPECT_DOUBLE_EQ(t.share(0), 0.1);
  EXPECT_DOUBLE_EQ(t.share(1), 0.6);
  EXPECT_DOUBLE_EQ(t.share(2), 0.3);
  EXPECT_DOUBLE_EQ(t.advance(0, 1.0), 0.1);
  // Half of the filter's work is half of its share.
  EXPECT_DOUBLE_EQ(t.advance(1, 0.5), 0.1 + 0.3);
  EXPECT_DOUBLE_EQ(t.advance(2, 0.5), 0.7 + 0.15);
  // Only the ratios matter.
  ProgressTrack scaled({10.0, 60.0, 30.0});
  EXPECT_DOUBLE_EQ(scaled.share(1), 0.6);
}

TEST(ProgressTrack, AStageWithoutAnEstimateKeepsASliver) {
  ProgressTrack t({0.0, 5.0, -1.0});
  EXPECT_GT(t.share(0), 0.0);
  EXPECT_GT(t.share(2), 0.0);
  EXPECT_LT(t.share(0), 0.01);
  EXPECT_NEAR(t.share(0) + t.share(1) + t.share(2), 1.0, 1e-12);
  ProgressTrack none({0.0, 0.0, 0.0});
  EXPECT_NEAR(none.share(1), 1.0 / 3, 1e-12);
}

TEST(ProgressTrack, IsMonotoneAndReachesOne) {
  ProgressTrack t({2.0, 5.0, 3.0});
  double last = 0;
  // Reports out of order (a worker thread late, a stage restarting its count, NaN) never move
  // the bar back.
  const std::vector<std::pair<int, double>> reports = {
      {0, 0.0}, {0, 0.5}, {0, 0.4}, {0, 1.0}, {1, 0.2}, {0, 0.9}, {1, 0.1},
      {1, 2.0}, {1, -1},  {2, 0.0}, {2, 0.7}, {1, 0.5}, {2, 1.0}};
  for (const auto& [stage, f] : reports) {
    const double now = t.advance(stage, f);
    EXPECT_GE(now, last) << "stage " << stage << " at " << f;
    EXPECT_LE(now, 1.0);
    last = now;
  }
  EXPECT_DOUBLE_EQ(t.fraction(), 1.0);
  EXPECT_DOUBLE_EQ(t.advance(1, std::numeric_limits<double>::quiet_NaN()), 1.0);
}

TEST(ProgressTrack, TheTimeLeftShowsOnlyOnLongRuns) {
  ProgressTrack t({1.0, 8.0, 1.0});
  t.advance(1, 0.5);  // 0.1 + 0.4 = half the run
  // A short run ends before an estimate helps.
  EXPECT_FALSE(t.seconds_left(kEtaAfterSeconds * 0.5).has_value());
  // A slow run: half done after 20 s, about 20 s left at the same pace.
  const auto left = t.seconds_left(20.0);
  ASSERT_TRUE(left.has_value());
  EXPECT_NEAR(*left, 20.0, 1e-9);
  t.advance(2, 0.5);  // 0.95
  EXPECT_NEAR(*t.seconds_left(38.0), 2.0, 1e-9);
  t.advance(2, 1.0);
  EXPECT_FALSE(t.seconds_left(40.0).has_value());
  // Nothing done yet: no extrapolation.
  ProgressTrack fresh({1.0, 1.0, 1.0});
  EXPECT_FALSE(fresh.seconds_left(100.0).has_value());
}

TEST(ProgressTrack, DurationsAsTheLineShowsThem) {
  EXPECT_EQ(duration_text(7.4), "7 s");
  EXPECT_EQ(duration_text(125), "2 min 05 s");
  EXPECT_EQ(duration_text(3780), "1 h 03 min");
  EXPECT_EQ(duration_text(-3), "0 s");
}

}  // namespace
}  // namespace ndconv::cli
