#include "perf/check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "cpu/cpu_backend.h"
#include "ndconv/engine.h"

namespace ndconv::perf {

std::vector<float> random_volume(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) {
    do {
      x = u(rng);
    } while (x == 0.0f);
  }
  return v;
}

uint64_t fresh_seed() {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return static_cast<uint64_t>(now) * 0x9E3779B97F4A7C15ull + (counter++ << 17);
}

namespace {

int64_t anchor(int64_t k) {
  return k / 2;  // correlation, `same` region: as the engine's front end
}

}  // namespace

RandomInput make_random_input(const Shape& volume, Boundary boundary, uint64_t seed) {
  return {volume, boundary, random_volume(volume.count(), seed), seed};
}

Options run_options(Backend backend, Operation operation, Boundary boundary, int threads) {
  Options o;
  o.backend = backend;
  o.operation = operation;
  o.boundary = boundary;
  o.threads = threads;
  return o;
}

DenseCase make_dense_case(const Shape& volume, const Shape& filter, Boundary boundary,
                          uint64_t seed) {
  DenseCase c;
  static_cast<RandomInput&>(c) = make_random_input(volume, boundary, seed);
  c.filter = filter;
  // Taps scaled so that outputs stay of order 1 whatever the filter size.
  c.taps = random_volume(filter.count(), seed ^ 0x5bd1e995u);
  const float scale = 1.0f / std::sqrt(static_cast<float>(filter.count()));
  for (float& t : c.taps)
    t *= scale;
  return c;
}

detail::CorrelationProblem dense_problem(const DenseCase& c, const float* input, float* output) {
  detail::CorrelationProblem p;
  p.input = make_view(input, c.volume.dims, c.volume.extent);
  p.output = make_view(output, c.volume.dims, c.volume.extent);
  p.filter_extent = c.filter.extent;
  p.taps = c.taps.data();
  p.boundary = c.boundary;
  for (int a = 0; a < c.volume.dims; ++a)
    p.offset[a] = -anchor(c.filter.extent[a]);
  return p;
}

DenseFilter dense_filter(const DenseCase& c) {
  DenseFilter f;
  f.dims = c.volume.dims;
  f.extent = c.filter.extent;
  f.taps = c.taps.data();
  return f;
}

RunReport filter_dense_case(const DenseCase& c, std::vector<float>& output,
                            const Options& options) {
  return filter_dense(make_view(c.input.data(), c.volume.dims, c.volume.extent), dense_filter(c),
                      make_view(output.data(), c.volume.dims, c.volume.extent), options);
}

double SeparableCase::fmas() const {
  double per_voxel = 0;
  for (int a = 0; a < volume.dims; ++a)
    per_voxel += static_cast<double>(taps[a].size());
  return per_voxel * static_cast<double>(volume.count());
}

SeparableCase make_separable_case(const Shape& volume,
                                  const std::array<std::vector<float>, kMaxDims>& taps,
                                  Boundary boundary, uint64_t seed) {
  SeparableCase c;
  static_cast<RandomInput&>(c) = make_random_input(volume, boundary, seed);
  c.taps = taps;
  return c;
}

detail::SeparableProblem separable_problem(const SeparableCase& c, const float* input,
                                           float* output) {
  detail::SeparableProblem p;
  p.input = make_view(input, c.volume.dims, c.volume.extent);
  p.output = make_view(output, c.volume.dims, c.volume.extent);
  p.boundary = c.boundary;
  for (int a = 0; a < c.volume.dims; ++a) {
    p.taps[a] = c.taps[a];
    if (!p.taps[a].empty())
      p.offset[a] = -anchor(static_cast<int64_t>(p.taps[a].size()));
  }
  return p;
}

