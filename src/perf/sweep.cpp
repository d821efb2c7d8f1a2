#include "perf/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "engine/cpu_backend.h"
#include "cuda/launch.h"
#include "ndconv/engine.h"
#include "perf/check.h"
#include "perf/context.h"
#include "perf/gpu.h"
#include "perf/outcome.h"
#include "perf/points.h"

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

std::string label_of(const Problem& p, const std::string& point) {
  return std::to_string(p.volume.dims) + "D " + format_shape(p.volume) +
         " k=" + std::to_string(p.k) + " " + point;
}

std::string block_text(const int* block) {
  return std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" + std::to_string(block[2]);
}

// Columns shared by both modes, so that the CSV has one layout: the problem, then which point
// and the kernel it ran (filled by the caller), its resources, its check and its timing.
Json base_row(const char* mode, const std::string& device, const Problem& p, bool is_auto,
              uint64_t seed) {
  const Shape f = cube(p.volume.dims, p.k);
  return Json::object()
      .set("mode", mode)
      .set("device", device)
      .set("dims", p.volume.dims)
      .set("volume", format_shape(p.volume))
      .set("filter", format_shape(f))
      .set("taps", f.count())
      .set("point", is_auto ? "auto" : "forced")
      .set("kernel", "")
      .set("tx", Json())
      .set("ko", Json())
      .set("block", "")
      .set("status", "")
      .set("note", "")
      .set("registers", Json())
      .set("spill_bytes", Json())
      .set("blocks_per_sm", Json())
      .set("occupancy", Json())
      .set("rel_l2_error", Json())
      .set("checked_fraction", Json())
      .set("valid", false)
      .set("seed", std::to_string(seed));
}

void set_kernel(Json& row, const std::string& kernel, Json tx, Json ko, const std::string& block) {
  row.set("kernel", kernel).set("tx", std::move(tx)).set("ko", std::move(ko)).set("block", block);
}

void set_check(Json& row, double err, const CheckPlan& check, bool valid) {
  row.set("status", valid ? "valid" : "invalid")
      .set("rel_l2_error", err)
      .set("checked_fraction", check.covered_fraction)
      .set("valid", valid);
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
      // Per-problem columns, filled by summarize_problem.
      .set("load_factor_theory", kNaN)
      .set("speedup_vs_ko1", kNaN)
      .set("best_point", "")
      .set("auto_point", "")
      .set("auto_loss_pct", kNaN);
}

Json close_problem(std::vector<Json>& rows, std::size_t first, const Problem& p, double fma_flops) {
  return summarize_problem(rows, first, p.volume.dims, format_shape(p.volume), p.volume.count(),
                           p.k, fma_flops);
}

