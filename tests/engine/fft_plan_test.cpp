// The GPU's FFT path as far as CI can check it without a GPU (src/cuda/fft/): the transform sizes,
// the shape and memory of a problem, the direct-or-FFT choice of the cost model, and the padding
// plan: the buffer the kernels fill through the very index maps they run (kernels/fft_box.h),
// correlated circularly with the padded taps over the transform's extents, equals the float64
// reference on every output for every boundary, `same` and `valid`; and the spectrum product
// inverts to that correlation (a 1D DFT written out here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/fft/fft_policy.h"
#include "cuda/fft/kernels/fft_box.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using cuda_backend::choose_dense_method;
using cuda_backend::FftPolicy;

bool seven_smooth(int64_t n) {
  for (int p : {2, 3, 5, 7})
    while (n % p == 0)
      n /= p;
  return n == 1;
}

TEST(FftPlan, TransformExtentsAreTheSmallestFastSizes) {
  for (int64_t n = 1; n <= 3000; ++n) {
    for (bool even : {false, true}) {
      const int64_t m = cuda_backend::fft_friendly_extent(n, even);
      ASSERT_GE(m, n);
      ASSERT_TRUE(seven_smooth(m)) << n << " -> " << m;
      if (even) {
        ASSERT_EQ(m % 2, 0) << n;
      }
      for (int64_t smaller = n; smaller < m; ++smaller)
        ASSERT_FALSE(seven_smooth(smaller) && (!even || smaller % 2 == 0)) << n << " -> " << m;
    }
  }
  EXPECT_EQ(cuda_backend::fft_friendly_extent(266, true), 270);  // 256 outputs, 11 taps
  EXPECT_EQ(cuda_backend::fft_friendly_extent(276, true), 280);  // 256 outputs, 21 taps
  EXPECT_EQ(cuda_backend::fft_friendly_extent(11, true), 12);    // x of a real transform: even
  EXPECT_EQ(cuda_backend::fft_friendly_extent(11, false), 12);
  EXPECT_EQ(cuda_backend::fft_friendly_extent(13, false), 14);
}

TEST(FftPlan, TheSizesRuleTakesOneFactorAbove3AtMost) {
  const FftPolicy policy;  // primes up to 5, one of them above 3 (cuFFT's fast sizes, run 18)
  EXPECT_EQ(cuda_backend::fft_transform_extent(266, true, policy), 270);  // 2 3^3 5: 11 taps
  EXPECT_EQ(cuda_backend::fft_transform_extent(270, true, policy), 270);  // 15 taps
  EXPECT_EQ(cuda_backend::fft_transform_extent(276, true, policy),
            288);  // 21 taps: not 280 = 2^3 5 7
  EXPECT_EQ(cuda_backend::fft_transform_extent(289, true, policy), 320);  // not 300 = 2^2 3 5^2
  EXPECT_EQ(cuda_backend::fft_transform_extent(1, false, policy), 2);
  EXPECT_EQ(cuda_backend::fft_transform_extent(25, false, policy), 27);  // not 25 = 5^2
  auto factors_above_3 = [](int64_t m) {
    int count = 0;
    for (int p : {5, 7})
      while (m % p == 0) {
        m /= p;
        ++count;
      }
    return count;
  };
  for (int64_t n = 1; n <= 2000; ++n) {
    for (bool even : {false, true}) {
      const int64_t m = cuda_backend::fft_transform_extent(n, even, policy);
      ASSERT_GE(m, std::max<int64_t>(n, 2));
      ASSERT_TRUE(seven_smooth(m) && m % 7 != 0 && factors_above_3(m) <= 1) << n << " -> " << m;
      if (even) {
        ASSERT_EQ(m % 2, 0) << n;
      }
      for (int64_t smaller = std::max<int64_t>(n, 2); smaller < m; ++smaller)
        ASSERT_FALSE(seven_smooth(smaller) && smaller % 7 != 0 && factors_above_3(smaller) <= 1 &&
                     (!even || smaller % 2 == 0))
            << n << " -> " << m;
    }
  }
  // The shape takes the rule on every axis.
  EXPECT_EQ(cuda_backend::fft_shape(3, {256, 256, 256, 1}, {21, 21, 21, 1}, policy).transform,
            (Index{288, 288, 288, 1}));
}

