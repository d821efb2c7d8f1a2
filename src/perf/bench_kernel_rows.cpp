// The bench's dense and Gaussian GPU rows (bench_rows.h): each validated against the CPU backend,
// timed on the device, with every compiled KO and every boundary, then as a whole call.
#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "cuda/launch.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/check.h"
#include "perf/gpu.h"
#include "perf/outcome.h"
#include "perf/points.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

// What a launch ran: kernel, KO, shape and the launched kernel's resources (separable: its first
// pass's).
Json plan_json(const cuda_backend::LaunchPlan& plan) {
  return {{"kernel", plan.kernel},
          {"ko", plan.outputs_per_thread},
          {"ko_reason", plan.reason},
          {"block", block_text(plan)},
          {"launches", plan.launches},
          {"registers", plan.resources.registers_per_thread},
          {"spill_bytes", plan.resources.local_bytes},
          {"occupancy", plan.resources.occupancy},
          {"describe", plan.describe()}};
}

std::array<std::vector<float>, kMaxDims> gaussian_axes(int dims, double sigma) {
  std::array<std::vector<float>, kMaxDims> taps;
  for (int a = 0; a < dims; ++a)
    taps[a] = gaussian_taps(sigma);
  return taps;
}

// Every boundary a kernel sees (Boundary::Constant reaches the kernels as zero).
const Boundary kOtherBoundaries[] = {Boundary::Replicate, Boundary::Mirror, Boundary::Periodic,
                                     Boundary::Reflect};
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
    Json o = {{"rel_l2_error", e}, {"plan", plan_json(plan)}};
    if (e <= cfg.tolerance) {
      const Timing tb = g.timer->time(run.launch, cfg.warmup, cfg.repetitions, cfg.flush_l2);
      const double extra = tb.median_ms / zero_ms - 1.0;
      worst = std::max(worst, extra);
      o.update({{"median_ms", tb.median_ms}, {"extra_vs_zero_pct", 100.0 * extra}});
    } else {
      ++failures;
      o["error"] = "validation failed";
    }
    other[to_string(b)] = o;
  }
  row.update({{"other_boundaries", other},
              {"worst_boundary_extra_pct", 100.0 * worst},
              {"boundaries_within_10pct", worst <= 0.10}});
}

}  // namespace

Json dense_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                   int& failures, bool pinned_call) {
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
  // The direct kernels against the FP32 peak (the fft rows time the FFT and the automatic choice).
  const cuda_backend::Tuning direct = cuda_backend::direct_kernels_tuning();
  cuda_backend::LaunchPlan plan;
  const double err = validate_launch(g, dout, check, w.volume, [&](void* s) {
    plan = cuda_backend::launch_dense_device(p, 0, g.dev, s, direct);
  });
  row.update({{"rel_l2_error", err}, {"checked_fraction", check.covered_fraction}});
  if (!(err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return row;
  }
  const Timing t =
      g.timer->time([&](void* s) { cuda_backend::launch_dense_device(p, 0, g.dev, s, direct); },
                    cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const double s = t.median_ms * 1e-3;
  const double pct = 100.0 * flops / s / g.ceil.fma_flops;
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", voxels / s},
              {"gflops", flops / s * 1e-9},
              {"pct_fma_peak", pct},
              {"compute_floor_ms", flops / g.ceil.fma_flops * 1e3},
              {"target_met", w.target < 0 ? Json() : Json(pct >= w.target)},
              {"plan", plan_json(plan)}});

  if (cfg.all_kos) {
    Json kos = Json::array();
    // The automatic plan, then every other KO (the rule's KO was timed above under the same
    // conditions: that time stands for it).
    std::vector<TimedPoint> timed{
        {PointKey{plan.kernel, 1, plan.outputs_per_thread, ""}, true, t.median_ms}};
    for (const auto& v : cuda_backend::dense_variants(g.dev, w.volume.dims)) {
      const int ko = v.outputs_per_thread;
      cuda_backend::LaunchPlan ko_plan;
      const double e = validate_launch(g, dout, check, w.volume, [&](void* st) {
        ko_plan = cuda_backend::launch_dense_device(p, ko, g.dev, st);
      });
      // The resources of the kernel that ran: a forced KO runs the tiled kernel where it has one.
      const cuda_backend::KernelVariant& res = ko_plan.resources;
      Json k = {{"ko", ko},
                {"kernel", ko_plan.kernel},
                {"registers", res.registers_per_thread},
                {"spill_bytes", res.local_bytes},
                {"occupancy", res.occupancy},
                {"rel_l2_error", e}};
      if (e <= cfg.tolerance) {
        const Timing tk =
            g.timer->time([&](void* st) { cuda_backend::launch_dense_device(p, ko, g.dev, st); },
                          cfg.warmup, cfg.repetitions, cfg.flush_l2);
        k.update({{"median_ms", tk.median_ms},
                  {"pct_fma_peak", 100.0 * flops / (tk.median_ms * 1e-3) / g.ceil.fma_flops}});
        if (ko != plan.outputs_per_thread)
          timed.push_back({PointKey{ko_plan.kernel, 1, ko, ""}, false, tk.median_ms});
      } else {
        ++failures;
        k["error"] = "validation failed";
      }
      kos.push_back(k);
    }
    const ProblemOutcome o = problem_outcome(timed);
    row.update({{"per_ko", kos},
                {"best_ko", o.best.key.ko},
                {"best_ms", o.best.ms},
                {"auto_loss_pct", 100.0 * o.auto_loss},
                {"auto_within_10pct", o.auto_loss <= 0.10}});
  }

  if (cfg.all_boundaries) {
    add_other_boundaries(row, cfg, g, dout, w.volume, t.median_ms, failures, [&](Boundary b) {
      DenseCase cb = c;
      cb.boundary = b;
      detail::CorrelationProblem pb = problem(c);
      pb.boundary = b;  // the taps stay c's, which outlive the launch (cb does not)
      return BoundaryLaunch{cpu_check(cb, cfg.check_budget_fmas), [&g, pb, direct](void* st) {
                              return cuda_backend::launch_dense_device(pb, 0, g.dev, st, direct);
                            }};
    });
  }

  const DenseFilter f = dense_filter(c);
  add_call_times(
      row, w.volume, c.input, pinned_call, cfg, g, check,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_dense(in, f, out, o);
      },
      failures);
  return row;
}