Json config_json(const SweepConfig& c) {
  return Json::object()
      .set("warmup", c.warmup)
      .set("repetitions", c.repetitions)
      .set("flush_l2", c.flush_l2)
      .set("check_budget_fmas", c.check_budget_fmas)
      .set("tolerance", c.tolerance)
      .set("block_shapes", c.block_shapes)
      .set("operation", "correlation")
      .set("boundary", "zero")
      .set("region", "same");
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
  const std::vector<cuda_backend::DenseKernelVariant> variants =
      cuda_backend::dense_kernel_variants(dev);
  if (variants.empty())
    throw Error("the CUDA backend reports no dense kernel instantiations");
  check_compiled_kos(variants, config.kos);
  const std::vector<Problem> problems = problems_of(config);
  std::size_t steps = 0;
  for (const Problem& p : problems)
    steps += sweep_points(variants, p.volume.dims, config.kos, config.block_shapes).size();

  if (progress_out)
    *progress_out << "measuring the device's ceilings on " << facts.name << " ...\n";
  const gpu::Ceilings ceil = gpu::measure_ceilings(dev, 10);
  if (progress_out) {
    char line[160];
    std::snprintf(line, sizeof line, "FP32 FMA peak %.1f TFLOP/s, copy bandwidth %.0f GB/s\n",
                  ceil.fma_flops * 1e-12, ceil.copy_bytes_per_s * 1e-9);
    *progress_out << line;
  }

  SweepResult result;
  Json problem_summaries = Json::array();
  gpu::Timer timer(dev);
  Progress progress(progress_out, static_cast<int>(steps));
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const Problem& pr = problems[pi];
    const uint64_t seed = config.seed ? config.seed + pi : fresh_seed();
    const DenseCase c =
        make_dense_case(pr.volume, cube(pr.volume.dims, pr.k), Boundary::Zero, seed);
    const CheckPlan check = cpu_check(c, config.check_budget_fmas);
    const std::size_t n = static_cast<std::size_t>(pr.volume.count());
    gpu::Buffer din(n), dout(n);
    din.upload(c.input.data(), n);
    const detail::CorrelationProblem prob = dense_problem(c, din.data(), dout.data());
    std::vector<float> host(n);
    std::set<std::string> ran;  // forced kernels already measured (--block-shapes overlaps)
    const std::size_t first = result.rows.size();
    for (const PointRequest& point :
         sweep_points(variants, pr.volume.dims, config.kos, config.block_shapes)) {
      progress.step(label_of(pr, point.label()));
      Json row = base_row("gpu", facts.name, pr, point.is_auto, seed);
      const cuda_backend::DenseKernelRequest& req = point.request;
      dout.poison();
      cuda_backend::LaunchPlan plan;
      try {
        plan = cuda_backend::launch_dense_device(prob, req, dev, timer.stream());
      } catch (const InvalidArgument& e) {
        if (point.is_auto)
          throw;  // the automatic plan serves every problem the engine accepts
        // Recorded as asked for: no kernel ran, so no resources, check or time.
        set_kernel(row, family_name(req.kernel),
                   req.kernel == cuda_backend::DenseKernel::Tiled ? Json(req.tiled_outputs_along_x)
                                                                  : Json(1),
                   Json(req.outputs_per_thread),
                   req.tiled_block_rows ? "rows=" + std::to_string(req.tiled_block_rows) : "");
        row.set("status", "not_implementable").set("note", e.what());
        set_timing(row, pr, nullptr, ceil.fma_flops, ceil.copy_bytes_per_s);
        result.rows.push_back(std::move(row));
        continue;
      }
      timer.synchronize();
      set_kernel(row, plan.family, plan.outputs_along_x, plan.outputs_per_thread,
                 block_text(plan.block));
      if (!point.is_auto && !ran.insert(timed_point(row).key.label()).second)
        continue;  // the same kernel and shape as an earlier forced point
      dout.download(host.data(), n);
      const double err = window_error(check, pr.volume, host);
      const bool valid = err <= config.tolerance;
      const cuda_backend::KernelVariant& res = plan.resources;
      row.set("note", plan.reason)
          .set("registers", res.registers_per_thread)
          .set("spill_bytes", static_cast<int64_t>(res.local_bytes))
          .set("blocks_per_sm", res.blocks_per_sm)
          .set("occupancy", res.occupancy);
      set_check(row, err, check, valid);
      Timing t;
      if (valid) {
        t = timer.time([&](void* s) { cuda_backend::launch_dense_device(prob, req, dev, s); },
                       config.warmup, config.repetitions, config.flush_l2);
      } else {
        ++result.failures;
      }
      set_timing(row, pr, valid ? &t : nullptr, ceil.fma_flops, ceil.copy_bytes_per_s);
      result.rows.push_back(std::move(row));
    }
    problem_summaries.push(close_problem(result.rows, first, pr, ceil.fma_flops));
    if (config.on_problem_done)
      config.on_problem_done(result.rows);
  }
  progress.finish();
  result.summary = summary_head("gpu", config)
                       .set("device", device_json(facts))
                       .set("ceilings", ceilings_json(ceil))
                       .set("config", config_json(config))
                       .set("problems", problem_summaries)
                       .set("overall", overall_outcome(problem_summaries.items(), result.rows));
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
  Progress progress(progress_out, static_cast<int>(problems.size() * (factors.size() + 1)));
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
    const std::size_t first = result.rows.size();
    // Every factor, then the automatic choice (factor 0) as a point of its own.
    std::vector<int> points = factors;
    points.push_back(0);
    for (int f : points) {
      const bool is_auto = f == 0;
      progress.step(label_of(pr, is_auto ? "auto" : "factor " + std::to_string(f)));
      Json row = base_row("cpu", device, pr, is_auto, seed);
      Options o = base;
      o.expert.outputs_per_thread = f;
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
      const RunReport report = filter_dense(in, filter, ov, o);
      set_kernel(row, "cpu", Json(1), Json(report.outputs_per_thread), "");
      const double err = window_error(check, pr.volume, out);
      const bool valid = err <= config.tolerance;
      set_check(row, err, check, valid);
      Timing t;
      if (valid) {
        t = time_host([&] { filter_dense(in, filter, ov, o); }, config.warmup, config.repetitions);
      } else {
        ++result.failures;
      }
      set_timing(row, pr, valid ? &t : nullptr, kNaN, kNaN);
      result.rows.push_back(std::move(row));
    }
    problem_summaries.push(close_problem(result.rows, first, pr, kNaN));
    if (config.on_problem_done)
      config.on_problem_done(result.rows);
  }
  progress.finish();
  result.summary = summary_head("cpu", config)
                       .set("cpu", cpu_json(config.threads))
                       .set("config", config_json(config))
                       .set("reference",
                            "each blocking factor is checked against the CPU backend with its "
                            "automatic factor")
                       .set("problems", problem_summaries)
                       .set("overall", overall_outcome(problem_summaries.items(), result.rows));
  return result;
}

}  // namespace

