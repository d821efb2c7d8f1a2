#include "perf/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <ostream>

#include "engine/cpu_backend.h"
#include "cuda/launch.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "perf/context.h"
#include "perf/gpu.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using Kind = Workload::Kind;

std::string block_text(const cuda_backend::LaunchPlan& p) {
  return std::to_string(p.block[0]) + "x" + std::to_string(p.block[1]) + "x" +
         std::to_string(p.block[2]);
}

// What a launch ran: kernel, KO, shape and the launched kernel's resources (separable: its first
// pass's).
Json plan_json(const cuda_backend::LaunchPlan& plan) {
  return Json::object()
      .set("kernel", plan.kernel)
      .set("ko", plan.outputs_per_thread)
      .set("ko_reason", plan.reason)
      .set("block", block_text(plan))
      .set("launches", plan.launches)
      .set("registers", plan.resources.registers_per_thread)
      .set("spill_bytes", static_cast<int64_t>(plan.resources.local_bytes))
      .set("occupancy", plan.resources.occupancy)
      .set("describe", plan.describe());
}

Json timing_json(const Timing& t) {
  return Json::object()
      .set("median_ms", t.median_ms)
      .set("min_ms", t.min_ms)
      .set("repetitions", static_cast<int>(t.samples_ms.size()));
}

std::array<std::vector<float>, kMaxDims> gaussian_axes(int dims, double sigma) {
  std::array<std::vector<float>, kMaxDims> taps;
  for (int a = 0; a < dims; ++a)
    taps[a] = gaussian_taps(sigma);
  return taps;
}

const Boundary kOtherBoundaries[] = {Boundary::Replicate, Boundary::Mirror, Boundary::Periodic};

struct GpuContext {
  int dev = 0;
  gpu::DeviceFacts facts;
  gpu::Ceilings ceil;
  gpu::Timer* timer = nullptr;
};

// Validates one device launch (output poisoned first) and returns the relative L2 error.
template <typename Launch>
double validate_launch(GpuContext& g, gpu::Buffer& out, const CheckPlan& check, const Shape& vol,
                       Launch launch) {
  out.poison();
  launch(g.timer->stream());
  g.timer->synchronize();
  std::vector<float> host(static_cast<std::size_t>(vol.count()));
  out.download(host.data(), host.size());
  return window_error(check, vol, host);
}

// A case's device launch under one boundary (returning its plan), and the CPU check of its output.
struct BoundaryLaunch {
  CheckPlan check;
  std::function<cuda_backend::LaunchPlan(void*)> launch;
};

// Validates, then times, the launch under each boundary other than zero: the row's
// other_boundaries (each with its plan, which differs from zero's where the launch pads its
// input), and the worst extra time against the zero boundary's `zero_ms`.
void add_other_boundaries(Json& row, const BenchConfig& cfg, GpuContext& g, gpu::Buffer& out,
                          const Shape& volume, double zero_ms, int& failures,
                          const std::function<BoundaryLaunch(Boundary)>& launch_for) {
  Json other = Json::object();
  double worst = 0;
  for (Boundary b : kOtherBoundaries) {
    const BoundaryLaunch run = launch_for(b);
    cuda_backend::LaunchPlan plan;
    const double e =
        validate_launch(g, out, run.check, volume, [&](void* s) { plan = run.launch(s); });
    Json o = Json::object().set("rel_l2_error", e).set("plan", plan_json(plan));
    if (e <= cfg.tolerance) {
      const Timing tb = g.timer->time(run.launch, cfg.warmup, cfg.repetitions, cfg.flush_l2);
      const double extra = tb.median_ms / zero_ms - 1.0;
      worst = std::max(worst, extra);
      o.set("median_ms", tb.median_ms).set("extra_vs_zero_pct", 100.0 * extra);
    } else {
      ++failures;
      o.set("error", "validation failed");
    }
    other.set(to_string(b), o);
  }
  row.set("other_boundaries", other)
      .set("worst_boundary_extra_pct", 100.0 * worst)
      .set("boundaries_within_10pct", worst <= 0.10);
}

using EngineCall =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;

