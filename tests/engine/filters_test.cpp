// The filters of ndconv/filters.h against float64 references written here (plain loops over the
// definitions) on fresh random volumes, outputs poisoned with NaN, in 2D, 3D and 4D for every
// boundary. Kernel specs against their taps written out by hand. The backend is the CPU, or the
// one NDCONV_TEST_DEVICE names (cuda: the GPU runs every engine call of the derived filters).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "ndconv/filters.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;
const Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                Boundary::Periodic, Boundary::Reflect};

Options options_for(Boundary boundary) {
  Options o;
  const char* device = std::getenv("NDCONV_TEST_DEVICE");
  o.backend = device && std::string(device) == "cuda" ? Backend::Cuda : Backend::Cpu;
  o.boundary = boundary;
  return o;
}

// A random volume with a spacing that is not 1, so that physical units are exercised.
struct Volume {
  int dims;
  Index extent;
  std::vector<float> values;
  std::array<double, kMaxDims> spacing{0.5, 1.25, 2.0, 0.1};
  explicit Volume(int d) : dims(d) {
    extent = d == 2 ? Index{13, 11, 1, 1} : d == 3 ? Index{9, 8, 7, 1} : Index{7, 6, 5, 4};
    int64_t n = 1;
    for (int a = 0; a < d; ++a)
      n *= extent[a];
    values = random_values(n, fresh_seed());
  }
  ConstVolumeView view() const { return make_view(values.data(), dims, extent, spacing); }
  std::vector<float> poisoned_output() const {
    std::vector<float> out(values.size());
    poison(out);
    return out;
  }
  VolumeView out_view(std::vector<float>& out) const {
    return make_view(out.data(), dims, extent, spacing);
  }
};

std::string label(int dims, Boundary b) {
  return std::to_string(dims) + "D " + to_string(b);
}

// Gaussian derivative taps written from the definition, independent of the engine's: the
// normalised sampled Gaussian phi(m), times m / s^2 (order 1, correlation order) or
// (m^2 / s^4 - 1 / s^2) (order 2), divided by spacing^order.
std::vector<float> expected_derivative_taps(double sigma, int order, double spacing) {
  const int64_t r = static_cast<int64_t>(std::floor(4 * sigma + 0.5));
  std::vector<double> phi;
  double sum = 0;
  for (int64_t m = -r; m <= r; ++m) {
    phi.push_back(std::exp(-0.5 * m * m / (sigma * sigma)));
    sum += phi.back();
  }
  std::vector<float> taps;
  for (int64_t m = -r; m <= r; ++m) {
    const double p = phi[m + r] / sum, s2 = sigma * sigma;
    const double d = order == 0 ? p : order == 1 ? m / s2 * p : (m * m / (s2 * s2) - 1 / s2) * p;
    taps.push_back(static_cast<float>(d / std::pow(spacing, order)));
  }
  return taps;
}

SeparableFilter expected_derivative_filter(const Volume& v, const std::array<double, 4>& sigma,
                                           const std::array<int, 4>& orders) {
  SeparableFilter f;
  f.dims = v.dims;
  for (int a = 0; a < v.dims; ++a) {
    if (sigma[a] > 0)
      f.taps[a] = expected_derivative_taps(sigma[a], orders[a], v.spacing[a]);
  }
  return f;
}

// Sigmas along the spatial axes, 0 along t.
std::array<double, 4> test_sigma(int dims) {
  return {1.1, 0.8, dims >= 3 ? 1.4 : 0.0, 0.0};
}

