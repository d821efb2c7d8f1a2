// The sweep's per-problem bookkeeping (outcome.h) on recorded numbers: the automatic plan scored as
// a point of its own against the best point (also when it runs a kernel no forced point runs),
// each family's KO curve, invalid and not-implementable points, and the columns and summary the
// CSV and JSON get from it; the seed method's load factor and the study's grid. (The KO rule's
// own cases are in tests/gpu/ko_rule_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "perf/outcome.h"
#include "perf/sweep.h"

namespace ndconv::perf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TimedPoint point(const char* kernel, int tx, int ko, const char* block, double ms,
                 bool is_auto = false) {
  return TimedPoint{PointKey{kernel, tx, ko, block}, is_auto, ms};
}

TEST(ProblemOutcome, AutoRunsAKernelNoForcedPointRuns) {
  // 2D 4096^2 17^2 (H100 shape): forced points are the blocked kernel, auto is tiled KO 1.
  const ProblemOutcome o = problem_outcome({point("blocked", 1, 1, "128x1x1", 5.354),
                                            point("blocked", 1, 16, "128x1x1", 0.813),
                                            point("tiled", 8, 1, "4x32x1", 0.421, true)});
  EXPECT_TRUE(o.best.is_auto);
  EXPECT_EQ(o.best.label(), "auto (tiled TX=8 KO=1 4x32x1)");
  EXPECT_DOUBLE_EQ(o.auto_loss, 0.0);
  ASSERT_EQ(o.series.size(), 1u);  // the auto point is not part of a family's curve
  EXPECT_EQ(o.series[0].series.kernel, "blocked");
  EXPECT_EQ(o.series[0].best_ko, 16);
  EXPECT_DOUBLE_EQ(o.series[0].ko1_ms, 5.354);
}

TEST(ProblemOutcome, LossAgainstTheBestOfAllFamilies) {
  const ProblemOutcome o = problem_outcome(
      {point("blocked", 1, 1, "128x1x1", 9.0), point("blocked", 1, 8, "128x1x1", 3.0),
       point("tiled", 8, 1, "4x32x1", 2.5), point("tiled", 8, 4, "4x32x1", 2.0),
       point("tiled", 8, 8, "4x32x1", kNaN),  // failed its validation
       point("tiled", 8, 4, "4x32x1", 2.1, true)});
  EXPECT_FALSE(o.best.is_auto);
  EXPECT_EQ(o.best.key.label(), "tiled TX=8 KO=4 4x32x1");
  EXPECT_NEAR(o.auto_loss, 0.05, 1e-12);
  ASSERT_EQ(o.series.size(), 2u);
  EXPECT_EQ(o.series[1].series.kernel, "tiled");
  EXPECT_EQ(o.series[1].best_ko, 4);
  EXPECT_DOUBLE_EQ(o.series[1].ko1_ms, 2.5);
  EXPECT_EQ(o.series[0].best_ko, 8);
}

TEST(ProblemOutcome, SameKoOtherShapeIsAnotherSeries) {
  const ProblemOutcome o = problem_outcome(
      {point("tiled", 8, 1, "4x32x1", 3.0), point("tiled", 8, 1, "128x1x1", 6.0),
       point("tiled", 16, 1, "2x64x1", 2.8), point("tiled", 8, 1, "4x32x1", 3.0, true)});
  EXPECT_EQ(o.series.size(), 3u);
  EXPECT_EQ(o.best.key.tx, 16);
  EXPECT_NEAR(o.auto_loss, 3.0 / 2.8 - 1, 1e-12);
}

TEST(ProblemOutcome, AutoMissingOrInvalidOrNothingValidThrows) {
  EXPECT_THROW(problem_outcome({point("blocked", 1, 1, "128x1x1", 1.0)}), std::invalid_argument);
  EXPECT_THROW(problem_outcome({point("blocked", 1, 1, "128x1x1", 1.0),
                                point("tiled", 8, 4, "4x32x1", kNaN, true)}),
               std::invalid_argument);
  EXPECT_THROW(problem_outcome({}), std::invalid_argument);
}

// Rows as the GPU sweep writes them (only the columns the bookkeeping reads, plus a few).
Json row(const char* point, const char* kernel, int tx, int ko, const char* block,
         const char* status, double ms) {
  return {{"point", point},
          {"kernel", kernel},
          {"tx", tx},
          {"ko", ko},
          {"block", block},
          {"status", status},
          {"registers", std::string(status) == "not_implementable" ? Json() : Json(64)},
          {"median_ms", ms}};
}