// Times the whole engine call on host buffers (uploads and downloads included) and checks its
// output: the row's call_time; `report` is the engine's report of the last call.
Json call_time_json(const Shape& volume, const std::vector<float>& input, const BenchConfig& cfg,
                    const GpuContext& g, const CheckPlan& check, const EngineCall& call,
                    RunReport& report, int& failures) {
  std::vector<float> out(static_cast<std::size_t>(volume.count()));
  const ConstVolumeView in = make_view(input.data(), volume.dims, volume.extent);
  const VolumeView ov = make_view(out.data(), volume.dims, volume.extent);
  Options o;
  o.backend = Backend::Cuda;
  o.cuda_device = g.dev;
  o.operation = Operation::Correlation;
  o.boundary = Boundary::Zero;
  const Timing call_timing = time_host([&] { report = call(in, ov, o); }, 1, cfg.call_repetitions);
  const double call_err = window_error(check, volume, out);
  if (!(call_err <= cfg.tolerance))
    ++failures;
  return timing_json(call_timing)
      .set("rel_l2_error", call_err)
      .set("upload_ms", report.seconds_upload * 1e3)
      .set("compute_ms", report.seconds_compute * 1e3)
      .set("download_ms", report.seconds_download * 1e3)
      .set("slabs", report.slabs);
}

Json dense_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                   int& failures) {
  Json row = Json::object();
  DenseCase c = make_dense_case(w.volume, w.filter, Boundary::Zero, seed);
  const double flops = 2.0 * c.fmas();
  const double voxels = static_cast<double>(w.volume.count());
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  gpu::Buffer din(n), dout(n);
  din.upload(c.input.data(), n);
  auto problem = [&](const DenseCase& dc) { return dense_problem(dc, din.data(), dout.data()); };

  CheckPlan check = cpu_check(c, cfg.check_budget_fmas);
  detail::CorrelationProblem p = problem(c);
  cuda_backend::LaunchPlan plan;
  const double err = validate_launch(g, dout, check, w.volume, [&](void* s) {
    plan = cuda_backend::launch_dense_device(p, 0, g.dev, s);
  });
  row.set("rel_l2_error", err).set("checked_fraction", check.covered_fraction);
  if (!(err <= cfg.tolerance)) {
    ++failures;
    return row.set("error", "validation failed");
  }
  const Timing t =
      g.timer->time([&](void* s) { cuda_backend::launch_dense_device(p, 0, g.dev, s); }, cfg.warmup,
                    cfg.repetitions, cfg.flush_l2);
  const double s = t.median_ms * 1e-3;
  const double pct = 100.0 * flops / s / g.ceil.fma_flops;
  row.set("device_time", timing_json(t))
      .set("voxels_per_s", voxels / s)
      .set("gflops", flops / s * 1e-9)
      .set("pct_fma_peak", pct)
      .set("compute_floor_ms", flops / g.ceil.fma_flops * 1e3)
      .set("target_met", w.target < 0 ? Json() : Json(pct >= w.target))
      .set("plan", plan_json(plan));

  if (cfg.all_kos) {
    Json kos = Json::array();
    std::vector<std::pair<int, double>> timed;
    for (const auto& v : cuda_backend::dense_variants(g.dev, w.volume.dims)) {
      const int ko = v.outputs_per_thread;
      cuda_backend::LaunchPlan ko_plan;
      const double e = validate_launch(g, dout, check, w.volume, [&](void* st) {
        ko_plan = cuda_backend::launch_dense_device(p, ko, g.dev, st);
      });
      // The resources of the kernel that ran: a forced KO runs the tiled kernel where it has one.
      const cuda_backend::KernelVariant& res = ko_plan.resources;
      Json k = Json::object()
                   .set("ko", ko)
                   .set("kernel", ko_plan.kernel)
                   .set("registers", res.registers_per_thread)
                   .set("spill_bytes", static_cast<int64_t>(res.local_bytes))
                   .set("occupancy", res.occupancy)
                   .set("rel_l2_error", e);
      if (e <= cfg.tolerance) {
        const Timing tk =
            g.timer->time([&](void* st) { cuda_backend::launch_dense_device(p, ko, g.dev, st); },
                          cfg.warmup, cfg.repetitions, cfg.flush_l2);
        k.set("median_ms", tk.median_ms)
            .set("pct_fma_peak", 100.0 * flops / (tk.median_ms * 1e-3) / g.ceil.fma_flops);
        timed.emplace_back(ko, tk.median_ms);
      } else {
        ++failures;
        k.set("error", "validation failed");
      }
      kos.push(k);
    }
    // The rule's KO was timed above under the same conditions; use that time for it.
    for (auto& [ko, ms] : timed)
      if (ko == plan.outputs_per_thread)
        ms = t.median_ms;
    if (std::none_of(timed.begin(), timed.end(),
                     [&](const auto& x) { return x.first == plan.outputs_per_thread; }))
      timed.emplace_back(plan.outputs_per_thread, t.median_ms);
    const KoOutcome o = ko_outcome(timed, plan.outputs_per_thread);
    row.set("per_ko", kos)
        .set("best_ko", o.best_ko)
        .set("best_ms", o.best_ms)
        .set("auto_loss_pct", 100.0 * o.auto_loss)
        .set("auto_within_10pct", o.auto_loss <= 0.10);
  }

  if (cfg.all_boundaries) {
    add_other_boundaries(row, cfg, g, dout, w.volume, t.median_ms, failures, [&](Boundary b) {
      DenseCase cb = c;
      cb.boundary = b;
      detail::CorrelationProblem pb = problem(c);
      pb.boundary = b;  // the taps stay c's, which outlive the launch (cb does not)
      return BoundaryLaunch{cpu_check(cb, cfg.check_budget_fmas), [&g, pb](void* st) {
                              return cuda_backend::launch_dense_device(pb, 0, g.dev, st);
                            }};
    });
  }

  const DenseFilter f = dense_filter(c);
  RunReport rep;
  Json call = call_time_json(
      w.volume, c.input, cfg, g, check,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_dense(in, f, out, o);
      },
      rep, failures);
  row.set("call_time", call.set("ko", rep.outputs_per_thread));
  return row;
}