std::vector<CheckWindow> choose_windows(const Shape& volume, double fmas_per_voxel,
                                        double budget_fmas,
                                        const std::array<bool, kMaxDims>& shrinkable) {
  const int last = volume.dims - 1;
  Shape box = volume;
  auto cost = [&] { return static_cast<double>(box.count()) * fmas_per_voxel; };
  // Keep up to 40 planes along the blocked (last) axis, enough for several thread blocks of any
  // KO, and shrink the axes in between first; x stays whole (it is cheap and it is the coalesced
  // axis); the last axis shrinks further only when nothing else is left.
  if (cost() > budget_fmas && shrinkable[last])
    box.extent[last] = std::min<int64_t>(box.extent[last], 40);
  for (int a = last - 1; a >= 1 && cost() > budget_fmas; --a) {
    if (!shrinkable[a])
      continue;
    const double other = cost() / static_cast<double>(box.extent[a]);
    box.extent[a] = std::max<int64_t>(
        1, std::min<int64_t>(box.extent[a], static_cast<int64_t>(budget_fmas / other)));
  }
  if (cost() > budget_fmas && shrinkable[last]) {
    const double other = cost() / static_cast<double>(box.extent[last]);
    box.extent[last] = std::max<int64_t>(
        1, std::min<int64_t>(box.extent[last], static_cast<int64_t>(budget_fmas / other)));
  }
  std::vector<CheckWindow> windows(1);
  windows[0].box = box;
  if (!(box == volume)) {
    CheckWindow end;
    end.box = box;
    for (int a = 0; a < volume.dims; ++a)
      end.start[a] = volume.extent[a] - box.extent[a];
    windows.push_back(end);
  }
  return windows;
}

namespace {

// Fills each window's expected values: `whole` (the problem over the whole output) narrowed to
// the window (output view of the box, offset moved by the box start; axes kept whole start at 0)
// and run by `run_on_cpu`; then the fraction of the output the windows cover.
template <typename TProblem, typename TRunOnCpu>
void compute_windows(CheckPlan& plan, const Shape& volume, const TProblem& whole,
                     TRunOnCpu run_on_cpu) {
  double covered = 0;
  for (CheckWindow& w : plan.windows) {
    w.expected.assign(static_cast<std::size_t>(w.box.count()), 0.0f);
    TProblem p = whole;
    p.output = make_view(w.expected.data(), volume.dims, w.box.extent);
    for (int a = 0; a < volume.dims; ++a)
      p.offset[a] += w.start[a];
    Options options;
    RunReport report;
    run_on_cpu(p, options, report);
    covered += static_cast<double>(w.box.count());
  }
  plan.covered_fraction = std::min(1.0, covered / static_cast<double>(volume.count()));
}

}  // namespace

CheckPlan cpu_check(const DenseCase& c, double budget_fmas) {
  CheckPlan plan;
  plan.windows = choose_windows(c.volume, static_cast<double>(c.filter.count()), budget_fmas,
                                {true, true, true, true});
  compute_windows(plan, c.volume, dense_problem(c, c.input.data(), nullptr),
                  cpu_backend::run_dense);
  return plan;
}

CheckPlan cpu_check(const SeparableCase& c, double budget_fmas) {
  CheckPlan plan;
  std::array<bool, kMaxDims> shrinkable{false, false, false, false};
  double per_voxel = 0;
  for (int a = 0; a < c.volume.dims; ++a) {
    shrinkable[a] = !c.taps[a].empty();
    per_voxel += static_cast<double>(c.taps[a].size());
  }
  plan.windows = choose_windows(c.volume, per_voxel, budget_fmas, shrinkable);
  compute_windows(plan, c.volume, separable_problem(c, c.input.data(), nullptr),
                  cpu_backend::run_separable);
  return plan;
}

double window_error(const CheckPlan& plan, const Shape& volume, const std::vector<float>& output) {
  return window_error(plan, volume, output.data());
}

double window_error(const CheckPlan& plan, const Shape& volume, const float* output) {
  double diff = 0, ref = 0;
  const ConstVolumeView out = make_view(output, volume.dims, volume.extent);
  for (const CheckWindow& w : plan.windows) {
    const int64_t n = w.box.count();
    for (int64_t i = 0; i < n; ++i) {
      Index local{0, 0, 0, 0}, global{0, 0, 0, 0};
      int64_t rest = i;
      for (int a = 0; a < volume.dims; ++a) {
        local[a] = rest % w.box.extent[a];
        rest /= w.box.extent[a];
        global[a] = local[a] + w.start[a];
      }
      const double got = out.at(global);
      const double exp = w.expected[static_cast<std::size_t>(i)];
      if (!std::isfinite(got))
        return std::numeric_limits<double>::infinity();
      diff += (got - exp) * (got - exp);
      ref += exp * exp;
    }
  }
  return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

}  // namespace ndconv::perf
