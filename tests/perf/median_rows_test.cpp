// The median bench rows' parts that need no GPU: the check windows against the CPU median of the
// whole volume for every boundary it supports (a wrong voxel noticed), the rows in the workload
// list (none of them with an api_ row), and the no-GPU path; on a GPU, a small row end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "perf/bench.h"
#include "perf/check.h"
#include "perf/gpu.h"
#include "perf/median_rows.h"

namespace ndconv::perf {
namespace {

std::vector<float> cpu_median(const Shape& volume, const std::vector<float>& input,
                              const Index& radius, Boundary boundary) {
  std::vector<float> out(input.size(), std::numeric_limits<float>::quiet_NaN());
  Options o;
  o.backend = Backend::Cpu;
  o.boundary = boundary;
  median_filter(make_view(input.data(), volume.dims, volume.extent),
                make_view(out.data(), volume.dims, volume.extent), radius, o);
  return out;
}

TEST(MedianRows, CheckWindowsAreTheWholeVolumesMedian) {
  struct Case {
    const char* volume;
    Index radius;
  };
  for (const Case& c : {Case{"41x23", {3, 2, 0, 0}}, Case{"23x19x17", {2, 1, 3, 0}},
                        Case{"11x9x8x7", {1, 1, 1, 1}}}) {
    const Shape volume = parse_shape(c.volume, "volume");
    const std::vector<float> input = random_volume(volume.count(), fresh_seed());
    for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror}) {
      // A budget of a few planes: two windows at opposite corners, cut along the slow axes.
      const double budget = static_cast<double>(volume.count()) / 4 * 27;
      const CheckPlan plan = median_check(volume, input, c.radius, b, budget);
      ASSERT_EQ(plan.windows.size(), 2u) << c.volume;
      EXPECT_LT(plan.covered_fraction, 1.0);
      std::vector<float> whole = cpu_median(volume, input, c.radius, b);
      EXPECT_EQ(window_error(plan, volume, whole), 0.0) << c.volume << " " << to_string(b);
      // A wrong voxel in the last window (the far corner) is noticed.
      whole.back() += 1.0f;
      EXPECT_GT(window_error(plan, volume, whole), 1e-4) << c.volume << " " << to_string(b);
    }
  }
}

TEST(MedianRows, PeriodicBoundaryIsRefusedByTheCheck) {
  const Shape volume = parse_shape("8x8x8", "volume");
  const std::vector<float> input = random_volume(volume.count(), fresh_seed());
  EXPECT_THROW(median_check(volume, input, {1, 1, 1, 0}, Boundary::Periodic, 1e9), InvalidArgument);
}

TEST(MedianRows, TheBenchListsTheMedianRowsWithoutApiRows) {
  int found = 0;
  for (const Workload& w : bench_workloads()) {
    EXPECT_NE(w.name.rfind("api_median", 0), 0u) << w.name;
    if (w.name.rfind("median", 0) != 0)
      continue;
    ++found;
    EXPECT_EQ(w.kind, Workload::Kind::GpuMedian);
    EXPECT_GE(w.median_radius, 1);
    EXPECT_LE(w.median_radius, kMaxMedianRadius) << w.name;
  }
  EXPECT_EQ(found, 3);
}

TEST(MedianRows, WithoutAGpuTheRowIsRefusedAndCpuOnlySkipsIt) {
  BenchConfig cfg;
  cfg.workloads = {"median3d_r1"};
  cfg.cpu_only = true;
  EXPECT_THROW(run_bench(cfg, nullptr), InvalidArgument);  // no workload left
  if (cuda_status().usable)
    GTEST_SKIP() << "a usable GPU is present; the row runs in GpuMedianRow";
  cfg.cpu_only = false;
  EXPECT_THROW(run_bench(cfg, nullptr), GpuUnavailable);
}

TEST(MedianRows, GpuMedianRowOnASmallVolume) {
  const CudaStatus status = cuda_status();
  if (!status.usable)
    GTEST_SKIP() << "no usable GPU: " << status.reason;
  std::vector<Workload> rows;
  add_median_workloads(rows);
  gpu::Timer timer(0);
  const gpu::Ceilings ceilings = gpu::measure_ceilings(0, 3);
  BenchConfig cfg;
  cfg.repetitions = 3;
  cfg.call_repetitions = 2;
  for (Workload w : rows) {
    w.volume = parse_shape(w.volume.dims == 3 ? "70x45x33" : "300x190", "volume");
    int failures = 0;
    const Json row = median_gpu_row(w, cfg, 0, timer, ceilings, fresh_seed(), failures);
    EXPECT_EQ(failures, 0) << w.name;
    EXPECT_EQ(number(row, "rel_l2_error"), 0.0) << w.name;
    EXPECT_EQ(number(row["call_time"], "rel_l2_error"), 0.0) << w.name;
    EXPECT_GT(number(row["device_time"], "median_ms"), 0.0) << w.name;
  }
}

}  // namespace
}  // namespace ndconv::perf
