// The bench's FFT rows (fft_rows.h).
#include "perf/fft_rows.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>

#include "cuda/launch.h"
#include "ndconv/memory.h"
#include "perf/check.h"
#include "perf/fft_breakdown.h"
#include "perf/gpu.h"

namespace ndconv::perf {

namespace {

using cuda_backend::DenseKernel;

// The accuracy test's bound on the per-voxel error, and the share of a float rounding that the FFT
// may exceed the direct path's error by (it rounds its float64 result to float once).
constexpr double kMaxWeightedError = 1e-5;
constexpr double kOneRounding = 1.0 / (1 << 23);

// Dark data as echo volumes have it: nine voxels in ten in [0, 1e-4), the rest in [0, 1); no
// exact zeros, so that every output's sum |w||x| is positive.
std::vector<float> dark_volume(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) {
    const bool bright = u(rng) < 0.1f;
    do {
      x = u(rng) * (bright ? 1.0f : 1e-4f);
    } while (x == 0.0f);
  }
  return v;
}

struct Path {
  const char* name;
  DenseKernel kernel;
  bool fft_allowed;
};
constexpr Path kPaths[] = {{"direct", DenseKernel::Auto, false},
                           {"fft", DenseKernel::Fft, true},
                           {"auto", DenseKernel::Auto, true}};

// Where the forced FFT's time goes, stage by stage, with the policy's sizes (one list entry; other
// sizes: dev/fft_sizes.cu).
Json fft_breakdowns(const detail::CorrelationProblem& problem,
                    const cuda_backend::FftPolicy& policy, GpuContext& g) {
  constexpr int kRepetitions = 10;
  return Json::array({fft_breakdown(problem, policy, g.dev, g.timer->stream(), kRepetitions)});
}

}  // namespace

void add_fft_workloads(std::vector<Workload>& list) {
  for (int k : {11, 15, 21}) {
    Workload w;
    w.name = "fft3d_" + std::to_string(k);
    w.kind = Workload::Kind::GpuFft;
    w.volume = parse_shape("256x256x256", "volume");
    w.filter = cube(3, k);
    w.target = k == 11 ? -1 : 2.0;
    w.target_text = k == 11 ? "none (the crossover)" : ">= 2x the direct FP32 path, auto-chosen";
    w.description = "3D 256x256x256, dense " + std::to_string(k) +
                    "^3: direct kernels, FFT (float64 cuFFT) and auto";
    list.push_back(w);
  }
}

double max_weighted_error(const Shape& volume, const Shape& filter, const std::vector<float>& input,
                          const std::vector<float>& taps, const std::vector<float>& got,
                          int64_t corner, int64_t random, uint64_t seed) {
  const int dims = volume.dims;
  std::vector<Index> outputs;
  for (int side = 0; side < 2; ++side) {
    Index n{1, 1, 1, 1};
    for (int a = 0; a < dims; ++a)
      n[a] = std::min<int64_t>(corner, volume.extent[a]);
    for (int64_t i = 0; i < n[0] * n[1] * n[2] * n[3]; ++i) {
      Index o{0, 0, 0, 0};
      int64_t rest = i;
      for (int a = 0; a < dims; ++a) {
        const int64_t along = rest % n[a];
        rest /= n[a];
        o[a] = side == 0 ? along : volume.extent[a] - 1 - along;
      }
      outputs.push_back(o);
    }
  }
  std::mt19937_64 rng(seed);
  for (int64_t r = 0; r < random; ++r) {
    Index o{0, 0, 0, 0};
    for (int a = 0; a < dims; ++a)
      o[a] = static_cast<int64_t>(rng() % static_cast<uint64_t>(volume.extent[a]));
    outputs.push_back(o);
  }
  double worst = 0;
  for (const Index& o : outputs) {
    double sum = 0, magnitude = 0;
    const int64_t taps_count = filter.count();
    for (int64_t j = 0; j < taps_count; ++j) {
      int64_t rest = j, index = 0, stride = 1;
      bool inside = true;
      for (int a = 0; a < dims; ++a) {
        const int64_t ja = rest % filter.extent[a];
        rest /= filter.extent[a];
        const int64_t i = o[a] - filter.extent[a] / 2 + ja;
        inside = inside && i >= 0 && i < volume.extent[a];
        index += i * stride;
        stride *= volume.extent[a];
      }
      if (!inside)
        continue;
      const double term = static_cast<double>(taps[static_cast<std::size_t>(j)]) *
                          input[static_cast<std::size_t>(index)];
      sum += term;
      magnitude += std::fabs(term);
    }
    int64_t at = 0, stride = 1;
    for (int a = 0; a < dims; ++a) {
      at += o[a] * stride;
      stride *= volume.extent[a];
    }
    const double g = got[static_cast<std::size_t>(at)];
    if (!std::isfinite(g))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(g - sum) / magnitude);
  }
  return worst;
}

