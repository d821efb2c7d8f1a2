#include "perf/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "engine/cpu_backend.h"
#include "engine/cuda_backend.h"
#include "ndconv/engine.h"
#include "perf/check.h"
#include "perf/context.h"
#include "perf/gpu.h"

namespace ndconv::perf {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::vector<int64_t> default_filters(int dims, bool quick) {
  if (quick) {
    if (dims == 2)
      return {3, 9, 17};
    if (dims == 3)
      return {3, 7, 11};
    return {3, 5};
  }
  if (dims == 2)
    return parse_int_list("3:17:2", "filters");
  if (dims == 3)
    return parse_int_list("3:15:2", "filters");
  return parse_int_list("3:9:2", "filters");
}

SweepConfig study_config() {
  SweepConfig c;
  c.volumes = parse_shape_list("4096x4096,256x256x256,128x128x128x16,160x160x160x20", "volumes");
  return c;
}

SweepConfig quick_config() {
  SweepConfig c;
  c.volumes = parse_shape_list("2048x2048,128x128x128,64x64x64x8", "volumes");
  for (int d = 2; d <= 4; ++d)
    c.filters[d] = default_filters(d, true);
  c.warmup = 1;
  c.repetitions = 3;
  c.check_budget_fmas = 3e8;
  return c;
}

double theoretical_load_factor(int64_t k, int ko) {
  return static_cast<double>(k) * ko / static_cast<double>(k + ko - 1);
}

KoOutcome ko_outcome(const std::vector<std::pair<int, double>>& timed, int auto_ko) {
  KoOutcome o;
  o.auto_ko = auto_ko;
  bool have_auto = false;
  bool have_best = false;
  for (const auto& [ko, ms] : timed) {
    if (!std::isfinite(ms))
      continue;
    if (!have_best || ms < o.best_ms) {
      o.best_ko = ko;
      o.best_ms = ms;
      have_best = true;
    }
    if (ko == auto_ko) {
      o.auto_ms = ms;
      have_auto = true;
    }
  }
  if (!have_best)
    throw std::invalid_argument("no valid timed KO");
  if (!have_auto)
    throw std::invalid_argument("the rule's KO " + std::to_string(auto_ko) + " was not timed");
  o.auto_loss = o.auto_ms / o.best_ms - 1.0;
  return o;
}

namespace {

struct Problem {
  Shape volume;
  int64_t k = 0;
};

std::vector<Problem> problems_of(const SweepConfig& config) {
  std::vector<Problem> list;
  for (const Shape& v : config.volumes) {
    const std::vector<int64_t>& ks =
        config.filters[v.dims].empty() ? default_filters(v.dims, false) : config.filters[v.dims];
    for (int64_t k : ks)
      list.push_back({v, k});
  }
  return list;
}

std::string label_of(const Problem& p, int ko) {
  return std::to_string(p.volume.dims) + "D " + format_shape(p.volume) +
         " k=" + std::to_string(p.k) + " KO=" + std::to_string(ko);
}

// Columns shared by both modes, so that the CSV has one layout.
Json base_row(const char* mode, const std::string& device, const Problem& p, int ko, bool requested,
              uint64_t seed) {
  const Shape f = cube(p.volume.dims, p.k);
  return Json::object()
      .set("mode", mode)
      .set("device", device)
      .set("dims", p.volume.dims)
      .set("volume", format_shape(p.volume))
      .set("filter", format_shape(f))
      .set("taps", f.count())
      .set("ko", ko)
      .set("requested", requested)
      .set("seed", std::to_string(seed));
}

void set_timing(Json& row, const Problem& p, const Timing* t, double fma_flops,
                double copy_bytes_per_s) {
  const double voxels = static_cast<double>(p.volume.count());
  const double flops = 2.0 * voxels * static_cast<double>(cube(p.volume.dims, p.k).count());
  const double bytes = 2.0 * voxels * sizeof(float);
  const double s = t ? t->median_ms * 1e-3 : kNaN;
  row.set("median_ms", t ? t->median_ms : kNaN)
      .set("min_ms", t ? t->min_ms : kNaN)
      .set("reps", t ? static_cast<int>(t->samples_ms.size()) : 0)
      .set("voxels_per_s", voxels / s)
      .set("gflops", flops / s * 1e-9)
      .set("pct_fma_peak", 100.0 * flops / s / fma_flops)
      .set("pct_bandwidth", 100.0 * bytes / s / copy_bytes_per_s)
      .set("load_factor_theory", theoretical_load_factor(p.k, 1));
}

// Fills the per-problem columns (the rule's KO, the best KO, time lost, speedup over KO=1) into
// the rows [first, end) and returns the problem's summary.
Json close_problem(std::vector<Json>& rows, std::size_t first, const Problem& p, int auto_ko,
                   double fma_flops) {
  std::vector<std::pair<int, double>> timed;
  double ko1_ms = kNaN;
  for (std::size_t r = first; r < rows.size(); ++r) {
    const int ko = static_cast<int>(std::stol(rows[r].find("ko")->scalar_text()));
    const Json* m = rows[r].find("median_ms");
    const double ms = m->kind() == Json::Kind::Number && !m->scalar_text().empty()
                          ? std::stod(m->scalar_text())
                          : kNaN;
    timed.emplace_back(ko, ms);
    if (ko == 1)
      ko1_ms = ms;
  }
  Json summary = Json::object()
                     .set("dims", p.volume.dims)
                     .set("volume", format_shape(p.volume))
                     .set("filter", p.k);
  KoOutcome o;
  bool ok = true;
  try {
    o = ko_outcome(timed, auto_ko);
  } catch (const std::exception&) {
    ok = false;
  }
  for (std::size_t r = first; r < rows.size(); ++r) {
    const int ko = static_cast<int>(std::stol(rows[r].find("ko")->scalar_text()));
    rows[r]
        .set("load_factor_theory", theoretical_load_factor(p.k, ko))
        .set("auto_ko", auto_ko)
        .set("best_ko", ok ? o.best_ko : 0)
        .set("auto_loss_pct", ok ? 100.0 * o.auto_loss : kNaN)
        .set("speedup_vs_ko1", ok ? ko1_ms / timed[r - first].second : kNaN);
  }
  if (!ok)
    return summary.set("error", "no valid timing");
  const double flops =
      2.0 * static_cast<double>(p.volume.count()) * cube(p.volume.dims, p.k).count();
  summary.set("best_ko", o.best_ko)
      .set("best_ms", o.best_ms)
      .set("best_gflops", flops / (o.best_ms * 1e-3) * 1e-9)
      .set("best_pct_fma_peak", 100.0 * flops / (o.best_ms * 1e-3) / fma_flops)
      .set("auto_ko", o.auto_ko)
      .set("auto_ms", o.auto_ms)
      .set("auto_loss_pct", 100.0 * o.auto_loss)
      .set("auto_within_5pct", o.auto_loss <= 0.05)
      .set("ko1_ms", ko1_ms)
      .set("speedup_best_vs_ko1", ko1_ms / o.best_ms)
      .set("theoretical_load_factor_best", theoretical_load_factor(p.k, o.best_ko));
  return summary;
}

Json config_json(const SweepConfig& c) {
  return Json::object()
      .set("warmup", c.warmup)
      .set("repetitions", c.repetitions)
      .set("flush_l2", c.flush_l2)
      .set("check_budget_fmas", c.check_budget_fmas)
      .set("tolerance", c.tolerance)
      .set("operation", "correlation")
      .set("boundary", "zero")
      .set("region", "same");
}

Json overall(const std::vector<Json>& problems, int points, int failures) {
  int within = 0, counted = 0;
  for (const Json& p : problems) {
    if (const Json* w = p.find("auto_within_5pct")) {
      ++counted;
      within += w->scalar_text() == "true";
    }
  }
  return Json::object()
      .set("points", points)
      .set("validation_failures", failures)
      .set("problems", counted)
      .set("auto_within_5pct_of_best", within);
}

// The start of a sweep's JSON summary: the tool, the mode, when and how it was run.
Json summary_head(const char* mode, const SweepConfig& config) {
  return Json::object()
      .set("tool", "ndconv sweep")
      .set("mode", mode)
      .set("date", utc_now())
      .set("command", config.command_line);
}

SweepResult gpu_sweep(const SweepConfig& config, std::ostream* progress_out) {
  const int dev = config.cuda_device;
  gpu::require(dev);
  const gpu::DeviceFacts facts = gpu::facts(dev);
  if (progress_out)
    *progress_out << "measuring the device's ceilings on " << facts.name << " ...\n";
  const gpu::Ceilings ceil = gpu::measure_ceilings(dev, 10);
  if (progress_out) {
    char line[160];
    std::snprintf(line, sizeof line, "FP32 FMA peak %.1f TFLOP/s, copy bandwidth %.0f GB/s\n",
                  ceil.fma_flops * 1e-12, ceil.copy_bytes_per_s * 1e-9);
    *progress_out << line;
  }

  const std::vector<Problem> problems = problems_of(config);
  std::map<int, std::map<int, cuda_backend::KernelVariant>> variants;  // dims -> KO -> variant
  std::size_t steps = 0;
  for (const Problem& p : problems) {
    auto& v = variants[p.volume.dims];
    if (v.empty()) {
      for (const auto& kv : cuda_backend::dense_variants(dev, p.volume.dims))
        v[kv.outputs_per_thread] = kv;
      if (v.empty())
        throw Error("the CUDA backend reports no dense kernel instantiations");
    }
    for (int64_t ko : config.kos) {
      if (!v.count(static_cast<int>(ko))) {
        std::string have;
        for (const auto& [k, unused] : v)
          have += (have.empty() ? "" : ",") + std::to_string(k);
        throw InvalidArgument("--ko " + std::to_string(ko) +
                              ": no such instantiation (compiled: " + have + ")");
      }
    }
    steps += config.kos.empty() ? v.size() : config.kos.size();
  }

  SweepResult result;
  Json problem_summaries = Json::array();
  gpu::Timer timer(dev);
  Progress progress(progress_out, static_cast<int>(steps));
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const Problem& pr = problems[pi];
    const auto& var = variants[pr.volume.dims];
    const uint64_t seed = config.seed ? config.seed + pi : fresh_seed();
    const DenseCase c =
        make_dense_case(pr.volume, cube(pr.volume.dims, pr.k), Boundary::Zero, seed);
    const CheckPlan check = cpu_check(c, config.check_budget_fmas);
    const std::size_t n = static_cast<std::size_t>(pr.volume.count());
    gpu::Buffer din(n), dout(n);
    din.upload(c.input.data(), n);
    const detail::CorrelationProblem prob = dense_problem(c, din.data(), dout.data());
    const auto auto_plan = cuda_backend::launch_dense_device(prob, 0, dev, timer.stream());
    timer.synchronize();

    std::vector<int> kos;
    std::set<int> requested;
    for (int64_t ko : config.kos)
      requested.insert(static_cast<int>(ko));
    if (config.kos.empty())
      for (const auto& [ko, unused] : var)
        requested.insert(ko);
    std::set<int> all = requested;
    all.insert(auto_plan.outputs_per_thread);  // the rule's choice is always timed
    std::vector<float> host(n);
    const std::size_t first = result.rows.size();
    for (int ko : all) {
      const auto& kv = var.at(ko);
      Json row = base_row("gpu", facts.name, pr, ko, requested.count(ko) > 0, seed);
      dout.poison();
      const auto plan = cuda_backend::launch_dense_device(prob, ko, dev, timer.stream());
      timer.synchronize();
      dout.download(host.data(), n);
      const double err = window_error(check, pr.volume, host);
      const bool valid = err <= config.tolerance;
      row.set("block", std::to_string(plan.block[0]) + "x" + std::to_string(plan.block[1]) + "x" +
                           std::to_string(plan.block[2]))
          .set("registers", kv.registers_per_thread)
          .set("spill_bytes", static_cast<int64_t>(kv.local_bytes))
          .set("blocks_per_sm", kv.blocks_per_sm)
          .set("occupancy", kv.occupancy)
          .set("rel_l2_error", err)
          .set("checked_fraction", check.covered_fraction)
          .set("valid", valid);
      Timing t;
      if (valid) {
        t = timer.time([&](void* s) { cuda_backend::launch_dense_device(prob, ko, dev, s); },
                       config.warmup, config.repetitions, config.flush_l2);
      } else {
        ++result.failures;
      }
      set_timing(row, pr, valid ? &t : nullptr, ceil.fma_flops, ceil.copy_bytes_per_s);
      result.rows.push_back(std::move(row));
      if (requested.count(ko))
        progress.step(label_of(pr, ko));
    }
    problem_summaries.push(
        close_problem(result.rows, first, pr, auto_plan.outputs_per_thread, ceil.fma_flops));
    if (config.on_problem_done)
      config.on_problem_done(result.rows);
  }
  progress.finish();
  const int points = static_cast<int>(result.rows.size());
  result.summary = summary_head("gpu", config)
                       .set("device", device_json(facts))
                       .set("ceilings", ceilings_json(ceil))
                       .set("config", config_json(config))
                       .set("problems", problem_summaries)
                       .set("overall", overall(problem_summaries.items(), points, result.failures));
  return result;
}

SweepResult cpu_sweep(const SweepConfig& config, std::ostream* progress_out) {
  const std::vector<Problem> problems = problems_of(config);
  std::vector<int> factors;
  const std::vector<int>& supported = cpu_backend::supported_blocking_factors();
  for (int64_t f : config.kos) {
    if (std::find(supported.begin(), supported.end(), f) == supported.end()) {
      std::string have;
      for (int s : supported)
        have += (have.empty() ? "" : ",") + std::to_string(s);
      throw InvalidArgument("--ko " + std::to_string(f) +
                            ": the CPU backend has no such blocking factor (supported: " + have +
                            ")");
    }
    factors.push_back(static_cast<int>(f));
  }
  if (factors.empty())
    factors = supported;
  Options base;
  base.backend = Backend::Cpu;
  base.operation = Operation::Correlation;
  base.boundary = Boundary::Zero;
  base.threads = config.threads;

  SweepResult result;
  Json problem_summaries = Json::array();
  Progress progress(progress_out, static_cast<int>(problems.size() * factors.size()));
  const std::string device = cpu_json(config.threads).find("model")->scalar_text();
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const Problem& pr = problems[pi];
    const uint64_t seed = config.seed ? config.seed + pi : fresh_seed();
    const DenseCase c =
        make_dense_case(pr.volume, cube(pr.volume.dims, pr.k), Boundary::Zero, seed);
    // The reference for the CPU mode is the CPU backend with its automatic factor.
    const CheckPlan check = cpu_check(c, config.check_budget_fmas);
    const std::size_t n = static_cast<std::size_t>(pr.volume.count());
    std::vector<float> out(n);
    const ConstVolumeView in = make_view(c.input.data(), pr.volume.dims, pr.volume.extent);
    const VolumeView ov = make_view(out.data(), pr.volume.dims, pr.volume.extent);
    const DenseFilter filter = dense_filter(c);
    const RunReport auto_report = filter_dense(in, filter, ov, base);
    std::set<int> all(factors.begin(), factors.end());
    all.insert(auto_report.outputs_per_thread);
    const std::size_t first = result.rows.size();
    for (int f : all) {
      const bool requested = std::find(factors.begin(), factors.end(), f) != factors.end();
      Json row = base_row("cpu", device, pr, f, requested, seed);
      Options o = base;
      o.outputs_per_thread = f;
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
      filter_dense(in, filter, ov, o);
      const double err = window_error(check, pr.volume, out);
      const bool valid = err <= config.tolerance;
      row.set("block", "")
          .set("registers", Json())
          .set("spill_bytes", Json())
          .set("blocks_per_sm", Json())
          .set("occupancy", Json())
          .set("rel_l2_error", err)
          .set("checked_fraction", check.covered_fraction)
          .set("valid", valid);
      Timing t;
      if (valid) {
        t = time_host([&] { filter_dense(in, filter, ov, o); }, config.warmup, config.repetitions);
      } else {
        ++result.failures;
      }
      set_timing(row, pr, valid ? &t : nullptr, kNaN, kNaN);
      result.rows.push_back(std::move(row));
      if (requested)
        progress.step(label_of(pr, f));
    }
    problem_summaries.push(
        close_problem(result.rows, first, pr, auto_report.outputs_per_thread, kNaN));
    if (config.on_problem_done)
      config.on_problem_done(result.rows);
  }
  progress.finish();
  const int points = static_cast<int>(result.rows.size());
  result.summary = summary_head("cpu", config)
                       .set("cpu", cpu_json(config.threads))
                       .set("config", config_json(config))
                       .set("reference",
                            "each blocking factor is checked against the CPU backend with its "
                            "automatic factor")
                       .set("problems", problem_summaries)
                       .set("overall", overall(problem_summaries.items(), points, result.failures));
  return result;
}

}  // namespace