TEST(KernelSpec, BuiltInKernelsHaveTheirTaps) {
  const Kernel box = parse_kernel_spec("box:3x1x2", 3);
  EXPECT_EQ(box.extent, (Index{3, 1, 2, 1}));
  for (float t : box.taps)
    EXPECT_FLOAT_EQ(t, 1.0f / 6);

  const Kernel box4 = parse_kernel_spec("box:3", 4);  // spatial axes only
  EXPECT_EQ(box4.extent, (Index{3, 3, 3, 1}));

  const Kernel sobel = parse_kernel_spec("sobel:y", 2);
  EXPECT_EQ(sobel.extent, (Index{3, 3, 1, 1}));
  EXPECT_EQ(sobel.taps, (std::vector<float>{1, 2, 1, 0, 0, 0, -1, -2, -1}));
  const Kernel prewitt = parse_kernel_spec("prewitt:x", 2);
  EXPECT_EQ(prewitt.taps, (std::vector<float>{1, 0, -1, 1, 0, -1, 1, 0, -1}));

  const Kernel laplace = parse_kernel_spec("laplace", 2);
  EXPECT_EQ(laplace.taps, (std::vector<float>{0, 1, 0, 1, -4, 1, 0, 1, 0}));
  const Kernel laplace3 = parse_kernel_spec("laplace", 3);
  ASSERT_EQ(laplace3.taps.size(), 27u);
  double sum = 0;
  for (float t : laplace3.taps)
    sum += t;
  EXPECT_EQ(sum, 0);
  EXPECT_EQ(laplace3.taps[13], -6);
  EXPECT_EQ(laplace3.taps[4], 1);   // z - 1
  EXPECT_EQ(laplace3.taps[12], 1);  // x - 1

  const Kernel gauss = parse_kernel_spec("gauss:1x0", 2);
  EXPECT_EQ(gauss.extent, (Index{9, 1, 1, 1}));
  const std::vector<float> g = gaussian_taps(1.0);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_FLOAT_EQ(gauss.taps[i], g[i]);

  // sphere:1 in 3D: the centre and its 6 face neighbours.
  const Kernel sphere = parse_kernel_spec("sphere:1", 3);
  int inside = 0;
  for (float t : sphere.taps) {
    if (t != 0) {
      EXPECT_FLOAT_EQ(t, 1.0f / 7);
      ++inside;
    }
  }
  EXPECT_EQ(inside, 7);
  EXPECT_EQ(kernel_spec_dims("box:3x3"), 2);
  EXPECT_EQ(kernel_spec_dims("gauss:2"), 3);
}

TEST(KernelSpec, BadSpecsAreRefusedWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"blur:3", "unknown kernel 'blur'"},
      {"box", "give the size"},
      {"box:", "nothing after ':'"},
      {"box:2.5", "whole numbers"},
      {"box:3x3x3x3x3", "5 values for a 3D image"},
      {"box:40", "beyond the dense limit"},
      {"gauss:4", "too wide"},
      {"gauss:-1", "not a non-negative number"},
      {"sobel", "name the axis"},
      {"sobel:t", "not one of the image's spatial axes"},
      {"laplace:2", "takes no values"},
      {"sphere:20", "dense limit"},
  };
  for (const auto& [spec, needle] : cases) {
    try {
      parse_kernel_spec(spec, 3);
      ADD_FAILURE() << spec << ": no error";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << spec << ": " << e.what();
    }
  }
}

TEST(Filters, EllipsoidRadiusPastTheLimitIsRefusedWhateverItsSize) {
  for (double r : {16.0, 1e10, 1e39, 1e300}) {
    EXPECT_THROW(ellipsoid_mean_kernel(3, {r, 1, 1, 0}), InvalidArgument) << r;
  }
  EXPECT_THROW(ellipsoid_mean_kernel(3, {std::nan(""), 1, 1, 0}), InvalidArgument);
  EXPECT_EQ(ellipsoid_mean_kernel(3, {15, 1, 1, 0}).extent[0], 31);
}

TEST(Filters, BoxAndEllipsoidMeanMatchReference) {
  for (int dims = 2; dims <= 4; ++dims) {
    const Volume v(dims);
    for (Boundary b : kBoundaries) {
      SCOPED_TRACE(label(dims, b) + " seed " + std::to_string(fresh_seed()));
      // An even extent too: its anchor follows the operation (convolution by default).
      const Index extent{3, 5, dims >= 3 ? 2 : 1, dims == 4 ? 3 : 1};
      SeparableFilter expected;
      expected.dims = dims;
      for (int a = 0; a < dims; ++a) {
        if (extent[a] > 1)
          expected.taps[a].assign(extent[a], static_cast<float>(1.0 / extent[a]));
      }
      std::vector<float> out = v.poisoned_output();
      filter_separable(v.view(), box_filter(dims, extent), v.out_view(out), options_for(b));
      EXPECT_LT(
          relative_l2_error(out, reference_separable(v.view(), expected, Operation::Convolution, b,
                                                     OutputRegion::Same)),
          kTolerance);

      // Ellipsoid of radii 1.5 x 1 (x 2): the voxels with sum (d/r)^2 <= 1, each 1/count.
      const std::array<double, 4> radius{1.5, 1.0, 2.0, 0.0};
      const Kernel k = ellipsoid_mean_kernel(dims, radius);
      std::vector<float> taps(k.taps.size(), 0.0f);
      int inside = 0;
      for (size_t i = 0; i < taps.size(); ++i) {
        Index at{static_cast<int64_t>(i) % k.extent[0], 0, 0, 0};
        at[1] = static_cast<int64_t>(i) / k.extent[0] % k.extent[1];
        at[2] = static_cast<int64_t>(i) / (k.extent[0] * k.extent[1]) % k.extent[2];
        double r2 = 0;
        for (int a = 0; a < std::min(dims, 3); ++a) {
          const double d = (at[a] - k.extent[a] / 2) / radius[a];
          r2 += d * d;
        }
        if (r2 <= 1) {
          taps[i] = 1;
          ++inside;
        }
      }
      for (float& t : taps)
        t /= static_cast<float>(inside);
      EXPECT_EQ(k.taps, taps);
      EXPECT_EQ(k.extent[0], 3);
      EXPECT_EQ(k.extent[2], dims >= 3 ? 5 : 1);
      filter_dense(v.view(), k.filter(), v.out_view(out), options_for(b));
      DenseFilter dense = k.filter();
      dense.taps = taps.data();
      EXPECT_LT(relative_l2_error(out, reference_dense(v.view(), dense, Operation::Convolution, b,
                                                       OutputRegion::Same)),
                kTolerance);
    }
  }
}

