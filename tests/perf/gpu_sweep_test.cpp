// The GPU sweep with --quick: on a machine with a usable GPU every point validates
// against the CPU backend, the numbers are physically possible (below the measured ceilings), each
// problem has its automatic plan as a point of its own, and each row's resources are those of the
// kernel that ran (the instantiation list's entry for the row's family, TX, KO and block), not of
// another kernel with the same KO. Skipped with the reason where there is no usable GPU (CI).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "engine/cuda_backend.h"
#include "ndconv/engine.h"
#include "perf/sweep.h"

namespace ndconv::perf {
namespace {

double value(const Json& row, const char* key) {
  return number(row, key);
}

// Registers of the compiled instantiations that a row of (kernel, TX, KO, block rows) can be.
std::set<int> listed_registers(const std::vector<cuda_backend::DenseKernelVariant>& variants,
                               const Json& row) {
  std::set<int> regs;
  const bool tiled = text(row, "kernel") == "tiled";
  const int64_t rows = parse_shape(text(row, "block"), "block").extent[1];
  for (const auto& v : variants) {
    if ((v.kernel == cuda_backend::DenseKernel::Tiled) != tiled ||
        v.resources.outputs_per_thread != static_cast<int>(value(row, "ko")))
      continue;
    if (tiled && (v.outputs_along_x != static_cast<int>(value(row, "tx")) || v.block_rows != rows))
      continue;
    regs.insert(v.resources.registers_per_thread);
  }
  return regs;
}

TEST(GpuSweep, QuickGridValidatesAndRecordsTheKernelThatRan) {
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
  const auto variants = cuda_backend::dense_kernel_variants(c.cuda_device);
  std::map<std::string, int> autos;                 // problem -> auto points
  std::map<std::pair<std::string, int>, int> regs;  // (kernel, KO) -> registers (forced rows)
  for (const Json& row : r.rows) {
    SCOPED_TRACE(text(row, "volume") + " " + text(row, "filter") + " " + text(row, "point") + " " +
                 text(row, "kernel") + " KO " + text(row, "ko"));
    EXPECT_EQ(text(row, "status"), "valid") << text(row, "note");
    EXPECT_LT(value(row, "rel_l2_error"), 1e-5);
    EXPECT_GT(value(row, "median_ms"), 0.0);
    EXPECT_LE(value(row, "min_ms"), value(row, "median_ms"));
    EXPECT_GT(value(row, "pct_fma_peak"), 0.0);
    EXPECT_LT(value(row, "pct_fma_peak"), 105.0);
    EXPECT_GT(value(row, "occupancy"), 0.0);
    EXPECT_EQ(listed_registers(variants, row).count(static_cast<int>(value(row, "registers"))), 1u)
        << "registers " << text(row, "registers") << " are not the ran kernel's";
    if (text(row, "point") == "auto")
      ++autos[text(row, "volume") + "/" + text(row, "filter")];
    else
      regs[{text(row, "kernel"), static_cast<int>(value(row, "ko"))}] =
          static_cast<int>(value(row, "registers"));
    if (text(row, "point") == "auto" && text(row, "dims") == "2") {
      EXPECT_EQ(text(row, "kernel"), "tiled");  // the 2D plan: no forced blocked point runs it
    }
  }
  EXPECT_EQ(autos.size(), 3u);
  for (const auto& [problem, count] : autos)
    EXPECT_EQ(count, 1) << problem;
  // Both families were swept, and the same KO does not report the same resources for both.
  ASSERT_TRUE(regs.count({"tiled", 4}) && regs.count({"blocked", 4}));
  const int tiled4 = regs[{"tiled", 4}], blocked4 = regs[{"blocked", 4}];
  EXPECT_NE(tiled4, blocked4);
  for (const Json& p : r.summary["problems"])
    EXPECT_GE(value(p, "auto_loss_pct"), 0.0);
  EXPECT_EQ(r.summary["points"].size(), r.rows.size());
  EXPECT_GT(value(r.summary["ceilings"], "fma_peak_gflops"), 1000.0);
  EXPECT_GT(value(r.summary["ceilings"], "copy_bandwidth_gbs"), 100.0);
}

}  // namespace
}  // namespace ndconv::perf
