// The GPU median's per-thread code (src/cuda/median/median_select.h) run on the host over every
// output voxel, as the kernel's grid would: against the float64 reference median in 2D, 3D and
// 4D for every boundary, and its key order (NaN above every number). Needs no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "cuda/median/median_select.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

std::vector<float> emulate_median(const std::vector<float>& in, int dims, const Index& extent,
                                  const Index& radius, Boundary boundary) {
  cuda_median::MedianShape shape;
  for (int a = 0; a < 4; ++a) {
    shape.extent[a] = a < dims ? extent[a] : 1;
    shape.radius[a] = a < dims ? radius[a] : 0;
  }
  shape.boundary = static_cast<int>(boundary);
  std::vector<float> out(in.size());
  std::vector<uint32_t> keys(cuda_median::kMaxWindow);
  for (size_t v = 0; v < in.size(); ++v)
    out[v] = cuda_median::median_of_voxel(shape, static_cast<int64_t>(v), keys.data(),
                                          [&](int64_t i) { return in[i]; });
  return out;
}

TEST(MedianEmulation, KeysOrderLikeFloatsWithNanLast) {
  const float values[] = {
      -std::numeric_limits<float>::infinity(), -3.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 2.0f,
      std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i + 1 < std::size(values); ++i)
    EXPECT_LE(cuda_median::median_key(values[i]), cuda_median::median_key(values[i + 1])) << i;
  for (float v : values)
    EXPECT_EQ(cuda_median::median_value(cuda_median::median_key(v)), v);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_GT(cuda_median::median_key(nan), cuda_median::median_key(values[7]));
  EXPECT_GT(cuda_median::median_key(-nan), cuda_median::median_key(values[7]));
  EXPECT_TRUE(std::isnan(cuda_median::median_value(cuda_median::median_key(nan))));
}

TEST(MedianEmulation, MatchesReferenceEveryDimensionAndBoundary) {
  const Boundary boundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                 Boundary::Periodic};
  for (int dims = 2; dims <= 4; ++dims) {
    const Index extent = dims == 2   ? Index{13, 11, 1, 1}
                         : dims == 3 ? Index{9, 8, 7, 1}
                                     : Index{7, 6, 5, 4};
    std::vector<float> in =
        random_values(extent[0] * extent[1] * extent[2] * extent[3], fresh_seed());
    in[2] = in[3] = in[7];  // ties
    const Index radii[] = {{1, 1, 1, 1}, {3, 3, 3, 0}, {2, 0, 1, 2}};
    for (const Index& r : radii) {
      Index radius{0, 0, 0, 0};
      int64_t window = 1;
      for (int a = 0; a < dims; ++a) {
        radius[a] = r[a];
        window *= 2 * r[a] + 1;
      }
      if (window > cuda_median::kMaxWindow)
        continue;
      for (Boundary b : boundaries) {
        SCOPED_TRACE(std::to_string(dims) + "D " + to_string(b) + " radius " +
                     std::to_string(radius[0]) + "x" + std::to_string(radius[1]) + "x" +
                     std::to_string(radius[2]) + "x" + std::to_string(radius[3]));
        const auto got = emulate_median(in, dims, extent, radius, b);
        const auto ref = reference_median(
            make_view(static_cast<const float*>(in.data()), dims, extent), radius, b);
        EXPECT_LT(relative_l2_error(got, ref), 1e-7);
      }
    }
  }
}

}  // namespace
}  // namespace ndconv::test
