// The engine's front end (src/engine/engine.cpp) as a caller sees it: output geometry, filter
// limits and validation messages, Gaussian taps, progress and abort, the backend choice on a
// machine without a GPU, and the CPU backend's option checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cpu/cpu_backend.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

// Expects `f` to throw InvalidArgument whose message contains `needle`.
template <typename F>
void expect_invalid(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning \"" << needle << "\"";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

struct Case {
  std::vector<float> in, out, taps;
  DenseFilter filter;
  Index extent;
  int dims;
  Case(int d, const Index& volume, const Index& k) : extent(volume), dims(d) {
    int64_t n = 1, t = 1;
    for (int a = 0; a < d; ++a) {
      n *= volume[a];
      t *= k[a];
    }
    in = random_values(n, fresh_seed());
    out.assign(n, 0.0f);
    taps = random_values(t, fresh_seed());
    filter.dims = d;
    filter.extent = k;
    filter.taps = taps.data();
  }
  ConstVolumeView input() const { return make_view(in.data(), dims, extent); }
  VolumeView output() { return make_view(out.data(), dims, extent); }
};

Options cpu_options() {
  Options o;
  o.backend = Backend::Cpu;
  return o;
}

TEST(OutputGeometry, SameKeepsExtentsAndValidShrinksWithTheAnchor) {
  const OutputGeometry same =
      output_geometry(3, {10, 9, 8, 1}, {3, 4, 1, 1}, Operation::Correlation, OutputRegion::Same);
  EXPECT_EQ(same.dims, 3);
  EXPECT_EQ(same.extent, (Index{10, 9, 8, 1}));
  EXPECT_EQ(same.start, (Index{0, 0, 0, 0}));
  // Valid: n - k + 1; the first output sits over input voxel c = k / 2 (correlation) or
  // k - 1 - k / 2 (convolution, the flipped filter's anchor), as ITK does.
  const OutputGeometry corr =
      output_geometry(3, {10, 9, 8, 1}, {3, 4, 1, 1}, Operation::Correlation, OutputRegion::Valid);
  EXPECT_EQ(corr.extent, (Index{8, 6, 8, 1}));
  EXPECT_EQ(corr.start, (Index{1, 2, 0, 0}));
  const OutputGeometry conv =
      output_geometry(3, {10, 9, 8, 1}, {3, 4, 1, 1}, Operation::Convolution, OutputRegion::Valid);
  EXPECT_EQ(conv.extent, (Index{8, 6, 8, 1}));
  EXPECT_EQ(conv.start, (Index{1, 1, 0, 0}));
}

TEST(OutputGeometry, EmptyValidRegionIsRejected) {
  expect_invalid(
      [] {
        output_geometry(2, {5, 4, 1, 1}, {3, 5, 1, 1}, Operation::Convolution, OutputRegion::Valid);
      },
      "valid region is empty");
  Case c(2, {5, 4, 1, 1}, {3, 5, 1, 1});
  Options o = cpu_options();
  o.region = OutputRegion::Valid;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), o); },
                 "valid region is empty");
}

TEST(OutputGeometry, RejectsBadDimensions) {
  expect_invalid(
      [] {
        output_geometry(5, {5, 4, 3, 2}, {1, 1, 1, 1}, Operation::Convolution, OutputRegion::Same);
      },
      "dimension 5");
  expect_invalid(
      [] {
        output_geometry(1, {5, 1, 1, 1}, {1, 1, 1, 1}, Operation::Convolution, OutputRegion::Same);
      },
      "dimension 1");
}

TEST(FilterLimits, ThirtyOneTapsPerAxisIn2DAnd3D) {
  for (int dims : {2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    Index k{1, 1, 1, 1};
    Index volume{33, 5, 4, 1};
    k[0] = 31;
    Case ok(dims, volume, k);
    EXPECT_NO_THROW(filter_dense(ok.input(), ok.filter, ok.output(), cpu_options()));
    for (int axis = 0; axis < dims; ++axis) {
      Index big{1, 1, 1, 1};
      big[axis] = 32;
      Case c(dims, volume, big);
      expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), cpu_options()); },
                     "the limit for " + std::to_string(dims) + "D dense filters is 31");
      expect_invalid([&] { validate_dense_filter(c.filter); }, "is 31");
    }
  }
}

TEST(FilterLimits, FifteenTapsPerAxisIn4D) {
  Case ok(4, {4, 3, 2, 16}, {1, 1, 1, 15});
  EXPECT_NO_THROW(filter_dense(ok.input(), ok.filter, ok.output(), cpu_options()));
  for (int axis = 0; axis < 4; ++axis) {
    Index big{1, 1, 1, 1};
    big[axis] = 16;
    Case c(4, {4, 3, 2, 2}, big);
    expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), cpu_options()); },
                   "the limit for 4D dense filters is 15");
  }
}