TEST(Filters, GaussianDerivativeTapsFollowScipyAndPhysicalUnits) {
  for (double sigma : {0.7, 1.0, 2.3}) {
    for (int order = 0; order <= 2; ++order) {
      const std::vector<float> got = gaussian_derivative_taps(sigma, order);
      const std::vector<float> want = expected_derivative_taps(sigma, order, 1.0);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-7) << "sigma " << sigma << " order " << order;
    }
  }
  // Derivatives of a ramp 3 x + 0.5 y (physical coordinates, spacing 0.5 x 1.25) away from the
  // edges: 3 and 0.5, second derivatives 0, within what truncating the sampled Gaussian at 4
  // sigma leaves (its second moment is sigma^2 (1 - 3e-4)): the sign and the units.
  const Index extent{40, 30, 1, 1};
  const std::array<double, 4> spacing{0.5, 1.25, 1, 1};
  std::vector<float> ramp(extent[0] * extent[1]);
  for (int64_t y = 0; y < extent[1]; ++y)
    for (int64_t x = 0; x < extent[0]; ++x)
      ramp[y * extent[0] + x] = static_cast<float>(3 * x * spacing[0] + 0.5 * y * spacing[1]);
  const ConstVolumeView in = make_view(static_cast<const float*>(ramp.data()), 2, extent, spacing);
  std::vector<float> out(ramp.size());
  const VolumeView o = make_view(out.data(), 2, extent, spacing);
  const std::array<double, 4> sigma{2, 1.5, 0, 0};
  Options correlation = options_for(Boundary::Replicate);
  correlation.operation = Operation::Correlation;
  const size_t centre = 15 * extent[0] + 20;
  filter_separable(in, gaussian_derivative_filter(2, sigma, {1, 0, 0, 0}, spacing), o, correlation);
  EXPECT_NEAR(out[centre], 3.0, 3e-3);
  filter_separable(in, gaussian_derivative_filter(2, sigma, {0, 1, 0, 0}, spacing), o, correlation);
  EXPECT_NEAR(out[centre], 0.5, 5e-4);
  gradient_magnitude(in, o, sigma, options_for(Boundary::Replicate));
  EXPECT_NEAR(out[centre], std::sqrt(9.25), 3e-3);
  laplacian_of_gaussian(in, o, sigma, options_for(Boundary::Replicate));
  EXPECT_NEAR(out[centre], 0.0, 1e-3 * ramp[centre]);
}

