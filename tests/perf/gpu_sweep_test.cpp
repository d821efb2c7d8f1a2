// The GPU sweep with --quick (issue 5): on a machine with a usable GPU every point validates
// against the CPU backend and the numbers are physically possible (below the measured ceilings).
// Skipped with the reason where there is no usable GPU (CI).
#include <gtest/gtest.h>

#include <string>

#include "ndconv/engine.h"
#include "perf/sweep.h"

namespace ndconv::perf {
namespace {

double value(const Json& row, const char* key) {
  return std::stod(row.find(key)->scalar_text());
}

TEST(GpuSweep, QuickGridValidatesAndStaysUnderTheCeilings) {
  const CudaStatus status = cuda_status();
  if (!status.usable)
    GTEST_SKIP() << "no usable GPU: " << status.reason;
  SweepConfig c = quick_config();
  c.volumes = {parse_shape("512x512", "v"), parse_shape("64x64x64", "v")};
  c.filters[2] = {5};
  c.filters[3] = {3, 7};
  const SweepResult r = run_sweep(c, nullptr);
  EXPECT_EQ(r.failures, 0);
  ASSERT_FALSE(r.rows.empty());
  for (const Json& row : r.rows) {
    EXPECT_EQ(row.find("valid")->scalar_text(), "true");
    EXPECT_LT(value(row, "rel_l2_error"), 1e-5);
    EXPECT_GT(value(row, "median_ms"), 0.0);
    EXPECT_LE(value(row, "min_ms"), value(row, "median_ms"));
    EXPECT_GT(value(row, "pct_fma_peak"), 0.0);
    EXPECT_LT(value(row, "pct_fma_peak"), 105.0);
    EXPECT_GT(value(row, "registers"), 0.0);
    EXPECT_GT(value(row, "occupancy"), 0.0);
  }
  EXPECT_GT(value(*r.summary.find("ceilings"), "fma_peak_gflops"), 1000.0);
  EXPECT_GT(value(*r.summary.find("ceilings"), "copy_bandwidth_gbs"), 100.0);
}

}  // namespace
}  // namespace ndconv::perf
