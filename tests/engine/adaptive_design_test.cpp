// The adaptive filter's filter design (src/engine/adaptive/design.cpp): the fast method (filters
// moved by the symmetries of their directions, preconditioned conjugate gradients, half-spectrum
// transforms for real filters, several threads, the cache) against the straightforward one (each
// filter solved on its own by plain conjugate gradients on the whole grid), computed here; and the
// cache under concurrent calls. DISABLED_Times is the timing harness (run it by hand:
// --gtest_also_run_disabled_tests --gtest_filter='*Times*'); it asserts nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/adaptive/design_method.h"
#include "ndconv/adaptive.h"

namespace ndconv::test {
namespace {

using detail::DesignMethod;
using Filters = std::vector<DesignedFilter>;

Filters quadrature(int dims, int size, const DesignMethod& method) {
  QuadratureDesign design;
  design.size = size;
  return detail::design_quadrature_filters(dims, design, method);
}

Filters reconstruction(int dims, int size, const DesignMethod& method) {
  ReconstructionDesign design;
  design.size = size;
  return detail::design_reconstruction_filters(dims, design, method);
}

double largest_tap(const DesignedFilter& f) {
  double m = 0;
  for (float v : f.real)
    m = std::max(m, std::abs(static_cast<double>(v)));
  for (float v : f.imag)
    m = std::max(m, std::abs(static_cast<double>(v)));
  return m;
}

// Taps within `tolerance` of the largest tap of the filter; the same directions, DC responses
// and errors.
void expect_same_filters(const Filters& got, const Filters& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE("filter " + std::to_string(k));
    ASSERT_EQ(got[k].extent, want[k].extent);
    ASSERT_EQ(got[k].real.size(), want[k].real.size());
    ASSERT_EQ(got[k].imag.size(), want[k].imag.size());
    EXPECT_EQ(got[k].direction, want[k].direction);
    const double scale = largest_tap(want[k]);
    ASSERT_GT(scale, 0);
    double worst = 0;
    for (size_t t = 0; t < want[k].real.size(); ++t) {
      worst = std::max(worst, std::abs(static_cast<double>(got[k].real[t] - want[k].real[t])));
      if (!want[k].imag.empty())
        worst = std::max(worst, std::abs(static_cast<double>(got[k].imag[t] - want[k].imag[t])));
    }
    EXPECT_LE(worst, tolerance * scale);
    EXPECT_NEAR(got[k].dc_response, want[k].dc_response, tolerance);
    EXPECT_EQ(got[k].ideal_dc_response, want[k].ideal_dc_response);
    EXPECT_NEAR(got[k].relative_error, want[k].relative_error, tolerance);
  }
}

struct MethodCase {
  std::string name;
  std::function<void(DesignMethod&)> choose;
};

// The fast method as a whole, and each of its parts alone.
std::vector<MethodCase> method_cases() {
  return {
      {"Fast",
       [](DesignMethod& m) {
         m = DesignMethod{};
         m.cached = false;
       }},
      {"Symmetry", [](DesignMethod& m) { m.reuse_symmetric = true; }},
      {"Preconditioned", [](DesignMethod& m) { m.preconditioned = true; }},
      {"HalfSpectrum", [](DesignMethod& m) { m.half_spectrum = true; }},
      {"Threads", [](DesignMethod& m) { m.threads = 3; }},
  };
}

class DesignMethods : public ::testing::TestWithParam<std::tuple<int, int>> {};

// 2D and 3D at the default sizes, 4D at size 5 (every symmetry of the 4D directions, in
// milliseconds). Both methods stop at a residual of 1e-9 of the right-hand side; the taps agree
// to about 1e-8 of the largest tap, below float precision.
TEST_P(DesignMethods, GiveThePlainMethodsFilters) {
  const auto [dims, which] = GetParam();
  const MethodCase c = method_cases()[which];  // a copy: the vector is a temporary
  DesignMethod method = detail::plain_design_method();
  c.choose(method);
  const int q_size = dims == 4 ? 5 : 7, r_size = dims == 4 ? 5 : 11;
  const DesignMethod plain = detail::plain_design_method();
  {
    SCOPED_TRACE("quadrature");
    expect_same_filters(quadrature(dims, q_size, method), quadrature(dims, q_size, plain), 1e-6);
  }
  {
    SCOPED_TRACE("reconstruction");
    expect_same_filters(reconstruction(dims, r_size, method), reconstruction(dims, r_size, plain),
                        1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dims, DesignMethods,
    ::testing::Combine(::testing::Values(2, 3, 4),
                       ::testing::Range(0, static_cast<int>(method_cases().size()))),
    [](const auto& info) {
      return std::to_string(std::get<0>(info.param)) + "D" +
             method_cases()[std::get<1>(info.param)].name;
    });

// The public calls (cached) from several threads at once, with keys that overflow the cache:
// every result equals the uncached design.
TEST(DesignCache, ConcurrentCallsGetTheUncachedDesign) {
  DesignMethod fresh;
  fresh.cached = false;
  std::vector<Filters> want;
  const int kinds = 10;  // more than the cache holds
  for (int i = 0; i < kinds; ++i) {
    QuadratureDesign design;
    design.size = 5;
    design.centre_frequency = 0.8 + 0.05 * i;
    want.push_back(detail::design_quadrature_filters(2, design, fresh));
  }
  std::vector<std::vector<Filters>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (int i = 0; i < kinds; ++i) {
          QuadratureDesign design;
          design.size = 5;
          design.centre_frequency = 0.8 + 0.05 * ((i + static_cast<int>(t)) % kinds);
          got[t].push_back(design_quadrature_filters(2, design));
        }
    });
  for (std::thread& t : threads)
    t.join();
  for (size_t t = 0; t < got.size(); ++t)
    for (size_t c = 0; c < got[t].size(); ++c) {
      SCOPED_TRACE("thread " + std::to_string(t) + " call " + std::to_string(c));
      expect_same_filters(got[t][c], want[(c + t) % kinds], 0.0);
    }
}

TEST(DesignCache, KeepsBadParametersOut) {
  QuadratureDesign bad;
  bad.size = 8;
  EXPECT_THROW(design_quadrature_filters(3, bad), InvalidArgument);
  EXPECT_THROW(design_quadrature_filters(3, bad), InvalidArgument);
  ReconstructionDesign nan;
  nan.lowpass_sigma = std::nan("");
  EXPECT_THROW(design_reconstruction_filters(3, nan), InvalidArgument);
}

// ---- Timing harness ----------------------------------------------------------------------------

template <typename Run>
double median_seconds(Run run, int runs) {
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Per filter kind, 2D / 3D / 4D, default parameters: the plain method, each part of the fast
// one alone, the fast one on one thread and on every hardware thread, and a cached call.
TEST(AdaptiveDesignTiming, DISABLED_Times) {
  const int runs = 5;
  if (FILE* load = std::fopen("/proc/loadavg", "r")) {
    char text[128] = {};
    if (std::fgets(text, sizeof text, load))
      std::printf("load average: %s", text);
    std::fclose(load);
  }
  std::printf("%u hardware threads; median of %d runs (3 for the plain 4D method)\n",
              std::thread::hardware_concurrency(), runs);
  std::vector<MethodCase> cases = {{"plain", [](DesignMethod&) {}}};
  for (const MethodCase& c : method_cases())
    if (c.name != "Fast")
      cases.push_back(c);
  cases.push_back({"fast, 1 thread", [](DesignMethod& m) {
                     m = DesignMethod{};
                     m.cached = false;
                     m.threads = 1;
                   }});
  cases.push_back(method_cases()[0]);
  // The cache's first call designs; the median is of the calls after it.
  cases.push_back({"cached", [](DesignMethod& m) { m = DesignMethod{}; }});
  for (int dims = 2; dims <= 4; ++dims)
    for (int kind = 0; kind < 2; ++kind) {
      std::printf("%dD %s:", dims, kind == 0 ? "quadrature 7^d" : "reconstruction 11^d");
      for (const MethodCase& c : cases) {
        DesignMethod method = detail::plain_design_method();
        c.choose(method);
        const double s = median_seconds(
            [&] {
              if (kind == 0)
                detail::design_quadrature_filters(dims, QuadratureDesign{}, method);
              else
                detail::design_reconstruction_filters(dims, ReconstructionDesign{}, method);
            },
            c.name == "plain" && dims == 4 ? 3 : runs);
        std::printf(" %s %.4f s;", c.name.c_str(), s);
      }
      std::printf("\n");
    }
}

}  // namespace
}  // namespace ndconv::test
