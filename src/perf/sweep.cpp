#include "perf/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "cpu/cpu_backend.h"
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

// Columns shared by both modes, so that the points have one layout: the problem, then which
// point and the kernel it ran (filled by the caller), its resources, its check and its timing.
Json base_row(const char* mode, const std::string& device, const Problem& p, bool is_auto,
              uint64_t seed) {
  const Shape f = cube(p.volume.dims, p.k);
  return {{"mode", mode},
          {"device", device},
          {"dims", p.volume.dims},
          {"volume", format_shape(p.volume)},
          {"filter", format_shape(f)},
          {"taps", f.count()},
          {"point", is_auto ? "auto" : "forced"},
          {"kernel", ""},
          {"tx", nullptr},
          {"ko", nullptr},
          {"block", ""},
          {"status", ""},
          {"note", ""},
          {"registers", nullptr},
          {"spill_bytes", nullptr},
          {"blocks_per_sm", nullptr},
          {"occupancy", nullptr},
          {"rel_l2_error", nullptr},
          {"checked_fraction", nullptr},
          {"valid", false},
          {"seed", std::to_string(seed)}};
}

void set_kernel(Json& row, const std::string& kernel, Json tx, Json ko, const std::string& block) {
  row.update({{"kernel", kernel}, {"tx", std::move(tx)}, {"ko", std::move(ko)}, {"block", block}});
}

void set_timing(Json& row, const Problem& p, const Timing* t, double fma_flops,
                double copy_bytes_per_s) {
  const double voxels = static_cast<double>(p.volume.count());
  const double flops = 2.0 * voxels * static_cast<double>(cube(p.volume.dims, p.k).count());
  const double bytes = 2.0 * voxels * sizeof(float);
  const double s = t ? t->median_ms * 1e-3 : kNaN;
  row.update({{"median_ms", t ? t->median_ms : kNaN},
              {"min_ms", t ? t->min_ms : kNaN},
              {"reps", t ? t->samples_ms.size() : 0},
              {"voxels_per_s", voxels / s},
              {"gflops", flops / s * 1e-9},
              {"pct_fma_peak", 100.0 * flops / s / fma_flops},
              {"pct_bandwidth", 100.0 * bytes / s / copy_bytes_per_s},
              // Per-problem columns, filled by summarize_problem.
              {"load_factor_theory", kNaN},
              {"speedup_vs_ko1", kNaN},
              {"best_point", ""},
              {"auto_point", ""},
              {"auto_loss_pct", kNaN}});
}

// Records a point's check against the CPU backend (relative L2 error `err`) and, where it
// passed, its timing (`time` runs the warm-up and the repetitions); then appends the row.
void add_point(SweepResult& result, Json row, const SweepConfig& config, const Problem& p,
               const CheckPlan& check, double err, const gpu::Ceilings& ceil,
               const std::function<Timing()>& time) {
  const bool valid = err <= config.tolerance;
  row.update({{"status", valid ? "valid" : "invalid"},
              {"rel_l2_error", err},
              {"checked_fraction", check.covered_fraction},
              {"valid", valid}});
  Timing t;
  if (valid)
    t = time();
  else
    ++result.failures;
  set_timing(row, p, valid ? &t : nullptr, ceil.fma_flops, ceil.copy_bytes_per_s);
  result.rows.push_back(std::move(row));
}

// The loop both modes share: each problem's random case (seeded) and CPU check, the points
// `measure` appends to result.rows, then the problem's summary; on_problem_done after each.
template <typename Measure>
std::vector<Json> sweep_problems(const SweepConfig& config, const std::vector<Problem>& problems,
                                 double fma_flops, SweepResult& result, Measure measure) {
  std::vector<Json> summaries;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    const uint64_t seed = config.seed ? config.seed + i : fresh_seed();
    const DenseCase c = make_dense_case(p.volume, cube(p.volume.dims, p.k), Boundary::Zero, seed);
    const CheckPlan check = cpu_check(c, config.check_budget_fmas);
    const std::size_t first = result.rows.size();
    measure(p, c, check);
    summaries.push_back(summarize_problem(result.rows, first, p.volume.dims, format_shape(p.volume),
                                          p.volume.count(), p.k, fma_flops));
    if (config.on_problem_done)
      config.on_problem_done(result.rows);
  }
  return summaries;
}

Json config_json(const SweepConfig& c) {
  return {{"warmup", c.warmup},
          {"repetitions", c.repetitions},
          {"flush_l2", c.flush_l2},
          {"check_budget_fmas", c.check_budget_fmas},
          {"tolerance", c.tolerance},
          {"block_shapes", c.block_shapes},
          {"operation", "correlation"},
          {"boundary", "zero"},
          {"region", "same"}};
}