std::vector<Json> recorded_problem() {
  // 4D 9^4: the tiled kernel cannot hold the filter, auto runs the blocked KO rule's KO 16.
  return {row("forced", "blocked", 1, 1, "128x1x1", "valid", 254.7),
          row("forced", "blocked", 1, 16, "128x1x1", "valid", 85.5),
          row("forced", "blocked", 1, 8, "128x1x1", "invalid", kNaN),
          row("forced", "tiled", 8, 4, "", "not_implementable", kNaN),
          row("auto", "blocked", 1, 16, "128x1x1", "valid", 86.0)};
}

TEST(SummarizeProblem, ColumnsAndSummary) {
  std::vector<Json> rows = recorded_problem();
  const Json s = summarize_problem(rows, 0, 4, "128x128x128x16", 128 * 128 * 128 * 16, 9, 64.9e12);
  EXPECT_EQ(text(s, "best_point"), "blocked KO=16 128x1x1");
  EXPECT_EQ(text(s, "auto_point"), "blocked KO=16 128x1x1");
  EXPECT_NEAR(std::stod(text(s, "auto_loss_pct")), 100 * (86.0 / 85.5 - 1), 1e-4);
  EXPECT_EQ(text(s, "auto_within_5pct"), "true");
  EXPECT_EQ(text(s, "not_implementable"), "1");
  ASSERT_EQ(s["series"].size(), 1u);
  const Json& series = s["series"][0];
  EXPECT_EQ(text(series, "best_ko"), "16");
  EXPECT_NEAR(std::stod(text(series, "speedup_best_vs_ko1")), 254.7 / 85.5, 1e-4);
  EXPECT_GT(std::stod(text(s, "best_pct_fma_peak")), 0.0);
  // Row columns: the speedup over the row's own KO 1, empty where there is no time.
  EXPECT_NEAR(std::stod(text(rows[1], "speedup_vs_ko1")), 254.7 / 85.5, 1e-4);
  EXPECT_EQ(text(rows[2], "speedup_vs_ko1"), "");
  EXPECT_EQ(text(rows[3], "speedup_vs_ko1"), "");
  for (const Json& r : rows)
    EXPECT_EQ(text(r, "best_point"), "blocked KO=16 128x1x1");

  // The CSV keeps one layout with the not-implementable row's empty fields.
  std::ostringstream csv;
  write_csv(csv, rows);
  EXPECT_NE(csv.str().find("tiled,8,4,,not_implementable,,"), std::string::npos) << csv.str();

  const Json overall = overall_outcome({s}, rows);
  EXPECT_EQ(text(overall, "points"), "5");
  EXPECT_EQ(text(overall, "validation_failures"), "1");
  EXPECT_EQ(text(overall, "not_implementable"), "1");
  EXPECT_EQ(text(overall, "auto_within_5pct_of_best"), "1");
  EXPECT_EQ(text(overall, "problems"), "1");
}

TEST(SummarizeProblem, WithoutAValidAutoPointTheProblemIsAnError) {
  std::vector<Json> rows = recorded_problem();
  rows.back()["status"] = "invalid";
  const Json s = summarize_problem(rows, 0, 4, "128x128x128x16", 100, 9, 64.9e12);
  EXPECT_TRUE(s.contains("error"));
  EXPECT_FALSE(s.contains("auto_within_5pct"));
  EXPECT_EQ(text(overall_outcome({s}, rows), "problems"), "0");
  EXPECT_EQ(text(rows[0], "auto_loss_pct"), "");
}

TEST(SweepTable, MarksAutoBestAndNotImplementable) {
  std::vector<Json> rows = recorded_problem();
  summarize_problem(rows, 0, 4, "128x128x128x16", 100, 9, 64.9e12);
  rows[3]["note"] = "tiled kernel: the taps and two input planes need 60000 bytes";
  SweepResult r;
  r.rows = rows;  // the columns the table shows and the rows lack are printed as "-"
  std::ostringstream out;
  print_sweep_table(out, r);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  ASSERT_EQ(lines.size(), 6u);  // header and one line per point
  EXPECT_NE(lines[2].find("<- best"), std::string::npos) << lines[2];
  EXPECT_EQ(lines[5].find("<- best"), std::string::npos) << lines[5];  // auto: same kernel, slower
  EXPECT_NE(lines[5].find("<- auto"), std::string::npos) << lines[5];
  EXPECT_NE(lines[4].find("not implementable: tiled kernel: the taps"), std::string::npos)
      << lines[4];
}

TEST(LoadFactor, SeedMethod) {
  EXPECT_DOUBLE_EQ(theoretical_load_factor(11, 1), 1.0);
  EXPECT_DOUBLE_EQ(theoretical_load_factor(1, 16), 1.0);  // nothing to reuse
  EXPECT_DOUBLE_EQ(theoretical_load_factor(11, 8), 88.0 / 18.0);
  EXPECT_LT(theoretical_load_factor(3, 16), 3.0);  // tends to k as KO grows
}

TEST(Presets, StudyGrid) {
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
