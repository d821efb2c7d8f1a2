// The end-to-end rows run for real, small: `ndconv bench` on a 32x32x32x2 sequence and a batch of
// two 24^3 volumes, through the built ndconv binary (its smooth, convolve and convert), on the
// CPU. Every row must time its floor and its command, score one against the other, and leave no
// file behind. "e2e_smooth_ni*" names the two rows it starts (.nii and .nii.gz).
#include <gtest/gtest.h>

#include <cmath>

#include "cli_run.h"
#include "perf/report.h"

namespace ndconv::test {
namespace {

TEST(E2eBenchRows, RunThroughTheNdconvBinary) {
  TempDir work;
  const CliResult r = run_ndconv(
      {"bench", "--device", "cpu", "--workload", "e2e_smooth_ni*,e2e_convolve_mha,batch",
       "--e2e-volume", "32x32x32x2", "--batch-volume", "24x24x24", "--batch-count", "2",
       "--e2e-reps", "1", "--e2e-device", "cpu", "--work-dir", work.path(), "--json", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  const perf::Json doc = perf::Json::parse(r.out);
  ASSERT_EQ(doc["workloads"].size(), 4u);
  for (const perf::Json& row : doc["workloads"]) {
    const std::string name = row["workload"];
    EXPECT_FALSE(row.contains("error")) << name << ": " << row.dump();
    EXPECT_EQ(row["backend"], "ndconv command") << name;
    const perf::Json& floor = row["floor"];
    EXPECT_GT(perf::number(floor, "median_s"), 0.0) << name;
    EXPECT_NE(perf::text(floor, "command").find("convert"), std::string::npos) << name;
    ASSERT_EQ(row["runs"].size(), 1u) << name;
    const perf::Json& run = row["runs"][0];
    EXPECT_EQ(run["device"], "cpu");
    // Filtered on the CPU (its plan said so): no CUDA cost measured, none set against it.
    EXPECT_EQ(run["filtered_on"], "cpu") << name;
    EXPECT_FALSE(run.contains("ratio_to_floor_plus_cuda")) << name;
    EXPECT_FALSE(row.contains("cuda_fixed_cost")) << name;
    EXPECT_GT(perf::number(run, "median_s"), 0.0) << name;
    const char* measure = name == "batch" ? "throughput_share_of_floor" : "ratio_to_floor";
    const double ratio = perf::number(run, measure);
    EXPECT_TRUE(std::isfinite(ratio) && ratio > 0) << name;
    EXPECT_TRUE(run["target_met"].is_boolean()) << name;
    // Both commands' own --verbose account was read (milliseconds, so 0.000 s on tiny files).
    for (const perf::Json* j : {&floor, &run}) {
      for (const char* stage : {"read", "filter", "write"})
        EXPECT_GE(perf::number((*j)["own_account_s"], stage), 0.0) << name << " " << stage;
    }
    EXPECT_TRUE(row["target_met"].is_boolean()) << name;
  }
  EXPECT_TRUE(work.list().empty()) << "the bench left files in its work folder";
}

}  // namespace
}  // namespace ndconv::test