TEST(FftPlan, ShapeAndMemoryOfA256CubeWith15Taps) {
  const cuda_backend::FftShape s =
      cuda_backend::fft_shape(3, {256, 256, 256, 1}, {15, 15, 15, 1}, FftPolicy{});
  EXPECT_EQ(s.box, (Index{270, 270, 270, 1}));
  EXPECT_EQ(s.transform, (Index{270, 270, 270, 1}));
  EXPECT_EQ(s.row_pitch, 272);
  EXPECT_EQ(s.points, int64_t{270} * 270 * 270);
  EXPECT_EQ(s.complex_points, int64_t{136} * 270 * 270);
  EXPECT_EQ(s.buffer_bytes, std::size_t{136} * 270 * 270 * 16);
  EXPECT_EQ(s.spectrum_bytes, s.buffer_bytes);
  const cuda_backend::FftShape flat =
      cuda_backend::fft_shape(2, {100, 50, 1, 1}, {9, 7, 1, 1}, FftPolicy{});
  EXPECT_EQ(flat.transform, (Index{108, 60, 1, 1}));  // 56 = 2^3 7 is not taken
  EXPECT_EQ(flat.points, 108 * 60);
}

// Plans made for the transform's shape already (the filter's spectrum not yet).
constexpr cuda_backend::FftCached kPlanned{true, false};

TEST(FftPlan, TheCostModelGivesLargeFiltersToTheFftAndSmallOnesToTheKernels) {
  const FftPolicy policy;
  const Index volume{256, 256, 256, 1};
  // With the H200's constants (run 18): 21^3 and 15^3 on 256^3 to the FFT (measured 1.40 against
  // 7.26 ms and 1.06 against 2.37 ms), 11^3 to the kernels (1.05 against 0.95 ms).
  const auto c = choose_dense_method(3, volume, {21, 21, 21, 1}, policy, true, -1, 0, kPlanned);
  EXPECT_TRUE(c.fft) << c.reason;
  EXPECT_GT(c.direct_seconds, policy.min_speedup * c.fft_seconds) << c.reason;
  EXPECT_NE(c.reason.find("FFT "), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("against direct"), std::string::npos) << c.reason;
  const auto c15 = choose_dense_method(3, volume, {15, 15, 15, 1}, policy, true, -1, 0, kPlanned);
  EXPECT_TRUE(c15.fft) << c15.reason;
  for (int k : {3, 5, 7, 11}) {
    const auto c = choose_dense_method(3, volume, {k, k, k, 1}, policy, true, -1, 0, kPlanned);
    EXPECT_FALSE(c.fft) << k << ": " << c.reason;
    EXPECT_EQ(c.reason.rfind("direct: FFT ", 0), 0u) << c.reason;
  }
  // A single call of 15^3 pays for the plans and the spectrum (3.8 ms modelled against 2.65 ms;
  // run 19 measured 4.0 against 2.45 ms):
  // the kernels. The same shape and filter asked for again (a batch) counts them once: the FFT.
  const auto once = choose_dense_method(3, volume, {15, 15, 15, 1}, policy);
  EXPECT_FALSE(once.fft) << once.reason;
  EXPECT_NE(once.reason.find("with its plans made"), std::string::npos) << once.reason;
  cuda_backend::FftCached asked_before;
  asked_before.repeated = true;
  const auto again =
      choose_dense_method(3, volume, {15, 15, 15, 1}, policy, true, -1, 0, asked_before);
  EXPECT_TRUE(again.fft) << again.reason;
  EXPECT_NE(again.reason.find("asked before"), std::string::npos) << again.reason;
  EXPECT_DOUBLE_EQ(again.fft_seconds, c15.fft_seconds - policy.filter_seconds_per_point *
                                                            static_cast<double>(c15.shape.points));
  EXPECT_FALSE(
      choose_dense_method(3, volume, {11, 11, 11, 1}, policy, true, -1, 0, asked_before).fft);
  // The model's constants decide: a direct path as fast as the FFT keeps 21^3 on the kernels.
  FftPolicy fast_direct = policy;
  fast_direct.direct_fmas_per_second = 1e18;
  EXPECT_FALSE(
      choose_dense_method(3, volume, {21, 21, 21, 1}, fast_direct, true, -1, 0, kPlanned).fft);
  // A first call pays for the plans: where that costs more than the FFT saves, the kernels.
  FftPolicy slow_plans = policy;
  slow_plans.plan_seconds = 1.0;
  const auto first = choose_dense_method(3, volume, {21, 21, 21, 1}, slow_plans);
  EXPECT_FALSE(first.fft) << first.reason;
  EXPECT_NE(first.reason.find("with its plans made"), std::string::npos) << first.reason;
  FftPolicy instant_plans = policy;
  instant_plans.plan_seconds = 0;
  EXPECT_TRUE(choose_dense_method(3, volume, {21, 21, 21, 1}, instant_plans).fft);
}

