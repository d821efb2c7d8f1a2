// The fft rows' parts that need no GPU: the rows in the bench's list, and their per-voxel accuracy
// measure (max |error| / sum |w||x| against float64) on outputs computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "perf/bench.h"
#include "perf/fft_rows.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::perf {
namespace {

TEST(FftRows, InTheBenchListWithTheirTargets) {
  int rows = 0;
  for (const Workload& w : bench_workloads()) {
    if (w.kind != Workload::Kind::GpuFft)
      continue;
    ++rows;
    EXPECT_EQ(w.volume.extent, (Index{256, 256, 256, 1})) << w.name;
    const bool targeted = w.name == "fft3d_15" || w.name == "fft3d_21";
    EXPECT_EQ(w.target, targeted ? 2.0 : -1.0) << w.name;
  }
  EXPECT_EQ(rows, 3);
}

TEST(FftRows, PerVoxelErrorOfTheReferenceRoundedToFloatIsOneRounding) {
  const Shape volume{3, {20, 17, 15, 1}}, filter{3, {5, 3, 7, 1}};
  const std::vector<float> in = test::random_values(volume.count(), test::fresh_seed());
  const std::vector<float> taps = test::random_values(filter.count(), test::fresh_seed());
  const std::vector<double> ref = test::reference_dense(
      make_view<const float>(in.data(), 3, volume.extent), {3, filter.extent, taps.data()},
      Operation::Correlation, Boundary::Zero, OutputRegion::Same);
  std::vector<float> got(ref.begin(), ref.end());
  const double rounded = max_weighted_error(volume, filter, in, taps, got, 4, 200, 1);
  EXPECT_LE(rounded, 1.0 / (1 << 24));
  // An error in one corner output shows; a NaN anywhere sampled is infinite.
  got[0] += 1e-3f;
  EXPECT_GT(max_weighted_error(volume, filter, in, taps, got, 4, 0, 1), 1e-5);
  got[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isinf(max_weighted_error(volume, filter, in, taps, got, 4, 0, 1)));
}

}  // namespace
}  // namespace ndconv::perf
