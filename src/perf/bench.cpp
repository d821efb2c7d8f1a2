#include "perf/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>

#include "cpu/cpu_backend.h"
#include "cuda/launch.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "ndconv/memory.h"
#include "perf/bank_rows.h"
#include "perf/context.h"
#include "perf/floors.h"
#include "perf/gpu.h"
#include "perf/median_rows.h"
#include "perf/outcome.h"
#include "perf/points.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {
using Kind = Workload::Kind;

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

using EngineCall =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;

// Where a whole call's host buffers live: ordinary (pageable) memory, or pinned memory.
enum class HostMemory { Pageable, Pinned };

// The api rows' pinned buffers: ndconv's public pinned allocator, which the CLI and the ITK
// filters use for their images.
using PinnedFloats = PinnedBuffer<float>;
const char* const kPinnedAllocator = "ndconv::PinnedBuffer (ndconv/memory.h)";

// Times the whole engine call on host buffers of `memory` (uploads and downloads included) and
// checks its output (poisoned with NaN first): the row's call_time; `report` is the engine's
// report of the last call.
Json call_time_json(const Shape& volume, const std::vector<float>& input, HostMemory memory,
                    const BenchConfig& cfg, const GpuContext& g, const CheckPlan& check,
                    const EngineCall& call, RunReport& report, int& failures) {
  const std::size_t n = static_cast<std::size_t>(volume.count());
  std::vector<float> pageable_in, pageable_out;
  std::unique_ptr<PinnedFloats> pinned_in, pinned_out;
  float* in_data = nullptr;
  float* out_data = nullptr;
  if (memory == HostMemory::Pinned) {
    pinned_in = std::make_unique<PinnedFloats>(n);
    pinned_out = std::make_unique<PinnedFloats>(n);
    std::copy(input.begin(), input.end(), pinned_in->data());
    in_data = pinned_in->data();
    out_data = pinned_out->data();
  } else {
    pageable_in = input;
    pageable_out.resize(n);
    in_data = pageable_in.data();
    out_data = pageable_out.data();
  }
  std::fill(out_data, out_data + n, std::numeric_limits<float>::quiet_NaN());
  const ConstVolumeView in = make_view<const float>(in_data, volume.dims, volume.extent);
  const VolumeView ov = make_view(out_data, volume.dims, volume.extent);
  Options o = run_options(Backend::Cuda, Operation::Correlation, Boundary::Zero);
  o.cuda_device = g.dev;
  const Timing call_timing = time_host([&] { report = call(in, ov, o); }, 1, cfg.call_repetitions);
  const double call_err = window_error(check, volume, std::vector<float>(out_data, out_data + n));
  if (!(call_err <= cfg.tolerance))
    ++failures;
  Json timing = call_timing_json(call_timing, call_err, report);
  timing["slabs"] = report.slabs;
  if (memory == HostMemory::Pinned)  // the allocator falls back to ordinary memory without a GPU
    timing["page_locked"] = pinned_in->pinned() && pinned_out->pinned();
  return timing;
}