Json fft_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                 int& failures) {
  Json row = Json::object();
  const DenseCase c = make_dense_case(w.volume, w.filter, Boundary::Zero, seed);
  const std::vector<float> dark = dark_volume(w.volume.count(), seed ^ 0x9e3779b9u);
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  gpu::Buffer din(n), ddark(n), dout(n);
  din.upload(c.input.data(), n);
  ddark.upload(dark.data(), n);
  const detail::CorrelationProblem uniform_problem = dense_problem(c, din.data(), dout.data());
  detail::CorrelationProblem dark_problem = uniform_problem;
  dark_problem.input.data = ddark.data();
  std::vector<float> host(n);

  Json paths = Json::object();
  double ms[3] = {0, 0, 0}, errors[3][2] = {{0, 0}, {0, 0}, {0, 0}};
  cuda_backend::LaunchPlan auto_plan;
  for (int i = 0; i < 3; ++i) {
    const Path& path = kPaths[i];
    cuda_backend::DenseKernelRequest request;
    request.kernel = path.kernel;
    cuda_backend::Tuning tuning;
    tuning.fft.allowed = path.fft_allowed;
    auto launch = [&](const detail::CorrelationProblem& p, void* stream) {
      return cuda_backend::launch_dense_device(p, request, g.dev, stream, tuning);
    };
    cuda_backend::LaunchPlan plan;
    const std::vector<float>* inputs[2] = {&c.input, &dark};
    const detail::CorrelationProblem* problems[2] = {&uniform_problem, &dark_problem};
    double first_ms = 0;
    for (int d = 0; d < 2; ++d) {
      dout.poison();
      const auto start = std::chrono::steady_clock::now();
      plan = launch(*problems[d], g.timer->stream());
      g.timer->synchronize();
      if (d == 0)
        first_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      dout.download(host.data(), n);
      errors[i][d] =
          max_weighted_error(w.volume, w.filter, *inputs[d], c.taps, host, 8, 2048, seed + d);
    }
    // The path's first launch in the row (host clock, to the end of its work): for the forced FFT
    // of the first fft row, the process's first use of cuFFT at its size (library, kernels, plans).
    Json p = {{"plan", plan.describe()},
              {"family", plan.family},
              {"first_validation_launch_ms", first_ms},
              {"max_weighted_error_uniform", errors[i][0]},
              {"max_weighted_error_dark", errors[i][1]}};
    if (!(std::max(errors[i][0], errors[i][1]) <= kMaxWeightedError)) {
      ++failures;
      p["error"] = "validation failed";
      paths[path.name] = p;
      continue;
    }
    const Timing t = g.timer->time([&](void* s) { launch(uniform_problem, s); }, cfg.warmup,
                                   cfg.repetitions, cfg.flush_l2);
    ms[i] = t.median_ms;
    p["device_time"] = timing_json(t);
    if (path.kernel == DenseKernel::Fft) {
      // A first launch: the plans made and the filter transformed (host clock, to the end of its
      // work).
      release_cached_memory();
      const auto start = std::chrono::steady_clock::now();
      launch(uniform_problem, g.timer->stream());
      g.timer->synchronize();
      const double first_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const cuda_backend::FftShape shape =
          cuda_backend::fft_shape(3, w.volume.extent, w.filter.extent, tuning.fft);
      const double points = static_cast<double>(shape.points);
      p.update(
          {{"transform", cuda_backend::extent_text(3, shape.transform)},
           {"first_launch_ms", first_s * 1e3},
           {"measured_seconds_per_point", (t.median_ms * 1e-3 - tuning.fft.fixed_seconds) / points},
           {"measured_plan_seconds",
            std::max(0.0, first_s - t.median_ms * 1e-3 -
                              points * tuning.fft.filter_seconds_per_point)}});
      p["breakdown"] = fft_breakdowns(uniform_problem, tuning.fft, g);
    }
    if (path.kernel == DenseKernel::Auto && !path.fft_allowed)
      p["measured_direct_fmas_per_second"] = c.fmas() / (t.median_ms * 1e-3);
    if (path.fft_allowed && path.kernel == DenseKernel::Auto)
      auto_plan = plan;
    paths[path.name] = p;
  }
  const bool all_timed = ms[0] > 0 && ms[1] > 0 && ms[2] > 0;
  const double speedup = all_timed ? ms[0] / ms[2] : 0;
  // The FFT's accuracy against the direct FP32 path's on the same data: no worse, or within the
  // one rounding of its float64 result.
  const bool fft_accurate = errors[1][0] <= std::max(errors[0][0], kOneRounding) &&
                            errors[1][1] <= std::max(errors[0][1], kOneRounding);
  row.update({{"paths", paths},
              {"auto_chose", auto_plan.family},
              {"auto_reason", auto_plan.method_reason},
              {"direct_ms", ms[0]},
              {"fft_ms", ms[1]},
              {"auto_ms", ms[2]},
              {"auto_speedup_vs_direct", speedup},
              {"fft_no_less_accurate_than_direct", fft_accurate},
              {"target_met",
               w.target < 0 ? Json() : Json(all_timed && speedup >= w.target && fft_accurate)}});
  return row;
}