Json separable_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                       int& failures) {
  Json row = Json::object();
  const auto taps = gaussian_axes(w.volume.dims, w.sigma);
  SeparableCase c = make_separable_case(w.volume, taps, Boundary::Zero, seed);
  const double flops = 2.0 * c.fmas();
  const double voxels = static_cast<double>(w.volume.count());
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  const double floor_s = 2.0 * voxels * sizeof(float) / g.ceil.copy_bytes_per_s;
  gpu::Buffer din(n), dout(n);
  din.upload(c.input.data(), n);
  const detail::SeparableProblem p0 = separable_problem(c, din.data(), dout.data());
  gpu::Buffer scratch(std::max<std::size_t>(1, cuda_backend::separable_scratch_floats(p0)));

  CheckPlan check = cpu_check(c, cfg.check_budget_fmas);
  cuda_backend::LaunchPlan plan;
  const double err = validate_launch(g, dout, check, w.volume, [&](void* s) {
    plan = cuda_backend::launch_separable_device(p0, scratch.data(), g.dev, s);
  });
  row.set("taps_per_axis", static_cast<int64_t>(taps[0].size()))
      .set("rel_l2_error", err)
      .set("checked_fraction", check.covered_fraction);
  if (!(err <= cfg.tolerance)) {
    ++failures;
    return row.set("error", "validation failed");
  }
  const Timing t = g.timer->time(
      [&](void* s) { cuda_backend::launch_separable_device(p0, scratch.data(), g.dev, s); },
      cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const double s = t.median_ms * 1e-3;
  const double ratio = s / floor_s;
  row.set("device_time", timing_json(t))
      .set("voxels_per_s", voxels / s)
      .set("gflops", flops / s * 1e-9)
      .set("memory_floor_ms", floor_s * 1e3)
      .set("floor_ratio", ratio)
      .set("pct_bandwidth_of_floor_traffic", 100.0 / ratio)
      .set("target_met", ratio <= w.target)
      .set("plan", plan_json(plan));
  if (cfg.all_boundaries) {
    add_other_boundaries(row, cfg, g, dout, w.volume, t.median_ms, failures, [&](Boundary b) {
      SeparableCase cb = c;
      cb.boundary = b;
      const detail::SeparableProblem pb = separable_problem(cb, din.data(), dout.data());
      return BoundaryLaunch{cpu_check(cb, cfg.check_budget_fmas), [&, pb](void* st) {
                              return cuda_backend::launch_separable_device(pb, scratch.data(),
                                                                           g.dev, st);
                            }};
    });
  }
  SeparableFilter f;
  f.dims = w.volume.dims;
  f.taps = taps;
  RunReport rep;
  row.set("call_time", call_time_json(
                           w.volume, c.input, cfg, g, check,
                           [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
                             return filter_separable(in, f, out, o);
                           },
                           rep, failures));
  return row;
}

double rel_l2(const std::vector<float>& got, const std::vector<float>& ref) {
  double d = 0, r = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    d += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    r += double(ref[i]) * ref[i];
  }
  return std::sqrt(d / r);
}