TEST(FftPlan, WhatRulesTheFftOut) {
  const FftPolicy policy;
  const Index volume{256, 256, 256, 1}, filter{21, 21, 21, 1};
  auto reason = [](const cuda_backend::DenseMethodChoice& c) {
    EXPECT_FALSE(c.fft);
    return c.reason;
  };
  EXPECT_NE(reason(choose_dense_method(4, {64, 64, 64, 8}, {9, 9, 9, 3}, policy)).find("2 or 3"),
            std::string::npos);
  FftPolicy off = policy;
  off.allowed = false;
  EXPECT_NE(reason(choose_dense_method(3, volume, filter, off)).find("not allowed"),
            std::string::npos);
  EXPECT_NE(reason(choose_dense_method(3, volume, filter, policy, false)).find("not finite"),
            std::string::npos);
  const auto fits = choose_dense_method(3, volume, filter, policy, true, -1, 0, kPlanned);
  ASSERT_TRUE(fits.fft);
  const double needed = 2.0 * static_cast<double>(fits.shape.buffer_bytes) + 1e6;
  EXPECT_TRUE(choose_dense_method(3, volume, filter, policy, true, needed, 1e6, kPlanned).fft);
  EXPECT_NE(reason(choose_dense_method(3, volume, filter, policy, true, needed - 1, 1e6, kPlanned))
                .find("of device memory"),
            std::string::npos);
  // A cached spectrum needs no second buffer.
  EXPECT_TRUE(
      choose_dense_method(3, volume, filter, policy, true, needed / 2 + 1e6, 1e6, {true, true})
          .fft);
}

// The backend problem of a correlation with `region` (offset -k/2 for same, 0 for valid).
detail::CorrelationProblem correlation(const ConstVolumeView& in, const VolumeView& out,
                                       const Index& filter, const float* taps, OutputRegion region,
                                       Boundary b) {
  detail::CorrelationProblem p;
  p.input = in;
  p.output = out;
  p.filter_extent = filter;
  p.taps = taps;
  p.boundary = b;
  for (int a = 0; a < in.dims; ++a)
    p.offset[a] = region == OutputRegion::Same ? -(filter[a] / 2) : 0;
  return p;
}

// The buffer the pad or taps kernel writes: element (row, x) from the index map `source` into
// `values`, row by row as the kernels walk it.
template <typename Source>
std::vector<double> fill_buffer(const cuda_backend::FftBox& g, const float* values, Source source) {
  std::vector<double> buffer(static_cast<std::size_t>(cuda_backend::fft_buffer_doubles(g)));
  for (int row = 0; row < cuda_backend::fft_buffer_rows(g); ++row) {
    for (int64_t x = 0; x < g.row_pitch; ++x) {
      int64_t p[3];
      cuda_backend::fft_buffer_position(g, row, x, p);
      const int64_t s = source(g, p);
      buffer[static_cast<std::size_t>(row * g.row_pitch + x)] = s < 0 ? 0.0 : values[s];
    }
  }
  return buffer;
}