TEST(Filters, DerivativesGradientAndLaplacianMatchReference) {
  for (int dims = 2; dims <= 4; ++dims) {
    const Volume v(dims);
    const int spatial = spatial_axes(dims);
    const std::array<double, 4> sigma = test_sigma(dims);
    for (Boundary b : kBoundaries) {
      SCOPED_TRACE(label(dims, b));
      const size_t n = v.values.size();
      std::vector<double> grad2(n, 0.0), lap(n, 0.0);
      for (int axis = 0; axis < spatial; ++axis) {
        for (int order = 1; order <= 2; ++order) {
          std::array<int, 4> orders{0, 0, 0, 0};
          orders[axis] = order;
          const auto ref =
              reference_separable(v.view(), expected_derivative_filter(v, sigma, orders),
                                  Operation::Correlation, b, OutputRegion::Same);
          std::vector<float> out = v.poisoned_output();
          Options o = options_for(b);
          o.operation = Operation::Correlation;
          filter_separable(v.view(), gaussian_derivative_filter(dims, sigma, orders, v.spacing),
                           v.out_view(out), o);
          EXPECT_LT(relative_l2_error(out, ref), kTolerance)
              << "axis " << axis << " order " << order;
          for (size_t i = 0; i < n; ++i)
            (order == 1 ? grad2 : lap)[i] += order == 1 ? ref[i] * ref[i] : ref[i];
        }
      }
      for (double& g : grad2)
        g = std::sqrt(g);
      std::vector<float> out = v.poisoned_output();
      gradient_magnitude(v.view(), v.out_view(out), sigma, options_for(b));
      EXPECT_LT(relative_l2_error(out, grad2), kTolerance) << "gradient magnitude";
      out = v.poisoned_output();
      laplacian_of_gaussian(v.view(), v.out_view(out), sigma, options_for(b));
      EXPECT_LT(relative_l2_error(out, lap), kTolerance) << "laplacian";
    }
  }
}

TEST(Filters, UnsharpMatchesReference) {
  for (int dims = 2; dims <= 4; ++dims) {
    const Volume v(dims);
    const std::array<double, 4> sigma = test_sigma(dims);
    for (Boundary b : kBoundaries) {
      SCOPED_TRACE(label(dims, b));
      const auto blurred =
          reference_separable(v.view(), expected_derivative_filter(v, sigma, {0, 0, 0, 0}),
                              Operation::Correlation, b, OutputRegion::Same);
      for (double threshold : {0.0, 0.2}) {
        UnsharpParameters p;
        p.sigma_voxels = sigma;
        p.amount = 0.7;
        p.threshold = threshold;
        std::vector<double> ref(v.values.size());
        int64_t kept = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
          const double d = v.values[i] - blurred[i];
          ref[i] = std::abs(d) > threshold ? v.values[i] + 0.7 * d : v.values[i];
          kept += std::abs(d) <= threshold;
        }
        if (threshold > 0) {
          EXPECT_GT(kept, 0) << "the threshold should leave some voxels";
        }
        std::vector<float> out = v.poisoned_output();
        unsharp_mask(v.view(), v.out_view(out), p, options_for(b));
        EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "threshold " << threshold;
      }
    }
  }
}

TEST(Filters, MaskedSmoothingAndMeanAreNormalizedConvolution) {
  for (int dims = 2; dims <= 4; ++dims) {
    const Volume v(dims);
    // A mask with about a third of the voxels out, and non-binary weights (made binary).
    std::vector<float> mask = random_values(static_cast<int64_t>(v.values.size()), fresh_seed());
    for (float& m : mask)
      m = m < -0.33f ? 0.0f : 2.0f + m;
    const ConstVolumeView mv = make_view(static_cast<const float*>(mask.data()), dims, v.extent);
    std::vector<float> masked_in(v.values.size()), binary(v.values.size());
    for (size_t i = 0; i < mask.size(); ++i) {
      binary[i] = mask[i] != 0 ? 1.0f : 0.0f;
      masked_in[i] = mask[i] != 0 ? v.values[i] : 0.0f;
    }
    const ConstVolumeView xm =
        make_view(static_cast<const float*>(masked_in.data()), dims, v.extent);
    const ConstVolumeView bm = make_view(static_cast<const float*>(binary.data()), dims, v.extent);
    const std::array<double, 4> sigma = test_sigma(dims);
    const SeparableFilter gauss = gaussian_filter(dims, sigma);
    const Kernel sphere = ellipsoid_mean_kernel(dims, {1.5, 1.5, 1.0, 0.0});
    for (Boundary b : kBoundaries) {
      SCOPED_TRACE(label(dims, b));
      for (bool keep : {false, true}) {
        MaskedOptions masked;
        masked.outside_value = -7;
        masked.keep_input_outside = keep;
        auto expect = [&](const std::vector<double>& num, const std::vector<double>& den,
                          const std::vector<float>& got) {
          std::vector<double> ref(num.size());
          for (size_t i = 0; i < ref.size(); ++i)
            ref[i] = mask[i] != 0 ? num[i] / den[i] : keep ? v.values[i] : -7.0;
          EXPECT_LT(relative_l2_error(got, ref), kTolerance);
        };
        std::vector<float> out = v.poisoned_output();
        masked_filter_separable(v.view(), mv, gauss, v.out_view(out), masked, options_for(b));
        expect(reference_separable(xm, gauss, Operation::Correlation, b, OutputRegion::Same),
               reference_separable(bm, gauss, Operation::Correlation, b, OutputRegion::Same), out);
        out = v.poisoned_output();
        masked_filter_dense(v.view(), mv, sphere.filter(), v.out_view(out), masked, options_for(b));
        expect(reference_dense(xm, sphere.filter(), Operation::Convolution, b, OutputRegion::Same),
               reference_dense(bm, sphere.filter(), Operation::Convolution, b, OutputRegion::Same),
               out);
      }
    }
  }
}