// The JSON document of a sweep: the tool, the mode, when and how it was run, what it ran on
// (`machine`: "device" and "ceilings", or "cpu"), the configuration, every point, each problem's
// outcome and the totals.
Json sweep_json(const char* mode, const SweepConfig& config, Json machine,
                const SweepResult& result, Json problems) {
  Json doc = {{"tool", "ndconv sweep"},
              {"mode", mode},
              {"date", utc_now()},
              {"command", config.command_line}};
  doc.update(machine);
  doc["config"] = config_json(config);
  doc["points"] = result.rows;
  doc["overall"] = overall_outcome(problems, result.rows);
  doc["problems"] = std::move(problems);
  return doc;
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
  gpu::Timer timer(dev);
  Progress progress(progress_out, static_cast<int>(steps));
  auto measure = [&](const Problem& pr, const DenseCase& c, const CheckPlan& check) {
    const std::size_t n = static_cast<std::size_t>(pr.volume.count());
    gpu::Buffer din(n), dout(n);
    din.upload(c.input.data(), n);
    const detail::CorrelationProblem prob = dense_problem(c, din.data(), dout.data());
    std::vector<float> host(n);
    std::set<std::string> ran;  // forced kernels already measured (--block-shapes overlaps)
    // The study's automatic plan is the direct kernels' (the FFT has its own bench rows).
    const cuda_backend::Tuning direct = cuda_backend::direct_kernels_tuning();
    for (const PointRequest& point :
         sweep_points(variants, pr.volume.dims, config.kos, config.block_shapes)) {
      progress.step(label_of(pr, point.label()));
      Json row = base_row("gpu", facts.name, pr, point.is_auto, c.seed);
      const cuda_backend::DenseKernelRequest& req = point.request;
      dout.poison();
      cuda_backend::LaunchPlan plan;
      try {
        plan = cuda_backend::launch_dense_device(prob, req, dev, timer.stream(), direct);
      } catch (const InvalidArgument& e) {
        if (point.is_auto)
          throw;  // the automatic plan serves every problem the engine accepts
        // Recorded as asked for: no kernel ran, so no resources, check or time.
        set_kernel(row, family_name(req.kernel),
                   req.kernel == cuda_backend::DenseKernel::Tiled ? req.tiled_outputs_along_x : 1,
                   req.outputs_per_thread,
                   req.tiled_block_rows ? "rows=" + std::to_string(req.tiled_block_rows) : "");
        row.update({{"status", "not_implementable"}, {"note", e.what()}});
        set_timing(row, pr, nullptr, ceil.fma_flops, ceil.copy_bytes_per_s);
        result.rows.push_back(std::move(row));
        continue;
      }
      timer.synchronize();
      set_kernel(row, plan.family, plan.outputs_along_x, plan.outputs_per_thread, block_text(plan));
      if (!point.is_auto && !ran.insert(timed_point(row).key.label()).second)
        continue;  // the same kernel and shape as an earlier forced point
      dout.download(host.data(), n);
      const cuda_backend::KernelVariant& res = plan.resources;
      row.update({{"note", plan.reason},
                  {"registers", res.registers_per_thread},
                  {"spill_bytes", res.local_bytes},
                  {"blocks_per_sm", res.blocks_per_sm},
                  {"occupancy", res.occupancy}});
      add_point(
          result, std::move(row), config, pr, check, window_error(check, pr.volume, host), ceil,
          [&] {
            return timer.time(
                [&](void* s) { cuda_backend::launch_dense_device(prob, req, dev, s, direct); },
                config.warmup, config.repetitions, config.flush_l2);
          });
    }
  };
  std::vector<Json> summaries = sweep_problems(config, problems, ceil.fma_flops, result, measure);
  progress.finish();
  result.summary =
      sweep_json("gpu", config, {{"device", device_json(facts)}, {"ceilings", ceilings_json(ceil)}},
                 result, std::move(summaries));
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
  const Options base =
      run_options(Backend::Cpu, Operation::Correlation, Boundary::Zero, config.threads);

  SweepResult result;
  Progress progress(progress_out, static_cast<int>(problems.size() * (factors.size() + 1)));
  const Json cpu = cpu_json(config.threads);
  gpu::Ceilings none;  // no ceilings are measured on the CPU
  none.fma_flops = none.copy_bytes_per_s = kNaN;
  // The check's reference here is the CPU backend with its automatic factor.
  auto measure = [&](const Problem& pr, const DenseCase& c, const CheckPlan& check) {
    const std::size_t n = static_cast<std::size_t>(pr.volume.count());
    std::vector<float> out(n);
    // Every factor, then the automatic choice (factor 0) as a point of its own.
    std::vector<int> points = factors;
    points.push_back(0);
    for (int f : points) {
      const bool is_auto = f == 0;
      progress.step(label_of(pr, is_auto ? "auto" : "factor " + std::to_string(f)));
      Json row = base_row("cpu", text(cpu, "model"), pr, is_auto, c.seed);
      Options o = base;
      o.expert.outputs_per_thread = f;
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
      const RunReport report = filter_dense_case(c, out, o);
      set_kernel(row, "cpu", 1, report.outputs_per_thread, "");
      add_point(result, std::move(row), config, pr, check, window_error(check, pr.volume, out),
                none, [&] {
                  return time_host([&] { filter_dense_case(c, out, o); }, config.warmup,
                                   config.repetitions);
                });
    }
  };
  std::vector<Json> summaries = sweep_problems(config, problems, kNaN, result, measure);
  progress.finish();
  result.summary = sweep_json("cpu", config, {{"cpu", cpu}}, result, std::move(summaries));
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
    auto s = [&](const char* k) { return text(r, k); };
    // A number with printf `spec`, or "-" where the column does not apply or was not measured.
    auto f = [&](const char* k, const char* spec) {
      const double v = number(r, k);
      if (!std::isfinite(v))
        return std::string("-");
      char buf[32];
      std::snprintf(buf, sizeof buf, spec, v);
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