TEST(FftPlan, ThePaddedBoxCorrelatedCircularlyIsTheReferenceForEveryBoundary) {
  struct Case {
    int dims;
    Index volume, filter;
  };
  const Case cases[] = {{2, {13, 9, 1, 1}, {5, 3, 1, 1}},
                        {2, {6, 5, 1, 1}, {9, 7, 1, 1}},  // filter larger than the volume
                        {3, {7, 6, 5, 1}, {3, 4, 5, 1}},
                        {3, {5, 1, 4, 1}, {3, 1, 2, 1}}};
  const Boundary boundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                 Boundary::Periodic, Boundary::Reflect};
  for (const Case& c : cases) {
    const uint64_t seed = fresh_seed();
    int64_t n = 1, k = 1;
    for (int a = 0; a < c.dims; ++a) {
      n *= c.volume[a];
      k *= c.filter[a];
    }
    const std::vector<float> in = random_values(n, seed);
    const std::vector<float> taps = random_values(k, seed + 1);
    const ConstVolumeView in_view = make_view<const float>(in.data(), c.dims, c.volume);
    const DenseFilter f{c.dims, c.filter, taps.data()};
    for (Boundary b : boundaries) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        bool fits = true;
        for (int a = 0; a < c.dims; ++a)
          fits = fits && c.filter[a] <= c.volume[a];
        if (region == OutputRegion::Valid && !fits)
          continue;
        const Index out_extent = reference_output_extent(in_view, c.filter, region);
        int64_t outputs = 1;
        for (int a = 0; a < c.dims; ++a)
          outputs *= out_extent[a];
        std::vector<float> out(static_cast<std::size_t>(outputs));
        const auto p = correlation(in_view, make_view(out.data(), c.dims, out_extent), c.filter,
                                   taps.data(), region, b);
        const cuda_backend::FftShape shape =
            cuda_backend::fft_shape(c.dims, out_extent, c.filter, FftPolicy{});
        const cuda_backend::FftBox g = cuda_backend::make_fft_box(p, shape);
        const std::vector<double> box = fill_buffer(g, in.data(), cuda_backend::fft_source_index);
        const std::vector<double> w = fill_buffer(g, taps.data(), cuda_backend::fft_tap_index);
        const std::vector<double> ref =
            reference_dense(in_view, f, Operation::Correlation, b, region);
        ASSERT_EQ(ref.size(), out.size());
        // c[o] = sum over the whole transform of w[q] box[(o + q) mod N]: what the spectrum
        // product computes; read at the crop's position.
        const int64_t* N = g.transform;
        double worst = 0;
        for (int64_t i = 0; i < outputs; ++i) {
          int64_t o[3];
          cuda_backend::fft_output_position(g, static_cast<int>(i / g.out_extent[0]),
                                            i % g.out_extent[0], o);
          double sum = 0;
          for (int64_t q2 = 0; q2 < N[2]; ++q2)
            for (int64_t q1 = 0; q1 < N[1]; ++q1)
              for (int64_t q0 = 0; q0 < N[0]; ++q0) {
                const int64_t wq[3] = {q0, q1, q2};
                const int64_t bq[3] = {(o[0] + q0) % N[0], (o[1] + q1) % N[1], (o[2] + q2) % N[2]};
                sum += w[static_cast<std::size_t>(cuda_backend::fft_output_source(g, wq))] *
                       box[static_cast<std::size_t>(cuda_backend::fft_output_source(g, bq))];
              }
          worst = std::max(worst, std::fabs(sum - ref[static_cast<std::size_t>(i)]));
        }
        EXPECT_LT(worst, 1e-12) << c.dims << "D " << to_string(b) << " " << to_string(region)
                                << " seed=" << seed;
      }
    }
  }
}

TEST(FftPlan, TheSpectrumProductInvertsToTheCircularCorrelation) {
  const int n = 12;
  const std::vector<float> xs = random_values(n, fresh_seed());
  const std::vector<float> ws = random_values(n, fresh_seed());
  const double pi = std::acos(-1.0);
  std::vector<double> re(n), im(n), wre(n), wim(n);
  for (int f = 0; f < n; ++f) {
    for (int t = 0; t < n; ++t) {
      const double angle = -2 * pi * f * t / n;
      re[f] += xs[t] * std::cos(angle);
      im[f] += xs[t] * std::sin(angle);
      wre[f] += ws[t] * std::cos(angle);
      wim[f] += ws[t] * std::sin(angle);
    }
    cuda_backend::fft_correlate_spectrum(re[f], im[f], wre[f], wim[f], 1.0 / n);
  }
  for (int o = 0; o < n; ++o) {
    double inverse = 0, direct = 0;
    for (int f = 0; f < n; ++f) {
      const double angle = 2 * pi * f * o / n;
      inverse += re[f] * std::cos(angle) - im[f] * std::sin(angle);
    }
    for (int j = 0; j < n; ++j)
      direct += static_cast<double>(ws[j]) * xs[(o + j) % n];
    EXPECT_NEAR(inverse, direct, 1e-12) << o;
  }
}

}  // namespace
}  // namespace ndconv::test