SweepResult run_sweep(const SweepConfig& config, std::ostream* progress) {
  return config.cpu ? cpu_sweep(config, progress) : gpu_sweep(config, progress);
}

void print_sweep_table(std::ostream& out, const SweepResult& result) {
  char line[320];
  std::snprintf(line, sizeof line,
                "%-4s %-15s %-9s %-7s %3s %3s %-8s %5s %5s %5s %9s %9s %8s %6s %6s %8s\n", "dim",
                "volume", "filter", "kernel", "TX", "KO", "block", "regs", "spill", "occ",
                "median_ms", "min_ms", "GFLOP/s", "%FMA", "%BW", "relerr");
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
    const bool is_auto = s("point") == "auto";
    const TimedPoint p = timed_point(r);
    std::string mark = is_auto ? "  <- auto" : "";
    if (!s("best_point").empty() && p.label() == s("best_point") && std::isfinite(p.ms))
      mark += "  <- best";
    if (s("status") == "not_implementable")
      mark = "  not implementable: " + s("note");
    std::snprintf(
        line, sizeof line, "%-4s %-15s %-9s %-7s %3s %3s %-8s %5s %5s %5s %9s %9s %8s %6s %6s %8s",
        s("dims").c_str(), s("volume").c_str(), s("filter").c_str(), s("kernel").c_str(),
        or_dash(s("tx")).c_str(), or_dash(s("ko")).c_str(), or_dash(s("block")).c_str(),
        or_dash(s("registers")).c_str(), or_dash(s("spill_bytes")).c_str(),
        f("occupancy", "%.2f").c_str(), f("median_ms", "%.4f").c_str(), f("min_ms", "%.4f").c_str(),
        f("gflops", "%.1f").c_str(), f("pct_fma_peak", "%.1f").c_str(),
        f("pct_bandwidth", "%.1f").c_str(), f("rel_l2_error", "%.1e").c_str());
    out << line << mark << "\n";
  }
}

}  // namespace ndconv::perf