namespace {

// "  FFT 270x270x270 repeat (device/host ms): choose 0.010/0.009 prepare ... total 1.2/0.2".
void print_fft_breakdowns(std::ostream& out, const Json& breakdowns) {
  char value[64];
  for (const Json& b : breakdowns) {
    for (const char* call : {"first", "repeat"}) {
      out << "  FFT " << text(b, "transform") << " " << call << " (device/host ms):";
      for (const auto& [stage, t] : b[call].items()) {
        std::snprintf(value, sizeof value, " %s %.3f/%.3f", stage.c_str(), number(t, "device_ms"),
                      number(t, "host_ms"));
        out << value;
      }
      out << "\n";
    }
  }
}

}  // namespace

void print_fft_rows(std::ostream& out, const Json& rows) {
  char line[320];
  std::snprintf(line, sizeof line, "%-9s %10s %10s %10s %8s %-7s %-4s %11s %11s %11s %11s\n",
                "workload", "direct_ms", "fft_ms", "auto_ms", "speedup", "auto", "met",
                "err_direct", "err_dark", "err_fft", "err_fft_dk");
  out << line;
  for (const Json& r : rows) {
    if (r.contains("error") || !r.contains("paths")) {
      out << text(r, "workload") << ": " << text(r, "error") << "\n";
      continue;
    }
    const Json& p = r["paths"];
    const Json none = Json::object();
    const Json& direct = p.contains("direct") ? p["direct"] : none;
    const Json& fft = p.contains("fft") ? p["fft"] : none;
    const std::string met = text(r, "target_met");
    std::snprintf(
        line, sizeof line,
        "%-9s %10.4f %10.4f %10.4f %8.2f %-7s %-4s %11.2e %11.2e %11.2e %11.2e\n",
        text(r, "workload").c_str(), number(r, "direct_ms"), number(r, "fft_ms"),
        number(r, "auto_ms"), number(r, "auto_speedup_vs_direct"), text(r, "auto_chose").c_str(),
        met == "true"    ? "yes"
        : met == "false" ? "NO"
                         : "-",
        number(direct, "max_weighted_error_uniform"), number(direct, "max_weighted_error_dark"),
        number(fft, "max_weighted_error_uniform"), number(fft, "max_weighted_error_dark"));
    out << line;
    out << "  auto: " << text(r, "auto_reason") << "\n";
    if (fft.contains("breakdown"))
      print_fft_breakdowns(out, fft["breakdown"]);
  }
  out << "err_*: max over sampled voxels of |error| / sum|w||x| against float64 (uniform random; "
         "dark: 90% of voxels below 1e-4).\n";
}

}  // namespace ndconv::perf