SweepResult run_sweep(const SweepConfig& config, std::ostream* progress) {
  return config.cpu ? cpu_sweep(config, progress) : gpu_sweep(config, progress);
}

void print_sweep_table(std::ostream& out, const SweepResult& result) {
  char line[256];
  std::snprintf(line, sizeof line, "%-4s %-18s %-11s %4s %5s %6s %6s %10s %10s %9s %7s %7s %8s\n",
                "dim", "volume", "filter", "KO", "regs", "spill", "occ", "median_ms", "min_ms",
                "GFLOP/s", "%FMA", "%BW", "relerr");
  out << line;
  for (const Json& r : result.rows) {
    auto s = [&](const char* k) { return r.find(k)->scalar_text(); };
    // A number with printf `spec`, or "-" where the column does not apply or was not measured.
    auto f = [&](const char* k, const char* spec) {
      const std::string t = s(k);
      if (t.empty())
        return std::string("-");
      char buf[32];
      std::snprintf(buf, sizeof buf, spec, std::stod(t));
      return std::string(buf);
    };
    auto or_dash = [](std::string t) { return t.empty() ? std::string("-") : t; };
    std::snprintf(line, sizeof line,
                  "%-4s %-18s %-11s %4s %5s %6s %6s %10s %10s %9s %7s %7s %8s%s\n",
                  s("dims").c_str(), s("volume").c_str(), s("filter").c_str(), s("ko").c_str(),
                  or_dash(s("registers")).c_str(), or_dash(s("spill_bytes")).c_str(),
                  f("occupancy", "%.2f").c_str(), f("median_ms", "%.4f").c_str(),
                  f("min_ms", "%.4f").c_str(), f("gflops", "%.1f").c_str(),
                  f("pct_fma_peak", "%.1f").c_str(), f("pct_bandwidth", "%.1f").c_str(),
                  f("rel_l2_error", "%.1e").c_str(), s("ko") == s("auto_ko") ? "  <- rule" : "");
    out << line;
  }
}

}  // namespace ndconv::perf
