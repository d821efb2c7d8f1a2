// The filter bank bench rows' parts that need no GPU: their registration in the bench (names,
// a GPU required), and the CPU bank's check windows against the float64 reference, per filter and
// for the weighted sum (the offsets of windows away from the volume's origin included).
#include <gtest/gtest.h>

#include <algorithm>

#include "perf/bank_rows.h"
#include "perf/bench.h"
#include "perf/tensor_dense_rows.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::perf {
namespace {

// `rows` are the bench's workloads of those names, and none runs without a GPU.
void expect_gpu_workloads(const std::vector<Workload>& rows,
                          const std::vector<std::string>& expected) {
  std::vector<std::string> names;
  for (const Workload& w : rows)
    names.push_back(w.name);
  EXPECT_EQ(names, expected);
  for (const std::string& name : names) {
    const auto& all = bench_workloads();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const Workload& w) {
      return w.name == name;
    })) << name;
    BenchConfig cpu_only;
    cpu_only.cpu_only = true;
    cpu_only.workloads = {name};
    EXPECT_THROW(run_bench(cpu_only, nullptr), InvalidArgument) << name;  // no CPU row left
  }
}

TEST(BankRows, AreBenchWorkloadsThatNeedAGpu) {
  expect_gpu_workloads(bank_workloads(), {"bank_3d", "bank_3d_tc", "bank_4d", "bank_4d_tc",
                                          "bank_sum_3d", "adaptive_4d"});
}

// The tensor-core dense rows (tensor_dense_rows.h): in the bench, a GPU required.
TEST(TensorDenseRows, AreBenchWorkloadsThatNeedAGpu) {
  expect_gpu_workloads(tensor_dense_workloads(), {"dense3d_7_tc", "dense3d_11_tc"});
}

struct Bank {
  Shape volume = parse_shape("23x19x17", "volume");
  Shape filter = parse_shape("5x3x5", "filter");
  int count = 3;
  std::vector<float> input, taps;
  std::vector<std::vector<float>> reference;  // per filter, whole volume

  explicit Bank(uint64_t seed) {
    input = test::random_values(volume.count(), seed);
    taps = test::random_values(filter.count() * count, seed + 1);
    const ConstVolumeView in = make_view<const float>(input.data(), 3, volume.extent);
    for (int f = 0; f < count; ++f) {
      const DenseFilter d{3, filter.extent, taps.data() + f * filter.count()};
      const std::vector<double> r =
          test::reference_dense(in, d, Operation::Correlation, Boundary::Zero, OutputRegion::Same);
      reference.emplace_back(r.begin(), r.end());
    }
  }
};

// A budget small enough that the check takes two windows, one at the far corner.
constexpr double kSmallBudget = 4e5;

TEST(BankRows, CpuCheckMatchesTheReferencePerFilter) {
  const Bank b(test::fresh_seed());
  const std::vector<CheckPlan> plans =
      cpu_bank_check(b.volume, b.filter, b.count, b.taps, b.input, nullptr, kSmallBudget);
  ASSERT_EQ(plans.size(), 3u);
  for (int f = 0; f < b.count; ++f) {
    ASSERT_EQ(plans[f].windows.size(), 2u);
    EXPECT_GT(plans[f].windows[1].start[1], 0);  // y shrinks first
    EXPECT_LT(plans[f].covered_fraction, 1.0);
    EXPECT_LT(window_error(plans[f], b.volume, b.reference[f]), 1e-5) << "filter " << f;
  }
  // A filter's windows are not another's: the check can fail.
  EXPECT_GT(window_error(plans[0], b.volume, b.reference[1]), 0.1);
}

TEST(BankRows, CpuCheckMatchesTheReferenceForTheWeightedSum) {
  const uint64_t seed = test::fresh_seed();
  const Bank b(seed);
  const int64_t n = b.volume.count();
  const std::vector<float> weights = test::random_values(n * b.count, seed + 2);
  std::vector<float> sum(static_cast<std::size_t>(n), 0.0f);
  for (int64_t v = 0; v < n; ++v) {
    double s = 0;
    for (int f = 0; f < b.count; ++f)
      s += static_cast<double>(weights[f * n + v]) * b.reference[f][v];
    sum[v] = static_cast<float>(s);
  }
  const std::vector<CheckPlan> plans =
      cpu_bank_check(b.volume, b.filter, b.count, b.taps, b.input, weights.data(), kSmallBudget);
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].windows.size(), 2u);
  EXPECT_LT(window_error(plans[0], b.volume, sum), 1e-5);
  EXPECT_GT(window_error(plans[0], b.volume, b.reference[0]), 0.1);
}

}  // namespace
}  // namespace ndconv::perf