TEST(FilterLimits, SeparableFiltersUpTo1023Taps) {
  std::vector<float> in = random_values(40 * 3, fresh_seed()), out(40 * 3);
  SeparableFilter f;
  f.dims = 2;
  f.taps[0].assign(1024, 0.001f);
  expect_invalid(
      [&] {
        filter_separable(make_view<const float>(in.data(), 2, {40, 3, 1, 1}), f,
                         make_view(out.data(), 2, {40, 3, 1, 1}), cpu_options());
      },
      "the limit is 1023");
}

TEST(Validation, DimensionMismatch) {
  Case c(3, {6, 5, 4, 1}, {3, 3, 3, 1});
  c.filter.dims = 2;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), cpu_options()); },
                 "the filter is 2D but the volume is 3D");
  Case d(3, {6, 5, 4, 1}, {3, 3, 3, 1});
  VolumeView out2d = make_view(d.out.data(), 2, {6, 5, 1, 1});
  expect_invalid([&] { filter_dense(d.input(), d.filter, out2d, cpu_options()); }, "dimension");
  SeparableFilter s;
  s.dims = 2;
  expect_invalid([&] { filter_separable(d.input(), s, d.output(), cpu_options()); },
                 "separable filter is 2D but the volume is 3D");
}

TEST(Validation, WrongOutputExtents) {
  Case c(3, {6, 5, 4, 1}, {3, 3, 3, 1});
  VolumeView out = make_view(c.out.data(), 3, {6, 4, 4, 1});
  expect_invalid([&] { filter_dense(c.input(), c.filter, out, cpu_options()); },
                 "the output volume has 4 voxels along y, expected 5");
  Options valid = cpu_options();
  valid.region = OutputRegion::Valid;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), valid); }, "expected 4");
}

TEST(Validation, OverlappingViews) {
  Case c(2, {8, 8, 1, 1}, {3, 3, 1, 1});
  VolumeView in_place = make_view(c.in.data(), 2, {8, 8, 1, 1});
  expect_invalid([&] { filter_dense(as_const(in_place), c.filter, in_place, cpu_options()); },
                 "overlap");
  // Partial overlap: the output starts in the middle of the input.
  std::vector<float> buffer = random_values(8 * 8 * 2, fresh_seed());
  VolumeView shifted = make_view(buffer.data() + 8 * 4, 2, {8, 8, 1, 1});
  expect_invalid(
      [&] {
        filter_dense(make_view(static_cast<const float*>(buffer.data()), 2, {8, 8, 1, 1}), c.filter,
                     shifted, cpu_options());
      },
      "overlap");
}

TEST(Validation, SeparableFilterWithTooManyAxes) {
  Case c(2, {8, 8, 1, 1}, {1, 1, 1, 1});
  SeparableFilter s;
  s.dims = 2;
  s.taps[2] = {0.5f, 0.5f};
  expect_invalid([&] { filter_separable(c.input(), s, c.output(), cpu_options()); },
                 "too many axes");
}

TEST(Validation, MissingDataAndBadStrides) {
  Case c(2, {8, 8, 1, 1}, {3, 3, 1, 1});
  ConstVolumeView no_data = c.input();
  no_data.data = nullptr;
  expect_invalid([&] { filter_dense(no_data, c.filter, c.output(), cpu_options()); },
                 "has no data");
  ConstVolumeView zero_stride = c.input();
  zero_stride.stride[1] = 0;
  expect_invalid([&] { filter_dense(zero_stride, c.filter, c.output(), cpu_options()); },
                 "non-positive stride along y");
  c.filter.taps = nullptr;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), cpu_options()); }, "no taps");
}

TEST(Validation, BadTapsAndEmptyAxes) {
  Case c(2, {8, 8, 1, 1}, {3, 3, 1, 1});
  c.taps[4] = std::nanf("");
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), cpu_options()); },
                 "NaN or Inf");
  Case e(2, {8, 8, 1, 1}, {3, 3, 1, 1});
  e.filter.extent[1] = 0;
  expect_invalid([&] { filter_dense(e.input(), e.filter, e.output(), cpu_options()); },
                 "empty along y");
}

TEST(CpuOptions, InvalidBlockingFactorAndThreads) {
  Case c(3, {9, 7, 5, 1}, {3, 3, 3, 1});
  for (int bad : {-1, 3, 5, 16}) {
    Options o = cpu_options();
    o.expert.outputs_per_thread = bad;
    expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), o); },
                   "outputs per thread " + std::to_string(bad));
    SeparableFilter s;
    s.dims = 3;
    s.taps[2] = {0.25f, 0.5f, 0.25f};
    expect_invalid([&] { filter_separable(c.input(), s, c.output(), o); }, "outputs per thread");
  }
  Options o = cpu_options();
  o.threads = -2;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), o); }, "threads");
}