Json cpu_row(const Workload& w, const BenchConfig& cfg, uint64_t seed, int& failures) {
  Json row = Json::object();
  // Convolution with the replicate boundary: itk::ConvolutionImageFilter's defaults.
  const DenseCase c = make_dense_case(w.volume, w.filter, Boundary::Replicate, seed);
  const double flops = 2.0 * c.fmas();
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
  const ConstVolumeView in =
      make_view(static_cast<const float*>(c.input.data()), w.volume.dims, w.volume.extent);
  const VolumeView ov = make_view(out.data(), w.volume.dims, w.volume.extent);
  const DenseFilter f = dense_filter(c);
  Options o;
  o.backend = Backend::Cpu;
  o.operation = Operation::Convolution;
  o.boundary = Boundary::Replicate;
  o.threads = cfg.threads;
  RunReport rep;
  const Timing t =
      time_host([&] { rep = filter_dense(in, f, ov, o); }, 1, std::max(3, cfg.call_repetitions));
  const double s = t.median_ms * 1e-3;
  row.set("device_time", timing_json(t))
      .set("voxels_per_s", static_cast<double>(n) / s)
      .set("gflops", flops / s * 1e-9)
      .set("threads", rep.threads)
      .set("plan",
           Json::object()
               .set("ko", rep.outputs_per_thread)
               .set("ko_reason", rep.outputs_per_thread_reason)
               .set("block", "")
               .set("describe", "CPU blocking factor " + std::to_string(rep.outputs_per_thread) +
                                    ", " + std::to_string(rep.threads) + " threads"));
  if (!cfg.cpu_peer) {
    return row
        .set("peer",
             "itk::ConvolutionImageFilter not run: this build has no ITK "
             "(run `ndconv bench --workload cpu3d_7`)")
        .set("target_met", Json());
  }
  const PeerRun peer = cfg.cpu_peer(c, rep.threads);
  const double err = rel_l2(out, peer.output);
  const double speedup = peer.median_ms / t.median_ms;
  if (!(err <= cfg.tolerance))
    ++failures;
  return row.set("peer", peer.name)
      .set("peer_median_ms", peer.median_ms)
      .set("peer_repetitions", peer.repetitions)
      .set("rel_l2_error_vs_peer", err)
      .set("speedup_vs_peer", speedup)
      .set("target_met", speedup >= w.target);
}

}  // namespace

const std::vector<Workload>& bench_workloads() {
  static const std::vector<Workload> list = [] {
    std::vector<Workload> l;
    auto dense = [&](const char* name, const char* vol, int dims, int k, double target) {
      Workload w;
      w.name = name;
      w.kind = Kind::GpuDense;
      w.volume = parse_shape(vol, "volume");
      w.filter = cube(dims, k);
      w.target = target;
      w.target_text = ">= " + std::to_string(static_cast<int>(target)) + "% of FMA peak";
      w.description = std::to_string(dims) + "D " + vol + ", dense " + std::to_string(k) + "^" +
                      std::to_string(dims);
      l.push_back(w);
    };
    dense("dense3d_11", "256x256x256", 3, 11, 70);
    dense("dense3d_5", "256x256x256", 3, 5, 50);
    dense("dense4d_7", "96x96x96x16", 4, 7, 60);
    dense("dense2d_17", "4096x4096", 2, 17, 60);
    Workload g;
    g.name = "gauss3d_s2";
    g.kind = Kind::GpuSeparable;
    g.volume = parse_shape("256x256x256", "volume");
    g.sigma = 2.0;
    g.target = 3.0;
    g.target_text = "<= 3x the memory floor";
    g.description = "3D 256x256x256, Gaussian sigma 2 (17 taps per axis), separable";
    l.push_back(g);
    Workload c;
    c.name = "cpu3d_7";
    c.kind = Kind::CpuDense;
    c.volume = parse_shape("160x160x160", "volume");
    c.filter = cube(3, 7);
    c.target = 20.0;
    c.target_text = ">= 20x itk::ConvolutionImageFilter";
    c.description = "CPU 3D 160x160x160, dense 7^3, all cores";
    l.push_back(c);
    return l;
  }();
  return list;
}