// The row's call_time on pageable buffers and, with `pinned`, call_time_pinned.
void add_call_times(Json& row, const Shape& volume, const std::vector<float>& input, bool pinned,
                    const BenchConfig& cfg, const GpuContext& g, const CheckPlan& check,
                    const EngineCall& call, int& failures) {
  RunReport rep;
  row["call_time"] =
      call_time_json(volume, input, HostMemory::Pageable, cfg, g, check, call, rep, failures);
  row["call_time"]["ko"] = rep.outputs_per_thread;
  if (pinned) {
    row["call_time_pinned"] =
        call_time_json(volume, input, HostMemory::Pinned, cfg, g, check, call, rep, failures);
  }
}

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
  cuda_backend::LaunchPlan plan;
  const double err = validate_launch(g, dout, check, w.volume, [&](void* s) {
    plan = cuda_backend::launch_dense_device(p, 0, g.dev, s);
  });
  row.update({{"rel_l2_error", err}, {"checked_fraction", check.covered_fraction}});
  if (!(err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return row;
  }
  const Timing t =
      g.timer->time([&](void* s) { cuda_backend::launch_dense_device(p, 0, g.dev, s); }, cfg.warmup,
                    cfg.repetitions, cfg.flush_l2);
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
      return BoundaryLaunch{cpu_check(cb, cfg.check_budget_fmas), [&g, pb](void* st) {
                              return cuda_backend::launch_dense_device(pb, 0, g.dev, st);
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
  const Options o =
      run_options(Backend::Cpu, Operation::Convolution, Boundary::Replicate, cfg.threads);
  RunReport rep;
  const Timing t =
      time_host([&] { rep = filter_dense_case(c, out, o); }, 1, std::max(3, cfg.call_repetitions));
  const double s = t.median_ms * 1e-3;
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", static_cast<double>(n) / s},
              {"gflops", flops / s * 1e-9},
              {"threads", rep.threads},
              {"plan",
               {{"ko", rep.outputs_per_thread},
                {"ko_reason", rep.outputs_per_thread_reason},
                {"block", ""},
                {"describe", "CPU blocking factor " + std::to_string(rep.outputs_per_thread) +
                                 ", " + std::to_string(rep.threads) + " threads"}}}});
  if (!cfg.cpu_peer) {
    row.update({{"peer",
                 "itk::ConvolutionImageFilter not run: this build has no ITK "
                 "(run `ndconv bench --workload cpu3d_7`)"},
                {"target_met", nullptr}});
    return row;
  }
  const PeerRun peer = cfg.cpu_peer(c, rep.threads, cfg.cpu_peer_repetitions);
  const double err = rel_l2(out, peer.output);
  const double speedup = peer.median_ms / t.median_ms;
  if (!(err <= cfg.tolerance))
    ++failures;
  row.update({{"peer", peer.name},
              {"peer_median_ms", peer.median_ms},
              {"peer_repetitions", peer.repetitions},
              {"rel_l2_error_vs_peer", err},
              {"speedup_vs_peer", speedup},
              {"target_met", speedup >= w.target}});
  return row;
}