TEST(CpuOptions, ReportDescribesTheRun) {
  EXPECT_EQ(cpu_backend::supported_blocking_factors(), (std::vector<int>{1, 2, 4, 8}));
  Case c(3, {40, 27, 19, 1}, {5, 3, 7, 1});  // enough work for two threads (cpu/tuning.h)
  Options o = cpu_options();
  o.threads = 2;
  const RunReport r = filter_dense(c.input(), c.filter, c.output(), o);
  EXPECT_EQ(r.backend, Backend::Cpu);
  EXPECT_EQ(r.backend_reason, "CPU requested");
  EXPECT_EQ(r.threads, 2);
  // Blocks of a supported factor, or a ring of the filter's 7 taps along z.
  const auto& f = cpu_backend::supported_blocking_factors();
  if (r.outputs_per_thread_reason.rfind("automatic: a ring of", 0) == 0) {
    EXPECT_EQ(r.outputs_per_thread, 7);
  } else {
    EXPECT_NE(std::find(f.begin(), f.end(), r.outputs_per_thread), f.end());
  }
  EXPECT_NE(r.outputs_per_thread_reason.find("automatic"), std::string::npos);
  EXPECT_FALSE(r.device_name.empty());
  EXPECT_GT(r.seconds_total, 0.0);
  // All hardware threads where the work repays them (cpu/tuning.h); a small volume runs on one.
  o.threads = 0;
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Case large(3, {64, 64, 64, 1}, {5, 5, 5, 1});
  EXPECT_EQ(filter_dense(large.input(), large.filter, large.output(), o).threads, hardware);
  Case tiny(3, {8, 8, 8, 1}, {3, 3, 3, 1});
  EXPECT_EQ(filter_dense(tiny.input(), tiny.filter, tiny.output(), o).threads, 1);
}

TEST(Gaussian, TapsSumToOneAreSymmetricWithTheExpectedRadius) {
  for (double sigma : {0.3, 1.0, 2.5, 7.0}) {
    for (double truncate : {2.0, 4.0}) {
      SCOPED_TRACE("sigma " + std::to_string(sigma) + " truncate " + std::to_string(truncate));
      const std::vector<float> t = gaussian_taps(sigma, truncate);
      const int64_t radius = static_cast<int64_t>(std::floor(truncate * sigma + 0.5));
      ASSERT_EQ(static_cast<int64_t>(t.size()), 2 * radius + 1);
      EXPECT_NEAR(std::accumulate(t.begin(), t.end(), 0.0), 1.0, 1e-6);
      for (size_t i = 0; i < t.size(); ++i)
        EXPECT_EQ(t[i], t[t.size() - 1 - i]);
      EXPECT_EQ(*std::max_element(t.begin(), t.end()), t[radius]);
      // Ratios follow exp(-x^2 / (2 sigma^2)).
      if (radius >= 1) {
        EXPECT_NEAR(t[radius + 1] / t[radius], std::exp(-0.5 / (sigma * sigma)), 1e-5);
      }
    }
  }
  expect_invalid([] { gaussian_taps(0.0); }, "sigma");
  expect_invalid([] { gaussian_taps(-1.0); }, "sigma");
  expect_invalid([] { gaussian_taps(1.0, 0.0); }, "truncate");
  expect_invalid([] { gaussian_taps(200.0); }, "the limit is 1023");
  const SeparableFilter f = gaussian_filter(3, {1.0, 0.0, 2.0, 0.0});
  EXPECT_EQ(f.dims, 3);
  EXPECT_EQ(f.taps[0].size(), 9u);
  EXPECT_TRUE(f.taps[1].empty());
  EXPECT_EQ(f.taps[2].size(), 17u);
  EXPECT_NEAR(fwhm_to_sigma(2.0 * std::sqrt(2.0 * std::log(2.0))), 1.0, 1e-12);
}

