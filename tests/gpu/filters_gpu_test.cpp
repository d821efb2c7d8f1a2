// The filters of ndconv/filters.h on the GPU against the CPU backend (skipped without a usable
// GPU): the median's own kernel (every boundary, 2D/3D/4D, radii up to 7, 7^4 windows, data with
// many ties, a strided output), the recursive Gaussian's kernel (every boundary, the constant one
// with a value, small to huge sigmas, 2D/3D/4D) and the derived filters, whose engine calls run
// on the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ndconv/filters.h"
#include "require_gpu.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

const Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                Boundary::Periodic, Boundary::Reflect};

// `value`: the outside value under Boundary::Constant.
Options on(Backend backend, Boundary boundary, float value = 0.0f) {
  Options o;
  o.backend = backend;
  o.boundary = boundary;
  o.boundary_value = value;
  return o;
}

TEST(FiltersGpu, MedianMatchesCpuBackend) {
  NDCONV_REQUIRE_GPU();
  struct Case {
    int dims;
    Index extent, radius;
  };
  const Case cases[] = {{2, {301, 257, 1, 1}, {3, 3, 0, 0}}, {3, {67, 45, 38, 1}, {1, 1, 1, 0}},
                        {3, {67, 45, 38, 1}, {3, 3, 3, 0}},  {3, {40, 33, 29, 1}, {2, 1, 3, 0}},
                        {4, {23, 19, 17, 6}, {1, 1, 1, 1}},  {4, {12, 10, 9, 8}, {3, 3, 3, 3}},
                        {2, {150, 97, 1, 1}, {2, 7, 0, 0}},  {3, {70, 13, 21, 1}, {1, 0, 7, 0}},
                        {3, {41, 23, 19, 1}, {4, 4, 4, 0}}};
  for (const Case& c : cases) {
    const int64_t n = c.extent[0] * c.extent[1] * c.extent[2] * c.extent[3];
    std::vector<float> in = random_values(n, fresh_seed());
    for (int64_t i = 0; i < n; i += 3)  // many ties, as in 8-bit data
      in[i] = std::round(in[i] * 4.0f);
    in[n / 2] = std::numeric_limits<float>::quiet_NaN();  // NaN orders last on both
    const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), c.dims, c.extent);
    for (Boundary b : kBoundaries) {
      SCOPED_TRACE(std::to_string(c.dims) + "D " + to_string(b) + " radius " +
                   std::to_string(c.radius[0]) + "x" + std::to_string(c.radius[1]) + "x" +
                   std::to_string(c.radius[2]) + "x" + std::to_string(c.radius[3]));
      std::vector<float> cpu(n), gpu(n);
      poison(gpu);
      median_filter(iv, make_view(cpu.data(), c.dims, c.extent), c.radius, on(Backend::Cpu, b));
      const RunReport r = median_filter(iv, make_view(gpu.data(), c.dims, c.extent), c.radius,
                                        on(Backend::Cuda, b));
      EXPECT_EQ(r.backend, Backend::Cuda);
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i)
        differ += !(cpu[i] == gpu[i] || (std::isnan(cpu[i]) && std::isnan(gpu[i])));
      EXPECT_EQ(differ, 0) << "voxels that differ from the CPU backend";
    }
  }
}

TEST(FiltersGpu, MedianIntoStridedOutput) {
  NDCONV_REQUIRE_GPU();
  const Index extent{31, 22, 17, 1};
  const int64_t n = extent[0] * extent[1] * extent[2];
  std::vector<float> in = random_values(n, fresh_seed()), cpu(n), wide(2 * n);
  poison(wide);
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 3, extent);
  median_filter(iv, make_view(cpu.data(), 3, extent), {2, 2, 2, 0},
                on(Backend::Cpu, Boundary::Mirror));
  VolumeView strided = make_view(wide.data(), 3, extent);
  for (int a = 0; a < 3; ++a)
    strided.stride[a] *= 2;
  median_filter(iv, strided, {2, 2, 2, 0}, on(Backend::Cuda, Boundary::Mirror));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(wide[2 * i], cpu[i]) << i;
}

