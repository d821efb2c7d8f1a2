// The sweep's "rule vs best" bookkeeping, the seed method's load factor, and the KO rule replayed
// on a recorded sweep (rescore), on recorded numbers. (The rule's own cases are in
// tests/gpu/ko_rule_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "ndconv/errors.h"
#include "perf/rescore.h"
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

namespace ndconv::perf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A recorded GPU sweep problem (H100 numbers, 3D 256^3, 11^3): blocked KOs, tiled KOs and the
// auto point; the automatic plan replayed on it.
Json sweep_row(const char* point, const char* kernel, int tx, int ko, const char* block, int regs,
               int blocks, double occ, double ms, const char* status = "valid") {
  const bool launched = std::string(status) != "not_implementable";
  return Json::object()
      .set("mode", "gpu")
      .set("volume", "256x256x256")
      .set("filter", "11x11x11")
      .set("point", point)
      .set("kernel", kernel)
      .set("tx", tx)
      .set("ko", ko)
      .set("block", block)
      .set("status", status)
      .set("registers", launched ? Json(regs) : Json())
      .set("spill_bytes", launched ? Json(0) : Json())
      .set("blocks_per_sm", launched ? Json(blocks) : Json())
      .set("occupancy", launched ? Json(occ) : Json())
      .set("valid", std::string(status) == "valid")
      .set("median_ms", std::string(status) == "valid" ? ms : kNaN);
}

std::vector<Json> recorded_rows() {
  return {sweep_row("forced", "blocked", 1, 1, "128x1x1", 56, 9, 0.5625, 23.09),
          sweep_row("forced", "blocked", 1, 2, "128x1x1", 72, 7, 0.4375, 15.55),
          sweep_row("forced", "blocked", 1, 4, "128x1x1", 72, 7, 0.4375, 9.354),
          sweep_row("forced", "blocked", 1, 8, "128x1x1", 80, 6, 0.375, 6.856),
          sweep_row("forced", "blocked", 1, 16, "128x1x1", 115, 4, 0.25, 7.453),
          sweep_row("forced", "tiled", 8, 8, "4x32x1", 156, 3, 0.1875, 1.90),
          sweep_row("forced", "tiled", 8, 4, "4x32x1", 124, 4, 0.25, 1.854),
          sweep_row("forced", "tiled", 8, 1, "4x32x1", 64, 8, 0.5, 2.547),
          sweep_row("auto", "tiled", 8, 4, "4x32x1", 124, 4, 0.25, 1.86)};
}

TEST(Rescore, ReplaysTheAutomaticPlanOnRecordedNumbers) {
  std::stringstream csv;
  write_csv(csv, recorded_rows());
  const std::vector<Json> rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[3].find("median_ms")->scalar_text(), "6.856");
  const Json r = rescore_sweep(rows);
  ASSERT_EQ(r.find("problems")->items().size(), 1u);
  const Json& p = r.find("problems")->items()[0];
  EXPECT_EQ(p.find("recorded_auto")->scalar_text(), "tiled TX=8 KO=4 4x32x1");
  EXPECT_EQ(p.find("rule_point")->scalar_text(), "tiled TX=8 KO=4 4x32x1");
  EXPECT_EQ(p.find("best_point")->scalar_text(), "tiled TX=8 KO=4 4x32x1");  // forced, not auto
  EXPECT_NEAR(std::stod(p.find("rule_loss_pct")->scalar_text()), 0.0, 1e-9);
  EXPECT_EQ(r.find("scored")->scalar_text(), "1");
  // The blocked KO rule alone, against the best blocked KO (8).
  EXPECT_EQ(p.find("blocked_best_ko")->scalar_text(), "8");
  const std::map<int, double> ms{{1, 23.09}, {2, 15.55}, {4, 9.354}, {8, 6.856}, {16, 7.453}};
  const int rule = std::stoi(p.find("blocked_rule_ko")->scalar_text());
  ASSERT_TRUE(ms.count(rule));
  EXPECT_NEAR(std::stod(p.find("blocked_rule_loss_pct")->scalar_text()),
              100.0 * (ms.at(rule) / 6.856 - 1), 1e-3);
}

TEST(Rescore, WithoutAnImplementableTiledPointTheBlockedRuleServes) {
  std::vector<Json> rows;
  for (const Json& row : recorded_rows()) {
    if (row.find("kernel")->scalar_text() == "blocked")
      rows.push_back(row);
  }
  rows.push_back(sweep_row("forced", "tiled", 8, 4, "", 0, 0, 0, 0, "not_implementable"));
  rows.push_back(sweep_row("auto", "blocked", 1, 8, "128x1x1", 80, 6, 0.375, 6.9));
  const Json r = rescore_sweep(rows);
  const Json& p = r.find("problems")->items()[0];
  EXPECT_EQ(p.find("rule_point")->scalar_text().rfind("blocked KO=", 0), 0u);
  EXPECT_EQ(p.find("rule_point")->scalar_text(),
            "blocked KO=" + p.find("blocked_rule_ko")->scalar_text() + " 128x1x1");
  EXPECT_EQ(p.find("best_point")->scalar_text(), "blocked KO=8 128x1x1");
}

TEST(Rescore, SpillingInstantiationsAreNeverChosen) {
  std::vector<Json> rows = recorded_rows();
  for (Json& row : rows)
    if (row.find("kernel")->scalar_text() == "blocked" && row.find("ko")->scalar_text() != "1")
      row.set("spill_bytes", 16);
  const Json r = rescore_sweep(rows);
  EXPECT_EQ(r.find("problems")->items()[0].find("blocked_rule_ko")->scalar_text(), "1");
}

TEST(Rescore, RefusesCsvWithoutTheKernelColumns) {
  std::stringstream old("mode,volume,filter,ko,registers\ngpu,64x64,3x3,4,70\n");
  EXPECT_THROW(rescore_sweep(read_csv(old)), InvalidArgument);
}

TEST(ReadCsv, QuotingAndErrors) {
  std::stringstream ok("a,b\n\"x,\"\"y\"\"\",2\n");
  const auto rows = read_csv(ok);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].find("a")->scalar_text(), "x,\"y\"");
  std::stringstream bad("a,b\n1,2,3\n");
  EXPECT_THROW(read_csv(bad), InvalidArgument);
  std::stringstream cpu("mode,kernel,registers\ncpu,cpu,\n");
  EXPECT_THROW(rescore_sweep(read_csv(cpu)), InvalidArgument);
}

}  // namespace
}  // namespace ndconv::perf
