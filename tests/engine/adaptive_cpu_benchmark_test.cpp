// The adaptive filter's true-4D run on the CPU against the CPU's FP32 FMA ceiling measured in the
// same run (docs/performance.md, "The adaptive filter on the CPU"). Disabled: a benchmark, not a
// check; run it on a quiet machine with
//   ndconv_engine_tests --gtest_also_run_disabled_tests --gtest_filter='AdaptiveCpuBenchmark.*'
// It prints the ceiling, each stage's seconds, the useful multiply-adds per second and their share
// of the ceiling, and the process's peak resident memory.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "cpu/cpu_backend.h"
#include "ndconv/adaptive.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

void run_true_4d(const Index& extent) {
  const int64_t voxels = extent[0] * extent[1] * extent[2] * extent[3];
  std::vector<float> in = random_values(voxels, 47);
  for (float& v : in)
    v = std::floor((v + 1.0f) * 127.5f);  // 8-bit values, as an echo sequence holds
  std::vector<float> out(static_cast<size_t>(voxels));
  const AdaptiveParameters p = adaptive_preset(AdaptivePreset::Echo);
  Options o;
  o.backend = Backend::Cpu;
  // The filters are designed (and cached) before the clock starts.
  design_quadrature_filters(4, p.quadrature);
  design_reconstruction_filters(4, p.reconstruction);
  const cpu_backend::FmaPeak before = cpu_backend::measure_fma_peak(0, 1.0);
  const auto t0 = std::chrono::steady_clock::now();
  const AdaptiveReport r = adaptive_filter(make_view<const float>(in.data(), 4, extent),
                                           make_view(out.data(), 4, extent), p, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const cpu_backend::FmaPeak after = cpu_backend::measure_fma_peak(0, 1.0);
  const double peak = std::max(before.multiply_adds_per_second, after.multiply_adds_per_second);
  // Useful multiply-adds: 24 real quadrature filters of q^4 and d(d+1)/2 + 1 = 11
  // reconstruction filters of r^4 per voxel.
  const double useful = static_cast<double>(voxels) * (24 * std::pow(p.quadrature.size, 4) +
                                                       11 * std::pow(p.reconstruction.size, 4));
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "extent %lldx%lldx%lldx%lld, %s on %d threads: FMA ceiling %.1f GFMA/s (%.1f before, "
      "%.1f after)\n",
      static_cast<long long>(extent[0]), static_cast<long long>(extent[1]),
      static_cast<long long>(extent[2]), static_cast<long long>(extent[3]), before.isa,
      before.threads, peak * 1e-9, before.multiply_adds_per_second * 1e-9,
      after.multiply_adds_per_second * 1e-9);
  for (const auto& [stage, s] : r.stage_seconds)
    std::printf("  %-40s %8.3f s\n", stage.c_str(), s);
  std::printf(
      "adaptive true 4D: %.2f s, %.3g useful multiply-adds, %.1f GFMA/s = %.1f%% of the "
      "ceiling; estimate %.2f s; peak RSS %.2f GiB\n",
      seconds, useful, useful / seconds * 1e-9, 100 * useful / seconds / peak,
      adaptive_estimated_cpu_seconds(4, extent, p, 0),
      static_cast<double>(usage.ru_maxrss) / (1 << 20));
  EXPECT_TRUE(std::isfinite(out[static_cast<size_t>(voxels / 2)]));
}

TEST(AdaptiveCpuBenchmark, DISABLED_EchoSequence80) {
  run_true_4d({80, 80, 80, 6});
}

TEST(AdaptiveCpuBenchmark, DISABLED_EchoSequence160) {
  run_true_4d({160, 160, 160, 10});
}

}  // namespace
}  // namespace ndconv::test