TEST(FiltersGpu, DerivedFiltersMatchCpuBackend) {
  NDCONV_REQUIRE_GPU();
  const Index extent{48, 40, 36, 1};
  const int64_t n = extent[0] * extent[1] * extent[2];
  std::vector<float> in = random_values(n, fresh_seed()), mask = random_values(n, fresh_seed());
  const ConstVolumeView iv =
      make_view(static_cast<const float*>(in.data()), 3, extent, {0.7, 1.0, 1.6, 1.0});
  const ConstVolumeView mv = make_view(static_cast<const float*>(mask.data()), 3, extent);
  const std::array<double, 4> sigma{1.5, 2.0, 1.2, 0};
  for (Boundary b : kBoundaries) {
    SCOPED_TRACE(to_string(b));
    std::vector<float> cpu(n), gpu(n);
    auto compare = [&](const char* what, auto run) {
      poison(gpu);
      run(make_view(cpu.data(), 3, extent), on(Backend::Cpu, b));
      run(make_view(gpu.data(), 3, extent), on(Backend::Cuda, b));
      std::vector<double> ref(cpu.begin(), cpu.end());
      EXPECT_LT(relative_l2_error(gpu, ref), 1e-5) << what;
    };
    compare("gradient", [&](const VolumeView& o, const Options& opt) {
      gradient_magnitude(iv, o, sigma, opt);
    });
    compare("laplacian", [&](const VolumeView& o, const Options& opt) {
      laplacian_of_gaussian(iv, o, sigma, opt);
    });
    compare("unsharp", [&](const VolumeView& o, const Options& opt) {
      UnsharpParameters p;
      p.sigma_voxels = sigma;
      p.amount = 1.5;
      unsharp_mask(iv, o, p, opt);
    });
    compare("masked mean", [&](const VolumeView& o, const Options& opt) {
      masked_filter_separable(iv, mv, box_filter(3, {5, 3, 7, 1}), o, {}, opt);
    });
    compare("sphere mean", [&](const VolumeView& o, const Options& opt) {
      filter_dense(iv, ellipsoid_mean_kernel(3, {2.5, 2.5, 1.5, 0}).filter(), o, opt);
    });
  }
}

TEST(FiltersGpu, RecursiveGaussianMatchesCpuBackend) {
  NDCONV_REQUIRE_GPU();
  struct Case {
    int dims;
    Index extent;
    std::array<double, 4> sigma;
  };
  const Case cases[] = {{2, {517, 300, 1, 1}, {0.7, 3.5, 0, 0}},
                        {3, {96, 80, 70, 1}, {2, 30, 200, 0}},
                        {4, {40, 36, 30, 9}, {1.5, 1.5, 4, 2}}};
  for (const Case& c : cases) {
    const int64_t n = c.extent[0] * c.extent[1] * c.extent[2] * c.extent[3];
    const std::vector<float> in = random_values(n, fresh_seed());
    const ConstVolumeView iv = make_view(in.data(), c.dims, c.extent);
    for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic,
                       Boundary::Reflect, Boundary::Constant}) {
      SCOPED_TRACE(std::to_string(c.dims) + "D " + to_string(b));
      std::vector<float> cpu(n), gpu(n);
      poison(gpu);
      // The constant boundary with a value other than 0 (each axis's pass pads with it).
      recursive_gaussian(iv, make_view(cpu.data(), c.dims, c.extent), c.sigma,
                         on(Backend::Cpu, b, 1.75f));
      const RunReport r = recursive_gaussian(iv, make_view(gpu.data(), c.dims, c.extent), c.sigma,
                                             on(Backend::Cuda, b, 1.75f));
      EXPECT_EQ(r.backend, Backend::Cuda);
      // The GPU keeps the causal pass in float32 scratch, the CPU in float64.
      EXPECT_LT(relative_l2_error(gpu, std::vector<double>(cpu.begin(), cpu.end())), 1e-5);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