Json separable_gpu_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
                       int& failures, bool pinned_call) {
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
  row.update({{"taps_per_axis", taps[0].size()},
              {"rel_l2_error", err},
              {"checked_fraction", check.covered_fraction}});
  if (!(err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return row;
  }
  const Timing t = g.timer->time(
      [&](void* s) { cuda_backend::launch_separable_device(p0, scratch.data(), g.dev, s); },
      cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const double s = t.median_ms * 1e-3;
  const double ratio = s / floor_s;
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", voxels / s},
              {"gflops", flops / s * 1e-9},
              {"memory_floor_ms", floor_s * 1e3},
              {"floor_ratio", ratio},
              {"pct_bandwidth_of_floor_traffic", 100.0 / ratio},
              {"target_met", ratio <= w.target},
              {"plan", plan_json(plan)}});
  {
    // The other of the slab kernel and the column passes on the same problem, in the same run
    // (validated before it is timed, as the plan's kernel): the measurement behind the plan's rule.
    // Where the streaming kernel ran, the column passes.
    cuda_backend::Tuning other;
    other.separable_stream = false;
    other.separable_slab = plan.family != "slab" && plan.family != "stream";
    other.slab_max_column_x_use = 2.0;  // wherever the slab kernel can implement the filter
    cuda_backend::LaunchPlan other_plan;
    const auto launch_other = [&](void* st) {
      other_plan = cuda_backend::launch_separable_device(p0, scratch.data(), g.dev, st, 0, other);
    };
    const double other_err = validate_launch(g, dout, check, w.volume, launch_other);
    if (!(other_err <= cfg.tolerance)) {
      ++failures;
      row["error"] = "validation of the " + other_plan.family + " plan failed";
      return row;
    }
    if (other_plan.family != plan.family) {
      const Timing to = g.timer->time(launch_other, cfg.warmup, cfg.repetitions, cfg.flush_l2);
      row["other_plan"] = {{"family", other_plan.family},
                           {"device_time", timing_json(to)},
                           {"floor_ratio", to.median_ms * 1e-3 / floor_s}};
    }
  }
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
  add_call_times(
      row, w.volume, c.input, pinned_call, cfg, g, check,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_separable(in, f, out, o);
      },
      failures);
  return row;
}

}  // namespace ndconv::perf