TEST(Filters, MedianMatchesReference) {
  for (int dims = 2; dims <= 4; ++dims) {
    Volume v(dims);
    // Ties: a few repeated values.
    v.values[3] = v.values[4] = v.values[5];
    const Index radii[] = {{1, 1, 1, 1}, {3, 2, 1, 0}, {0, 3, 0, 1}};
    for (const Index& r : radii) {
      Index radius{0, 0, 0, 0};
      for (int a = 0; a < dims; ++a)
        radius[a] = r[a];
      for (Boundary b : kBoundaries) {
        SCOPED_TRACE(label(dims, b) + " radius " + std::to_string(radius[0]) + "x" +
                     std::to_string(radius[1]) + "x" + std::to_string(radius[2]) + "x" +
                     std::to_string(radius[3]));
        Options o = options_for(b);
        for (int threads : {1, 2}) {
          o.threads = threads;
          std::vector<float> out = v.poisoned_output();
          median_filter(v.view(), v.out_view(out), radius, o);
          const auto ref = reference_median(v.view(), radius, b);
          EXPECT_LT(relative_l2_error(out, ref), 1e-7) << threads << " threads";
        }
      }
    }
  }
}

TEST(Filters, MedianSortsNanAboveNumbersAndRefusesBadRadii) {
  std::vector<float> in{1, 2, std::nanf(""), 4, 5, 6, 7, 8, 9};
  std::vector<float> out(9);
  Options o;
  o.backend = Backend::Cpu;
  o.boundary = Boundary::Replicate;
  median_filter(make_view(static_cast<const float*>(in.data()), 2, {3, 3, 1, 1}),
                make_view(out.data(), 2, {3, 3, 1, 1}), {1, 1, 0, 0}, o);
  const auto ref =
      reference_median(make_view(static_cast<const float*>(in.data()), 2, {3, 3, 1, 1}),
                       {1, 1, 0, 0}, Boundary::Replicate);
  for (size_t i = 0; i < 9; ++i) {
    if (std::isnan(ref[i]))
      EXPECT_TRUE(std::isnan(out[i])) << i;
    else
      EXPECT_EQ(out[i], ref[i]) << i;
  }
  EXPECT_EQ(out[4], 6);  // {1 2 4 5 6 7 8 9 NaN}: the fifth
  EXPECT_THROW(median_filter(make_view(static_cast<const float*>(in.data()), 2, {3, 3, 1, 1}),
                             make_view(out.data(), 2, {3, 3, 1, 1}), {8, 1, 0, 0}, o),
               InvalidArgument);
  EXPECT_THROW(median_filter(make_view(static_cast<const float*>(in.data()), 2, {3, 3, 1, 1}),
                             make_view(out.data(), 2, {3, 3, 1, 1}), {1, 1, 1, 0}, o),
               InvalidArgument);
  // A 4D window whose box does not fit the GPU kernel's shared memory: the CPU takes it under
  // auto, cuda refuses it.
  const Index cube_extent{3, 3, 3, 2};
  std::vector<float> cube = random_values(54, fresh_seed()), cube_out(54);
  const ConstVolumeView cube_in = make_view(static_cast<const float*>(cube.data()), 4, cube_extent);
  o.backend = Backend::Auto;
  EXPECT_EQ(
      median_filter(cube_in, make_view(cube_out.data(), 4, cube_extent), {7, 7, 7, 7}, o).backend,
      Backend::Cpu);
  o.backend = Backend::Cuda;
  EXPECT_THROW(median_filter(cube_in, make_view(cube_out.data(), 4, cube_extent), {7, 7, 7, 7}, o),
               InvalidArgument);
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// The exact Gaussian in float64 taps of radius 6 sigma (no tap limit: the reference has none).
SeparableFilter exact_gaussian(int dims, const std::array<double, 4>& sigma) {
  SeparableFilter f;
  f.dims = dims;
  for (int a = 0; a < dims; ++a) {
    if (!(sigma[a] > 0))
      continue;
    const int64_t r = static_cast<int64_t>(std::ceil(6 * sigma[a]));
    double sum = 0;
    std::vector<double> w;
    for (int64_t m = -r; m <= r; ++m) {
      w.push_back(std::exp(-0.5 * m * m / (sigma[a] * sigma[a])));
      sum += w.back();
    }
    for (double v : w)
      f.taps[a].push_back(static_cast<float>(v / sum));
  }
  return f;
}

// Relative L2 error of the recursive Gaussian against the exact one, on random data.
double recursive_error(int dims, const Index& extent, const std::array<double, 4>& sigma,
                       Boundary b, float value) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  const std::vector<float> in = random_values(n, fresh_seed());
  std::vector<float> out(n);
  poison(out);
  const ConstVolumeView iv = make_view(in.data(), dims, extent);
  Options o;
  o.boundary = b;
  o.boundary_value = value;
  o.backend = Backend::Cpu;
  recursive_gaussian(iv, make_view(out.data(), dims, extent), sigma, o);
  return relative_l2_error(out, reference_separable_passes(iv, exact_gaussian(dims, sigma),
                                                           Operation::Correlation, b, value));
}