TEST(Progress, CalledFromTheCallingThreadWithIncreasingFractions) {
  Case c(3, {40, 30, 20, 1}, {5, 5, 5, 1});
  const std::thread::id caller = std::this_thread::get_id();
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    std::vector<double> seen;
    bool other_thread = false;
    Options o = cpu_options();
    o.threads = threads;
    o.progress = [&](double f) {
      other_thread = other_thread || std::this_thread::get_id() != caller;
      seen.push_back(f);
      return true;
    };
    filter_dense(c.input(), c.filter, c.output(), o);
    ASSERT_GE(seen.size(), 2u);
    EXPECT_FALSE(other_thread);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_GE(seen.front(), 0.0);
    EXPECT_LE(seen.back(), 1.0 + 1e-12);
    EXPECT_GT(seen.back(), 0.5);

    SeparableFilter s = gaussian_filter(3, {1.0, 1.0, 1.0, 0.0});
    seen.clear();
    filter_separable(c.input(), s, c.output(), o);
    ASSERT_GE(seen.size(), 3u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_LE(seen.back(), 1.0 + 1e-12);
  }
}

TEST(Progress, ReturningFalseAbortsTheRun) {
  // Every parallel step reports at least once: a dense run at least once (its ring kernels pad
  // and filter in one step; blocks pad, then filter), a separable one once per pass. The dense
  // run's first call and the separable run's second return false; no call follows.
  Case c(3, {40, 30, 20, 1}, {5, 5, 5, 1});
  for (int threads : {1, 3}) {
    int calls = 0;
    Options o = cpu_options();
    o.threads = threads;
    o.progress = [&](double) { return ++calls < 1; };
    EXPECT_THROW(filter_dense(c.input(), c.filter, c.output(), o), Aborted);
    EXPECT_EQ(calls, 1);
    o.expert.outputs_per_thread = 4;  // blocks: two steps
    calls = 0;
    o.progress = [&](double) { return ++calls < 2; };
    EXPECT_THROW(filter_dense(c.input(), c.filter, c.output(), o), Aborted);
    EXPECT_EQ(calls, 2);
    o.expert.outputs_per_thread = 0;
    calls = 0;
    SeparableFilter s = gaussian_filter(3, {1.0, 1.0, 1.0, 0.0});
    EXPECT_THROW(filter_separable(c.input(), s, c.output(), o), Aborted);
    EXPECT_EQ(calls, 2);
  }
}

TEST(Progress, ExceptionFromTheCallbackPropagates) {
  Case c(2, {50, 40, 1, 1}, {3, 3, 1, 1});
  Options o = cpu_options();
  o.threads = 2;
  o.progress = [](double) -> bool { throw std::runtime_error("callback failed"); };
  EXPECT_THROW(filter_dense(c.input(), c.filter, c.output(), o), std::runtime_error);
}

TEST(BackendChoice, AutoFallsBackToTheCpuWithoutAGpu) {
  const CudaStatus status = cuda_status();
  if (status.usable)
    GTEST_SKIP() << "a usable GPU is present; the fallback is not exercised here";
  EXPECT_FALSE(status.reason.empty());
  Case c(2, {12, 9, 1, 1}, {3, 3, 1, 1});
  Options o;  // Backend::Auto
  const RunReport r = filter_dense(c.input(), c.filter, c.output(), o);
  EXPECT_EQ(r.backend, Backend::Cpu);
  // So small a volume is the CPU's by the cost model, before the GPU is looked for.
  EXPECT_NE(r.backend_reason.find("auto: CPU estimated faster"), std::string::npos)
      << r.backend_reason;
  o.backend = Backend::Cuda;
  expect_invalid([&] { filter_dense(c.input(), c.filter, c.output(), o); },
                 "CUDA backend unavailable");
}

TEST(Names, ToStringCoversEveryEnumerator) {
  EXPECT_STREQ(to_string(Boundary::Zero), "zero");
  EXPECT_STREQ(to_string(Boundary::Replicate), "replicate");
  EXPECT_STREQ(to_string(Boundary::Mirror), "mirror");
  EXPECT_STREQ(to_string(Boundary::Periodic), "periodic");
  EXPECT_STREQ(to_string(Boundary::Reflect), "reflect");
  EXPECT_STREQ(to_string(Boundary::Constant), "constant");
  EXPECT_STREQ(to_string(OutputRegion::Same), "same");
  EXPECT_STREQ(to_string(OutputRegion::Valid), "valid");
  EXPECT_STREQ(to_string(Operation::Convolution), "convolution");
  EXPECT_STREQ(to_string(Operation::Correlation), "correlation");
  EXPECT_STREQ(to_string(Backend::Auto), "auto");
  EXPECT_STREQ(to_string(Backend::Cpu), "cpu");
  EXPECT_STREQ(to_string(Backend::Cuda), "cuda");
  // A value outside the enum (e.g. cast from a bad integer) names itself "?", never out of bounds.
  EXPECT_STREQ(to_string(static_cast<Boundary>(kBoundaryCount)), "?");
  EXPECT_STREQ(to_string(static_cast<Backend>(-1)), "?");
}

}  // namespace
}  // namespace ndconv::test