// A dense GPU row that is not in the fixed list, named as those are (denseND_K: a K^N cube filter)
// on the volume of the fixed dense row with N dimensions, without a target (for studies of other
// filter sizes, e.g. where a launch plan's rule changes); false when `name` is not of that form.
bool other_dense_workload(const std::string& name, Workload& out) {
  int dims = 0, k = 0, used = 0;
  if (std::sscanf(name.c_str(), "dense%dd_%d%n", &dims, &k, &used) != 2 ||
      used != static_cast<int>(name.size()) || k < 1 || k > 63)
    return false;
  for (const Workload& w : bench_workloads()) {
    if (w.kind != Kind::GpuDense || w.volume.dims != dims)
      continue;
    out = w;
    out.name = name;
    out.filter = cube(dims, k);
    out.target = -1;
    out.target_text = "none (not a fixed row)";
    out.description = w.description.substr(0, w.description.rfind(' ')) + " " + std::to_string(k) +
                      "^" + std::to_string(dims);
    return true;
  }
  return false;
}

BenchResult run_bench(const BenchConfig& cfg, std::ostream* progress_out) {
  std::vector<Workload> chosen;
  for (const Workload& w : bench_workloads()) {
    const bool named =
        cfg.workloads.empty() ||
        std::find(cfg.workloads.begin(), cfg.workloads.end(), w.name) != cfg.workloads.end();
    if (named && (!cfg.cpu_only || w.kind == Kind::CpuDense))
      chosen.push_back(w);
  }
  for (const std::string& name : cfg.workloads) {
    if (std::none_of(bench_workloads().begin(), bench_workloads().end(),
                     [&](const Workload& w) { return w.name == name; })) {
      Workload other;
      if (other_dense_workload(name, other)) {
        if (!cfg.cpu_only)
          chosen.push_back(other);
        continue;
      }
      std::string have;
      for (const Workload& w : bench_workloads())
        have += (have.empty() ? "" : ", ") + w.name;
      throw InvalidArgument("--workload " + name + ": unknown (known: " + have +
                            ", or denseND_K for a K^N filter on the fixed dense row's volume)");
    }
  }
  if (chosen.empty())
    throw InvalidArgument("no workload selected");
  const bool need_gpu = std::any_of(chosen.begin(), chosen.end(),
                                    [](const Workload& w) { return w.kind != Kind::CpuDense; });
  BenchResult result;
  result.summary = Json::object()
                       .set("tool", "ndconv bench")
                       .set("date", utc_now())
                       .set("command", cfg.command_line)
                       .set("cpu", cpu_json(cfg.threads));
  GpuContext g;
  std::unique_ptr<gpu::Timer> timer;
  if (need_gpu) {
    g.dev = cfg.cuda_device;
    gpu::require(g.dev);
    g.facts = gpu::facts(g.dev);
    if (progress_out)
      *progress_out << "measuring the device's ceilings on " << g.facts.name << " ...\n";
    g.ceil = gpu::measure_ceilings(g.dev, 10);
    timer = std::make_unique<gpu::Timer>(g.dev);
    g.timer = timer.get();
    result.summary.set("device", device_json(g.facts)).set("ceilings", ceilings_json(g.ceil));
  }
  result.summary.set("timing",
                     Json::object()
                         .set("device_time",
                              "the filter alone on data already on the device: CUDA events "
                              "around the launch, median of repetitions after warm-up, L2 "
                              "flushed before each (the taps' small host-to-device copy that "
                              "the launch API makes is included)")
                         .set("call_time",
                              "the whole ndconv::filter_* call on host buffers (upload, filter, "
                              "download, allocation): host clock, median of repetitions after "
                              "one warm-up")
                         .set("warmup", cfg.warmup)
                         .set("repetitions", cfg.repetitions)
                         .set("call_repetitions", cfg.call_repetitions));
  Json rows = Json::array();
  Progress progress(progress_out, static_cast<int>(chosen.size()));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Workload& w = chosen[i];
    const uint64_t seed = cfg.seed ? cfg.seed + i : fresh_seed();
    Json row;
    if (w.kind == Kind::GpuDense)
      row = dense_gpu_row(w, cfg, g, seed, result.failures);
    else if (w.kind == Kind::GpuSeparable)
      row = separable_gpu_row(w, cfg, g, seed, result.failures);
    else
      row = cpu_row(w, cfg, seed, result.failures);
    Json head = Json::object()
                    .set("workload", w.name)
                    .set("description", w.description)
                    .set("backend", w.kind == Kind::CpuDense ? "cpu" : "gpu")
                    .set("volume", format_shape(w.volume))
                    .set("voxels", w.volume.count())
                    .set("target", w.target_text);
    if (w.kind == Kind::GpuSeparable) {
      head.set("filter", "gaussian sigma " + std::to_string(w.sigma).substr(0, 4));
    } else {
      head.set("filter", format_shape(w.filter)).set("taps", w.filter.count());
    }
    for (const auto& [k, v] : row.members())
      head.set(k, v);
    head.set("seed", std::to_string(seed));
    rows.push(head);
    progress.step(w.name);
  }
  progress.finish();
  result.summary.set("workloads", rows).set("validation_failures", result.failures);
  return result;
}