TEST(RecursiveGaussian, AccuracyAgainstTheExactGaussian) {
  // White noise is the hardest input (the error is the impulse responses' relative L2
  // difference); the bounds are the third-order filter's own accuracy at each sigma.
  struct Case {
    int dims;
    Index extent;
    std::array<double, 4> sigma;
    double bound;
  };
  // The bounds leave room for the spread over random inputs (a few low frequencies dominate a
  // line smoothed at sigma 200).
  const Case cases[] = {
      {2, {64, 48, 1, 1}, {0.5, 0.8, 0, 0}, 0.2}, {2, {64, 48, 1, 1}, {1, 1.5, 0, 0}, 0.1},
      {3, {24, 20, 16, 1}, {2, 3, 2.5, 0}, 0.06}, {4, {14, 12, 10, 6}, {1.2, 2, 1.5, 0.9}, 0.12},
      {2, {160, 40, 1, 1}, {8, 20, 0, 0}, 0.06},  {2, {900, 6, 1, 1}, {200, 0, 0, 0}, 0.06},
  };

  const uint64_t seed = fresh_seed();
  for (const Case& c : cases) {
    for (Boundary b : kEveryBoundary) {  // the constant one pads each axis's pass with its value
      const float value = test_boundary_value(b, seed);
      const double e = recursive_error(c.dims, c.extent, c.sigma, b, value);
      std::printf("recursive Gaussian %dD sigma %gx%gx%gx%g %s %g: relative L2 %.2e\n", c.dims,
                  c.sigma[0], c.sigma[1], c.sigma[2], c.sigma[3], to_string(b), value, e);
      EXPECT_LT(e, c.bound) << c.dims << "D " << to_string(b);
    }
  }
}

TEST(RecursiveGaussian, KeepsConstantsAndRefusesTinySigmas) {
  // Unit gain and the boundary extension: a constant stays that constant (every boundary but
  // zero; the constant one with that value), along all axes, also for sigmas far beyond the
  // volume.
  const Index extent{17, 9, 5, 1};
  std::vector<float> in(17 * 9 * 5, 2.5f), out(in.size());
  const ConstVolumeView iv = make_view(static_cast<const float*>(in.data()), 3, extent);
  for (Boundary b : {Boundary::Replicate, Boundary::Mirror, Boundary::Periodic, Boundary::Reflect,
                     Boundary::Constant}) {
    poison(out);
    Options o;
    o.boundary = b;
    o.boundary_value = 2.5f;
    o.backend = Backend::Cpu;
    recursive_gaussian(iv, make_view(out.data(), 3, extent), {3, 40, 250, 0}, o);
    for (float v : out)
      ASSERT_NEAR(v, 2.5f, 2e-5) << to_string(b);
  }
  Options o;
  o.backend = Backend::Cpu;
  EXPECT_THROW(recursive_gaussian(iv, make_view(out.data(), 3, extent), {0.3, 1, 1, 0}, o),
               InvalidArgument);
  EXPECT_TRUE(recursive_gaussian_needed({128, 0, 0, 0}, 4.0));
  EXPECT_FALSE(recursive_gaussian_needed({127.5, 0, 0, 0}, 4.0));
}

}  // namespace
}  // namespace ndconv::test