// The whole call of a GPU workload on pageable and on pinned host buffers, each against
// max(upload, kernel, download) with the transfers at the bandwidth measured for that kind of
// memory at the start of the run and the kernel at this row's device time.
Json api_row(const Workload& w, const BenchConfig& cfg, GpuContext& g, uint64_t seed,
             int& failures) {
  const auto& all = bench_workloads();
  const Workload& base =
      *std::find_if(all.begin(), all.end(), [&](const Workload& b) { return b.name == w.base; });
  BenchConfig quick = cfg;  // the kernel's time is what matters here, not its variants
  quick.all_kos = false;
  quick.all_boundaries = false;
  Json row = base.kind == Kind::GpuDense ? dense_gpu_row(base, quick, g, seed, failures, true)
                                         : separable_gpu_row(base, quick, g, seed, failures, true);
  if (row.contains("error"))
    return row;
  const double kernel_ms = number(row["device_time"], "median_ms");
  const double bytes = 4.0 * static_cast<double>(w.volume.count());  // float32 in and out
  struct Memory {
    const char* name;
    const char* timing;
    double h2d, d2h;
  };
  const Memory kinds[] = {
      {"pageable", "call_time", g.ceil.h2d_pageable_bytes_per_s, g.ceil.d2h_pageable_bytes_per_s},
      {"pinned", "call_time_pinned", g.ceil.h2d_pinned_bytes_per_s, g.ceil.d2h_pinned_bytes_per_s}};
  bool met = true;
  for (const Memory& m : kinds) {
    const CallFloor f = call_floor(bytes, bytes, kernel_ms, m.h2d, m.d2h);
    const double call_ms = number(row[m.timing], "median_ms");
    const double ratio = ratio_to_floor(call_ms, f.floor_ms);
    met = met && ratio <= kMaxRatioToFloor;
    row[std::string("floor_") + m.name] = {{"upload_ms", f.upload_ms},
                                           {"kernel_ms", f.kernel_ms},
                                           {"download_ms", f.download_ms},
                                           {"floor_ms", f.floor_ms},
                                           {"bound", f.bound},
                                           {"call_ms", call_ms},
                                           {"ratio_to_floor", ratio},
                                           {"target_met", ratio <= kMaxRatioToFloor}};
  }
  // Both directions at once are slower than either alone: the pinned call's floor with them.
  if (g.ceil.duplex_pinned_bytes_per_s > 0) {
    const double duplex_ms = bytes / g.ceil.duplex_pinned_bytes_per_s * 1e3;
    const double floor_ms = std::max(kernel_ms, duplex_ms);
    const double call_ms = number(row["call_time_pinned"], "median_ms");
    row["floor_pinned_duplex"] = {{"both_ways_ms", duplex_ms},
                                  {"kernel_ms", kernel_ms},
                                  {"floor_ms", floor_ms},
                                  {"ratio_to_floor", ratio_to_floor(call_ms, floor_ms)}};
  }
  row["pinned_allocator"] = kPinnedAllocator;
  row["target_met"] = met;
  return row;
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
    const std::size_t kernel_rows = l.size();
    for (std::size_t i = 0; i < kernel_rows; ++i) {
      if (l[i].kind == Kind::CpuDense)
        continue;
      Workload a = l[i];
      a.name = "api_" + l[i].name;
      a.kind = Kind::Api;
      a.base = l[i].name;
      a.target = kMaxRatioToFloor;
      a.target_text = "<= 1.5x max(upload, kernel, download), pageable and pinned";
      a.description = "whole filter call on host buffers: " + l[i].description;
      l.push_back(a);
    }
    add_median_workloads(l);
    for (const Workload& w : bank_workloads())
      l.push_back(w);
    for (const char* command : {"smooth", "convolve"}) {
      for (FileFormat f : {FileFormat::Mha, FileFormat::Nii, FileFormat::NiiGz}) {
        Workload e;
        std::string ext = extension(f);
        ext.erase(std::remove(ext.begin(), ext.end(), '.'), ext.end());
        e.name = std::string("e2e_") + command + "_" + ext;
        e.kind = Kind::EndToEnd;
        e.command = command;
        e.format = f;
        e.volume = parse_shape("160x160x160x20", "volume");
        e.target = kMaxRatioToFloor;
        e.target_text = "<= 1.5x the I/O-only floor (ndconv convert)";
        e.description = std::string("ndconv ") + command + " on an echo-like uint8 sequence, " +
                        (e.command == "smooth" ? "sigma 1 mm" : "dense 7^4 kernel") + ", float32 " +
                        extension(f) + " out";
        l.push_back(e);
      }
    }
    Workload b;
    b.name = "batch";
    b.kind = Kind::Batch;
    b.volume = parse_shape("160x160x160", "volume");
    b.target = kMinBatchThroughputShare;
    b.target_text = ">= 90% of the I/O-only floor's throughput";
    b.description = "ndconv smooth --sigma 1 on 40 echo-like uint8 .nii.gz volumes";
    l.push_back(b);
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

namespace {

bool needs_gpu(const Workload& w) {
  return w.kind == Kind::GpuDense || w.kind == Kind::GpuSeparable || w.kind == Kind::Api ||
         w.kind == Kind::GpuMedian || w.kind == Kind::Bank;
}

const char* backend_text(Kind k) {
  switch (k) {
    case Kind::CpuDense:
      return "cpu";
    case Kind::EndToEnd:
    case Kind::Batch:
      return "ndconv command";
    default:
      return "gpu";
  }
}

// A --workload name: a row's name, or a prefix ending in '*' (e2e_*) for every row it starts.
bool names_workload(const std::string& pattern, const std::string& name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == name;
}

}  // namespace

BenchResult run_bench(const BenchConfig& cfg, std::ostream* progress_out) {
  std::vector<Workload> chosen;
  for (const Workload& w : bench_workloads()) {
    const bool named = cfg.workloads.empty() ||
                       std::any_of(cfg.workloads.begin(), cfg.workloads.end(),
                                   [&](const std::string& p) { return names_workload(p, w.name); });
    if (named && (!cfg.cpu_only || !needs_gpu(w)))
      chosen.push_back(w);
  }
  for (const std::string& name : cfg.workloads) {
    if (std::none_of(bench_workloads().begin(), bench_workloads().end(),
                     [&](const Workload& w) { return names_workload(name, w.name); })) {
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
  const bool need_gpu = std::any_of(chosen.begin(), chosen.end(), needs_gpu);
  std::unique_ptr<EndToEndBench> e2e;
  if (std::any_of(chosen.begin(), chosen.end(), [](const Workload& w) {
        return w.kind == Kind::EndToEnd || w.kind == Kind::Batch;
      }))
    e2e = std::make_unique<EndToEndBench>(cfg.e2e);
  BenchResult result;
  result.summary = {{"tool", "ndconv bench"},
                    {"date", utc_now()},
                    {"command", cfg.command_line},
                    {"cpu", cpu_json(cfg.threads)}};
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
    result.summary.update({{"device", device_json(g.facts)}, {"ceilings", ceilings_json(g.ceil)}});
  }
  result.summary["timing"] = {
      {"device_time",
       "the filter alone on data already on the device: CUDA events around the launch, median "
       "of repetitions after warm-up, L2 flushed before each (the taps' small host-to-device "
       "copy that the launch API makes is included)"},
      {"call_time",
       "the whole ndconv::filter_* call on host buffers (upload, filter, download, allocation): "
       "host clock, median of repetitions after one warm-up"},
      {"warmup", cfg.warmup},
      {"repetitions", cfg.repetitions},
      {"call_repetitions", cfg.call_repetitions},
      {"e2e",
       "e2e_* and batch: whole ndconv commands as child processes, wall clock from fork to exit, "
       "median of e2e_repetitions after one untimed run (page cache warm); the floor, ndconv "
       "convert on the same files with the same output type, is timed interleaved with them"},
      {"e2e_repetitions", cfg.e2e.repetitions}};
  Json rows = Json::array();
  Progress progress(progress_out, static_cast<int>(chosen.size()));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    Workload w = chosen[i];
    if (w.kind == Kind::EndToEnd)
      w.volume = cfg.e2e.sequence;
    if (w.kind == Kind::Batch) {
      w.volume = cfg.e2e.batch_volume;
      w.description = "ndconv smooth --sigma 1 on " + std::to_string(cfg.e2e.batch_count) +
                      " echo-like uint8 .nii.gz volumes";
    }
    // The command rows' inputs are the same from run to run (--seed changes them), so that trees
    // are compared on the same files.
    const bool command_row = w.kind == Kind::EndToEnd || w.kind == Kind::Batch;
    const uint64_t seed = command_row ? cfg.e2e.seed : cfg.seed ? cfg.seed + i : fresh_seed();
    Json row;
    if (w.kind == Kind::GpuDense)
      row = dense_gpu_row(w, cfg, g, seed, result.failures, false);
    else if (w.kind == Kind::GpuSeparable)
      row = separable_gpu_row(w, cfg, g, seed, result.failures, false);
    else if (w.kind == Kind::Api)
      row = api_row(w, cfg, g, seed, result.failures);
    else if (w.kind == Kind::GpuMedian)
      row = median_gpu_row(w, cfg, g.dev, *g.timer, g.ceil, seed, result.failures);
    else if (w.kind == Kind::Bank)
      row = bank_row(w, cfg, g.dev, g.ceil, *g.timer, seed, result.failures);
    else if (w.kind == Kind::EndToEnd)
      row = e2e->sequence_row(w.command, w.format, result.failures);
    else if (w.kind == Kind::Batch)
      row = e2e->batch_row(result.failures);
    else
      row = cpu_row(w, cfg, seed, result.failures);
    Json head = {{"workload", w.name},
                 {"description", w.description},
                 {"backend", backend_text(w.kind)},
                 {"volume", format_shape(w.volume)},
                 {"voxels", w.volume.count()},
                 {"target", w.target_text}};
    if (command_row) {
      head["filter"] = w.command == "convolve" ? "dense " + format_shape(cube(w.volume.dims, 7))
                                               : "gaussian sigma 1 mm";
    } else if (w.kind == Kind::GpuSeparable || w.sigma > 0) {
      head.update({{"filter", format_shape(w.filter)}, {"taps", w.filter.count()}});
    }
    head.update(row);
    head["seed"] = std::to_string(seed);
    rows.push_back(head);
    progress.step(w.name);
  }
  progress.finish();
  result.summary.update({{"workloads", rows}, {"validation_failures", result.failures}});
  return result;
}

namespace {

const char* met_text(const Json& r) {
  const std::string met = text(r, "target_met");
  return met == "true" ? "yes" : met == "false" ? "NO" : "-";
}

void print_kernel_rows(std::ostream& out, const Json& rows) {
  char line[320];
  std::snprintf(line, sizeof line, "%-11s %10s %10s %9s %9s %-24s %-4s %-7s %8s %10s\n", "workload",
                "device_ms", "min_ms", "GVox/s", "GFLOP/s", "vs ceiling", "met", "plan", "call_ms",
                "auto/best");
  out << line;
  const Json none = Json::object();
  for (const Json& r : rows) {
    const Json& dt = r.contains("device_time") ? r["device_time"] : none;
    const Json& ct = r.contains("call_time") ? r["call_time"] : none;
    std::string ceiling;
    char buf[64];
    if (r.contains("pct_fma_peak")) {
      std::snprintf(buf, sizeof buf, "%.1f%% FMA peak", number(r, "pct_fma_peak"));
      ceiling = buf;
    } else if (r.contains("floor_ratio")) {
      std::snprintf(buf, sizeof buf, "%.2fx memory floor", number(r, "floor_ratio"));
      ceiling = buf;
    } else if (r.contains("speedup_vs_peer")) {
      std::snprintf(buf, sizeof buf, "%.1fx ITK", number(r, "speedup_vs_peer"));
      ceiling = buf;
    } else if (r.contains("error")) {
      ceiling = text(r, "error");
    }
    const std::string plan = "KO=" + (r.contains("plan") ? text(r["plan"], "ko") : "");
    std::string ratio;
    if (r.contains("auto_loss_pct")) {
      std::snprintf(buf, sizeof buf, "+%.1f%%", number(r, "auto_loss_pct"));
      ratio = buf;
    }
    std::snprintf(line, sizeof line, "%-11s %10.4f %10.4f %9.2f %9.1f %-24s %-4s %-7s %8.3f %10s\n",
                  text(r, "workload").c_str(), number(dt, "median_ms"), number(dt, "min_ms"),
                  number(r, "voxels_per_s") * 1e-9, number(r, "gflops"), ceiling.c_str(),
                  met_text(r), plan.c_str(), number(ct, "median_ms"), ratio.c_str());
    out << line;
  }
  out << "device_ms: filter on data already on the device (CUDA events; CPU row: host clock); "
         "call_ms: whole call with transfers.\n";
}

void print_api_rows(std::ostream& out, const Json& rows) {
  char line[320];
  std::snprintf(line, sizeof line, "%-16s %-9s %9s %9s %9s %9s %-9s %9s %8s %-4s\n", "workload",
                "memory", "call_ms", "upload", "kernel", "download", "bound", "floor_ms", "x floor",
                "met");
  out << line;
  for (const Json& r : rows) {
    if (r.contains("error")) {
      out << text(r, "workload") << ": " << text(r, "error") << "\n";
      continue;
    }
    for (const char* memory : {"pageable", "pinned"}) {
      const Json& f = r[std::string("floor_") + memory];
      std::snprintf(line, sizeof line, "%-16s %-9s %9.3f %9.3f %9.3f %9.3f %-9s %9.3f %8.2f %-4s\n",
                    text(r, "workload").c_str(), memory, number(f, "call_ms"),
                    number(f, "upload_ms"), number(f, "kernel_ms"), number(f, "download_ms"),
                    text(f, "bound").c_str(), number(f, "floor_ms"), number(f, "ratio_to_floor"),
                    met_text(f));
      out << line;
    }
    if (r.contains("floor_pinned_duplex")) {
      const Json& d = r["floor_pinned_duplex"];
      std::snprintf(line, sizeof line, "%-16s %-9s %9s %9s %9.3f %9s %-9s %9.3f %8.2f\n",
                    text(r, "workload").c_str(), "duplex", "", "", number(d, "kernel_ms"), "",
                    "both", number(d, "floor_ms"), number(d, "ratio_to_floor"));
      out << line;
    }
  }
  out << "api rows: whole filter call on host buffers; floor = max(upload, kernel, download) at "
         "the host bandwidth measured for that memory (ms); duplex: the pinned call against "
         "max(kernel, both directions at once at the rate measured for that), no target.\n";
}

void print_command_rows(std::ostream& out, const Json& rows) {
  char line[320];
  std::snprintf(line, sizeof line, "%-18s %-7s %10s %10s %9s %-4s %10s\n", "workload", "device",
                "median_s", "floor_s", "vs floor", "met", "vs +CUDA");
  out << line;
  for (const Json& r : rows) {
    if (r.contains("error")) {
      out << text(r, "workload") << ": " << text(r, "error") << "\n";
      continue;
    }
    const Json& floor = r["floor"];
    if (floor.contains("error"))
      out << text(r, "workload") << ": floor failed: " << text(floor, "error") << "\n";
    for (const Json& run : r["runs"]) {
      char measure[32] = "";
      if (run.contains("ratio_to_floor"))
        std::snprintf(measure, sizeof measure, "%.2fx", number(run, "ratio_to_floor"));
      else if (run.contains("throughput_share_of_floor"))
        std::snprintf(measure, sizeof measure, "%.0f%% thr",
                      100.0 * number(run, "throughput_share_of_floor"));
      char with_cuda[32] = "";
      if (run.contains("ratio_to_floor_plus_cuda"))
        std::snprintf(with_cuda, sizeof with_cuda, "%.2fx",
                      number(run, "ratio_to_floor_plus_cuda"));
      std::snprintf(line, sizeof line, "%-18s %-7s %10.3f %10.3f %9s %-4s %10s\n",
                    text(r, "workload").c_str(), text(run, "device").c_str(),
                    number(run, "median_s"), number(floor, "median_s"), measure, met_text(run),
                    with_cuda);
      out << line;
      if (run.contains("error"))
        out << "  failed: " << text(run, "error") << "\n";
    }
    if (r.contains("mode"))
      out << "  batch: " << text(r, "mode") << "; floor: " << text(r, "floor_mode") << "\n";
  }
  out << "whole commands (wall clock, median); floor: ndconv convert of the same files to the same "
         "output type; batch: throughput as a share of the floor's; +CUDA (runs that filtered on "
         "the GPU, no target): the floor plus CUDA's fixed cost to a command, a 16^3 smooth on the "
         "GPU less the same on the CPU in this run.\n";
}

}  // namespace

void print_bench_table(std::ostream& out, const BenchResult& result) {
  const Json& doc = result.summary;
  if (doc.contains("ceilings")) {
    const Json& c = doc["ceilings"];
    out << "device: " << text(doc["device"], "name") << "; measured FP32 FMA peak "
        << text(c, "fma_peak_gflops") << " GFLOP/s, copy bandwidth "
        << text(c, "copy_bandwidth_gbs") << " GB/s (read+write); host->device / device->host "
        << text(c, "h2d_pageable_gbs") << " / " << text(c, "d2h_pageable_gbs") << " GB/s pageable, "
        << text(c, "h2d_pinned_gbs") << " / " << text(c, "d2h_pinned_gbs") << " GB/s pinned, "
        << text(c, "duplex_pinned_gbs") << " GB/s each way at once\n";
  }
  Json kernels = Json::array(), api = Json::array(), commands = Json::array();
  for (const Json& r : doc["workloads"]) {
    const std::string name = text(r, "workload");
    if (name.rfind("api_", 0) == 0)
      api.push_back(r);
    else if (text(r, "backend") == "ndconv command")
      commands.push_back(r);
    else
      kernels.push_back(r);
  }
  if (!kernels.empty())
    print_kernel_rows(out, kernels);
  if (!api.empty())
    print_api_rows(out, api);
  if (!commands.empty())
    print_command_rows(out, commands);
  print_bank_rows(out, kernels);
}

Json timing_json(const Timing& t) {
  return {{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"repetitions", t.samples_ms.size()}};
}

Json call_timing_json(const Timing& t, double rel_l2_error, const RunReport& report) {
  Json j = timing_json(t);
  j.update({{"rel_l2_error", rel_l2_error},
            {"upload_ms", report.seconds_upload * 1e3},
            {"compute_ms", report.seconds_compute * 1e3},
            {"download_ms", report.seconds_download * 1e3}});
  return j;
}

}  // namespace ndconv::perf