void print_bench_table(std::ostream& out, const BenchResult& result) {
  if (const Json* c = result.summary.find("ceilings")) {
    out << "device: " << result.summary.find("device")->find("name")->scalar_text()
        << "; measured FP32 FMA peak " << c->find("fma_peak_gflops")->scalar_text()
        << " GFLOP/s, copy bandwidth " << c->find("copy_bandwidth_gbs")->scalar_text()
        << " GB/s (read+write)\n";
  }
  char line[320];
  std::snprintf(line, sizeof line, "%-11s %10s %10s %9s %9s %-24s %-4s %-7s %8s %10s\n", "workload",
                "device_ms", "min_ms", "GVox/s", "GFLOP/s", "vs ceiling", "met", "plan", "call_ms",
                "auto/best");
  out << line;
  for (const Json& r : result.summary.find("workloads")->items()) {
    auto s = [&](const Json* j, const char* k) {
      const Json* v = j ? j->find(k) : nullptr;
      return v ? v->scalar_text() : std::string();
    };
    auto d = [&](const Json* j, const char* k) {
      const std::string t = s(j, k);
      return t.empty() || t == "true" || t == "false" ? kNaN : std::stod(t);
    };
    const Json* dt = r.find("device_time");
    const Json* ct = r.find("call_time");
    std::string ceiling;
    char buf[64];
    if (r.find("pct_fma_peak")) {
      std::snprintf(buf, sizeof buf, "%.1f%% FMA peak", d(&r, "pct_fma_peak"));
      ceiling = buf;
    } else if (r.find("floor_ratio")) {
      std::snprintf(buf, sizeof buf, "%.2fx memory floor", d(&r, "floor_ratio"));
      ceiling = buf;
    } else if (r.find("speedup_vs_peer")) {
      std::snprintf(buf, sizeof buf, "%.1fx ITK", d(&r, "speedup_vs_peer"));
      ceiling = buf;
    } else if (r.find("error")) {
      ceiling = s(&r, "error");
    }
    std::string plan = "KO=" + s(r.find("plan"), "ko");
    std::string ratio;
    if (r.find("auto_loss_pct")) {
      std::snprintf(buf, sizeof buf, "+%.1f%%", d(&r, "auto_loss_pct"));
      ratio = buf;
    }
    std::snprintf(line, sizeof line, "%-11s %10.4f %10.4f %9.2f %9.1f %-24s %-4s %-7s %8.3f %10s\n",
                  s(&r, "workload").c_str(), d(dt, "median_ms"), d(dt, "min_ms"),
                  d(&r, "voxels_per_s") * 1e-9, d(&r, "gflops"), ceiling.c_str(),
                  s(&r, "target_met") == "true"    ? "yes"
                  : s(&r, "target_met") == "false" ? "NO"
                                                   : "-",
                  plan.c_str(), d(ct, "median_ms"), ratio.c_str());
    out << line;
  }
  out << "device_ms: filter on data already on the device (CUDA events; CPU row: host clock); "
         "call_ms: whole call with transfers.\n";
}

}  // namespace ndconv::perf
