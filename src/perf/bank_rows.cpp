#include "perf/bank_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>

#include "engine/adaptive/bank_front.h"
#include "ndconv/adaptive.h"
#include "perf/bank_adaptive_row.h"
#include "perf/check.h"
#include "cpu/cpu_backend.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/launch.h"

namespace ndconv::perf {

namespace {

enum class BankRow { Responses, TensorCores, WeightedSum, Adaptive };

struct BankSpec {
  const char* name;
  BankRow kind;
  const char* volume;
  int size;  ///< taps per axis of the bank's filters
  double target;
  const char* target_text;
  const char* description;
};

const BankSpec kBankSpecs[] = {
    {"bank_3d", BankRow::Responses, "256x256x256", 7, 75, ">= 75% of FMA peak",
     "3D 256x256x256, filter bank of 12 real 7^3 filters (the 6 complex quadrature filters)"},
    {"bank_3d_tc", BankRow::TensorCores, "256x256x256", 7, 300, ">= 300% of FMA peak",
     "3D 256x256x256 8-bit (uniform 0..255), the 12 real 7^3 quadrature filters on the tensor "
     "cores (wgmma on Hopper, else mma.sync; u8 x s8, 4 weight digits), against the FP32 bank "
     "kernel on the same data"},
    {"bank_4d", BankRow::Responses, "128x128x128x32", 7, 70, ">= 70% of FMA peak",
     "4D 128x128x128x32, filter bank of 24 real 7^4 filters (the 12 complex quadrature filters)"},
    {"bank_4d_tc", BankRow::TensorCores, "128x128x128x32", 7, 300, ">= 300% of FMA peak",
     "4D 128x128x128x32 8-bit (uniform 0..255), the 24 real 7^4 quadrature filters on the tensor "
     "cores (wgmma on Hopper, else mma.sync; u8 x s8, 4 weight digits, 7 tap frames), against the "
     "FP32 bank kernel on "
     "the same data"},
    {"bank_sum_3d", BankRow::WeightedSum, "256x256x256", 11, -1,
     "fused <= separate (bank + summing pass)",
     "3D 256x256x256, weighted sum of 7 real 11^3 filters (the reconstruction's lowpass and 6 "
     "highpass) with per-voxel weights"},
    {"adaptive_4d", BankRow::Adaptive, "160x160x160x20", 0, 1.5,
     "<= 1.5 s without the filter design",
     "whole adaptive filter, true 4D, default parameters, on a 160x160x160x20 echo-like sequence "
     "in memory"},
};

const BankSpec& spec_of(const std::string& name) {
  for (const BankSpec& s : kBankSpecs)
    if (name == s.name)
      return s;
  throw InvalidArgument("not a filter bank row: " + name);
}

// The bank's filters, contiguous, x fastest: the real and imaginary parts of the quadrature
// filters (Responses, TensorCores), or the reconstruction's lowpass and highpass filters
// (WeightedSum).
struct BankFilters {
  Shape extent;
  int count = 0;
  std::vector<float> taps;
};

BankFilters bank_filters(const BankSpec& s, int dims) {
  BankFilters b;
  b.extent = cube(dims, s.size);
  std::vector<const std::vector<float>*> parts;
  std::vector<DesignedFilter> designed;
  if (s.kind == BankRow::Responses || s.kind == BankRow::TensorCores) {
    QuadratureDesign q;
    q.size = s.size;
    designed = design_quadrature_filters(dims, q);
    for (const DesignedFilter& f : designed) {
      parts.push_back(&f.real);
      parts.push_back(&f.imag);
    }
  } else {
    ReconstructionDesign r;
    r.size = s.size;
    designed = design_reconstruction_filters(dims, r);
    for (const DesignedFilter& f : designed)
      parts.push_back(&f.real);
  }
  b.count = static_cast<int>(parts.size());
  for (const std::vector<float>* p : parts)
    b.taps.insert(b.taps.end(), p->begin(), p->end());
  return b;
}

// The bank problem of a row: correlation, zero boundary, `same` region, over whole volumes.
detail::BankProblem bank_problem(const Shape& volume, const Shape& filter, int count,
                                 const float* taps, const float* input) {
  detail::BankProblem p;
  p.input = make_view(input, volume.dims, volume.extent);
  p.filter_extent = filter.extent;
  p.count = count;
  p.taps = taps;
  p.boundary = Boundary::Zero;
  p.output_extent = volume.extent;
  for (int a = 0; a < volume.dims; ++a)
    p.offset[a] = -(filter.extent[a] / 2);
  return p;
}

// The view of `box` (starting at `start`) inside a contiguous volume of extents `volume`.
template <typename T>
BasicVolumeView<T> window_view(T* data, const Shape& volume, const CheckWindow& w) {
  BasicVolumeView<T> v = make_view(data, volume.dims, volume.extent);
  for (int a = 0; a < volume.dims; ++a) {
    v.data += w.start[a] * v.stride[a];
    v.extent[a] = w.box.extent[a];
  }
  return v;
}

}  // namespace

std::vector<CheckPlan> cpu_bank_check(const Shape& volume, const Shape& filter, int count,
                                      const std::vector<float>& taps,
                                      const std::vector<float>& input, const float* weights,
                                      double budget_fmas) {
  const std::vector<CheckWindow> windows = choose_windows(
      volume, static_cast<double>(filter.count()) * count, budget_fmas, {true, true, true, true});
  const int plans = weights != nullptr ? 1 : count;
  std::vector<CheckPlan> result(static_cast<std::size_t>(plans));
  for (CheckPlan& plan : result) {
    plan.windows = windows;
    int64_t covered = 0;
    for (const CheckWindow& w : windows)
      covered += w.box.count();
    plan.covered_fraction =
        std::min(1.0, static_cast<double>(covered) / static_cast<double>(volume.count()));
  }
  const int64_t voxels = volume.count();
  Options o;
  o.backend = Backend::Cpu;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const CheckWindow& w = windows[i];
    detail::BankProblem p = bank_problem(volume, filter, count, taps.data(), input.data());
    p.output_extent = w.box.extent;
    for (int a = 0; a < volume.dims; ++a)
      p.offset[a] += w.start[a];
    for (CheckPlan& plan : result) {
      plan.windows[i].expected.assign(static_cast<std::size_t>(w.box.count()),
                                      std::numeric_limits<float>::quiet_NaN());
      if (weights == nullptr)
        p.outputs.push_back(make_view(plan.windows[i].expected.data(), volume.dims, w.box.extent));
      else
        p.sum_output = make_view(plan.windows[i].expected.data(), volume.dims, w.box.extent);
    }
    for (int f = 0; weights != nullptr && f < count; ++f)
      p.weights.push_back(window_view(weights + f * voxels, volume, w));
    RunReport report;
    cpu_backend::run_bank(p, o, report);
  }
  return result;
}

namespace {

// The worst relative L2 error of `count` contiguous outputs at `outputs` against their plans.
double worst_error(const std::vector<CheckPlan>& plans, const Shape& volume, const float* outputs) {
  double worst = 0;
  for (std::size_t f = 0; f < plans.size(); ++f) {
    const double e =
        window_error(plans[f], volume, outputs + static_cast<int64_t>(f) * volume.count());
    worst = std::isfinite(e) ? std::max(worst, e) : std::numeric_limits<double>::infinity();
  }
  return worst;
}

// What every device-timed bank row holds: the input, the filters, the launch and the padded
// input, taps and outputs on the device.
struct DeviceBank {
  int device = 0;
  Shape volume;
  BankFilters filters;
  std::vector<float> input;
  cuda_bank::BankLaunch launch;
  gpu::Buffer padded, taps, outputs;
};

// Uniform integers 0..255 as floats: an 8-bit volume.
std::vector<float> random_bytes(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v)
    x = static_cast<float>(byte(rng));
  return v;
}

void prepare(DeviceBank& d, const BankSpec& s, int device, uint64_t seed, int output_volumes) {
  d.device = device;
  d.volume = parse_shape(s.volume, "volume");
  d.filters = bank_filters(s, d.volume.dims);
  d.input = s.kind == BankRow::TensorCores ? random_bytes(d.volume.count(), seed)
                                           : random_volume(d.volume.count(), seed);
  const detail::BankProblem p = bank_problem(d.volume, d.filters.extent, d.filters.count,
                                             d.filters.taps.data(), d.input.data());
  d.launch = cuda_bank::plan_bank(p, 0);
  core::PaddedVolume padded;
  cuda_bank::pad_bank_input(p, d.launch, 0, {}, padded);
  d.padded = gpu::Buffer(static_cast<std::size_t>(d.launch.padded_count()));
  d.padded.upload(padded.storage.get(), d.padded.size());
  const std::vector<float> taps = cuda_bank::bank_device_taps(d.launch, d.filters.taps.data());
  d.taps = gpu::Buffer(taps.size());
  d.taps.upload(taps.data(), taps.size());
  d.outputs = gpu::Buffer(static_cast<std::size_t>(d.volume.count() * output_volumes));
}

Json launch_json(const cuda_bank::BankLaunch& l) {
  return {{"ko", l.outputs_per_thread},
          {"ko_reason", l.outputs_per_thread_reason},
          {"passes", l.passes},
          {"describe", "GPU filter bank, " + std::to_string(l.passes) +
                           " passes of 4 filters, KO " + std::to_string(l.outputs_per_thread)}};
}

// Poisons the outputs, runs `work` once and returns the worst error of its outputs.
double validate(gpu::Timer& timer, gpu::Buffer& outputs, const std::vector<CheckPlan>& plans,
                const Shape& volume, const std::function<void(void*)>& work) {
  outputs.poison();
  work(timer.stream());
  timer.synchronize();
  std::vector<float> host(outputs.size());
  outputs.download(host.data(), host.size());
  return worst_error(plans, volume, host.data());
}

// The row's head; then `work` validated (its outputs in d.outputs against `plans`) and, when
// it passed, timed into `t`. False (the row marked, the failure counted) when it did not pass.
bool validated_timing(Json& row, const DeviceBank& d, double fmas,
                      const std::vector<CheckPlan>& plans, const BenchConfig& cfg,
                      gpu::Timer& timer, gpu::Buffer& outputs,
                      const std::function<void(void*)>& work, int& failures, Timing& t) {
  row = {{"filters", d.filters.count},
         {"filter", format_shape(d.filters.extent)},
         {"taps", d.filters.extent.count()},
         {"useful_fmas", fmas},
         {"checked_fraction", plans[0].covered_fraction}};
  const double err = validate(timer, outputs, plans, d.volume, work);
  row["rel_l2_error"] = err;
  if (!(err <= cfg.tolerance)) {
    ++failures;
    row["error"] = "validation failed";
    return false;
  }
  t = timer.time(work, cfg.warmup, cfg.repetitions, cfg.flush_l2);
  return true;
}

// The whole ndconv::filter_bank call on host buffers (padding, uploads, downloads included) on
// d's input and filters, validated against `plans` (a failure counted) and timed; its report's
// notes say which kernel ran.
Json whole_call_json(const DeviceBank& d, const std::vector<CheckPlan>& plans,
                     const BenchConfig& cfg, int device, int& failures) {
  const int count = d.filters.count;
  std::vector<float> host(static_cast<std::size_t>(d.volume.count() * count),
                          std::numeric_limits<float>::quiet_NaN());
  std::vector<VolumeView> views;
  for (int f = 0; f < count; ++f)
    views.push_back(make_view(host.data() + f * d.volume.count(), d.volume.dims, d.volume.extent));
  FilterBank fb;
  fb.dims = d.volume.dims;
  fb.extent = d.filters.extent.extent;
  fb.count = count;
  fb.taps = d.filters.taps.data();
  Options o = run_options(Backend::Cuda, Operation::Correlation, Boundary::Zero);
  o.cuda_device = device;
  const ConstVolumeView in = make_view<const float>(d.input.data(), d.volume.dims, d.volume.extent);
  RunReport report;
  const Timing tc = time_host([&] { report = filter_bank(in, fb, views, o); }, 1,
                              std::max(1, cfg.call_repetitions));
  const double call_err = worst_error(plans, d.volume, host.data());
  if (!(call_err <= cfg.tolerance))
    ++failures;
  Json call = call_timing_json(tc, call_err, report);
  call["notes"] = report.notes;
  return call;
}

Json responses_row(DeviceBank& d, const BankSpec& s, const BenchConfig& cfg, int device,
                   const gpu::Ceilings& c, gpu::Timer& timer, int& failures) {
  const int count = d.filters.count;
  d.outputs = gpu::Buffer(static_cast<std::size_t>(d.volume.count() * count));
  const double fmas = static_cast<double>(d.volume.count()) * d.filters.extent.count() * count;
  const std::vector<CheckPlan> plans = cpu_bank_check(
      d.volume, d.filters.extent, count, d.filters.taps, d.input, nullptr, cfg.check_budget_fmas);
  const auto bank = [&](void* stream) {
    cuda_bank::launch_bank_device(d.launch, d.device, d.padded.data(), d.taps.data(),
                                  d.outputs.data(), nullptr, nullptr, stream);
  };
  Json row;
  Timing t;
  if (!validated_timing(row, d, fmas, plans, cfg, timer, d.outputs, bank, failures, t))
    return row;
  const double pct = pct_of_peak(fmas, t.median_ms, c);
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", static_cast<double>(d.volume.count()) / (t.median_ms * 1e-3)},
              {"gflops", 2.0 * fmas / (t.median_ms * 1e-3) * 1e-9},
              {"pct_fma_peak", pct},
              {"compute_floor_ms", 2.0 * fmas / c.fma_flops * 1e3},
              {"target_met", pct >= s.target},
              {"plan", launch_json(d.launch)}});

  // The same filters as `count` single-filter dense launches (the automatic plan of each) on the
  // same input, each into its own output volume.
  std::vector<DenseCase> cases(static_cast<std::size_t>(count));
  std::vector<detail::CorrelationProblem> problems;
  gpu::Buffer input(static_cast<std::size_t>(d.volume.count()));
  input.upload(d.input.data(), input.size());
  for (int f = 0; f < count; ++f) {
    DenseCase& dc = cases[static_cast<std::size_t>(f)];
    dc.volume = d.volume;
    dc.boundary = Boundary::Zero;
    dc.filter = d.filters.extent;
    const auto first = d.filters.taps.begin() + f * d.filters.extent.count();
    dc.taps.assign(first, first + d.filters.extent.count());
    problems.push_back(dense_problem(dc, input.data(), d.outputs.data() + f * d.volume.count()));
  }
  cuda_backend::LaunchPlan dense_plan;
  const auto separate = [&](void* stream) {
    for (const detail::CorrelationProblem& p : problems)
      dense_plan = cuda_backend::launch_dense_device(p, 0, device, stream);
  };
  const double separate_err = validate(timer, d.outputs, plans, d.volume, separate);
  Json sep = {{"rel_l2_error", separate_err}, {"launches", count}};
  if (separate_err <= cfg.tolerance) {
    const Timing ts = timer.time(separate, cfg.warmup, cfg.repetitions, cfg.flush_l2);
    sep.update({{"device_time", timing_json(ts)},
                {"pct_fma_peak", pct_of_peak(fmas, ts.median_ms, c)},
                {"kernel", dense_plan.kernel},
                {"ko", dense_plan.outputs_per_thread}});
    row["speedup_vs_separate"] = ts.median_ms / t.median_ms;
  } else {
    ++failures;
    sep["error"] = "validation failed";
  }
  row["separate_dense"] = sep;
  input = gpu::Buffer();
  d.outputs = gpu::Buffer();  // the whole call below allocates its own device memory

  row["call_time"] = whole_call_json(d, plans, cfg, device, failures);
  return row;
}

// The bank on the tensor cores (tensor_core_kernel.cuh) on the row's 8-bit input, validated
// and timed as bank_3d, and the FP32 bank kernel on the same data in the same run.
Json tensor_core_row(DeviceBank& d, const BankSpec& s, const BenchConfig& cfg,
                     const gpu::Ceilings& c, gpu::Timer& timer, int& failures) {
  using cuda_bank::TensorCoreShape;
  const int count = d.filters.count;
  const int64_t voxels = d.volume.count();
  d.outputs = gpu::Buffer(static_cast<std::size_t>(voxels * count));
  const double fmas = static_cast<double>(voxels) * d.filters.extent.count() * count;
  const std::string unfit =
      cuda_bank::tensor_core_unfit(d.launch, d.filters.taps.data(), d.device, {});
  if (!unfit.empty()) {
    ++failures;
    return {{"error", "the tensor cores cannot take the row: " + unfit}};
  }
  const cuda_bank::TensorCoreGeometry g = cuda_bank::tensor_core_geometry(d.launch);
  std::vector<float> padded(d.padded.size());
  d.padded.download(padded.data(), padded.size());
  std::vector<uint8_t> image;
  if (!cuda_bank::padded_input_image(g, padded.data(), d.launch.row_length, 1, 0, image)) {
    ++failures;
    return {{"error", "the row's input is not 8-bit"}};
  }
  const cuda_bank::TensorCoreWeights w =
      cuda_bank::tensor_core_kernel_weights(g, d.filters.taps.data(), d.device);
  const bool wgmma =
      cuda_bank::tensor_core_takes_wgmma(g, d.device, cuda_backend::Tuning{}.bank_tensor_cores);
  // gpu::Buffer counts floats: the image (a multiple of 16 bytes) as floats.
  gpu::Buffer d_bytes(image.size() / 4), d_fragments(w.fragments.size()), d_scales(w.scales.size());
  d_bytes.upload(reinterpret_cast<const float*>(image.data()), image.size() / 4);
  d_fragments.upload(reinterpret_cast<const float*>(w.fragments.data()), w.fragments.size());
  d_scales.upload(w.scales.data(), w.scales.size());
  const std::vector<CheckPlan> plans = cpu_bank_check(
      d.volume, d.filters.extent, count, d.filters.taps, d.input, nullptr, cfg.check_budget_fmas);
  const auto tensor_cores = [&](void* stream) {
    cuda_bank::launch_tensor_core_bank(g, d.device,
                                       reinterpret_cast<const uint8_t*>(d_bytes.data()),
                                       reinterpret_cast<const int32_t*>(d_fragments.data()),
                                       d_scales.data(), d.outputs.data(), stream);
  };
  Json row;
  Timing t;
  if (!validated_timing(row, d, fmas, plans, cfg, timer, d.outputs, tensor_cores, failures, t))
    return row;
  const auto fp32 = [&](void* stream) {
    cuda_bank::launch_bank_device(d.launch, d.device, d.padded.data(), d.taps.data(),
                                  d.outputs.data(), nullptr, nullptr, stream);
  };
  const Timing tf = timer.time(fp32, cfg.warmup, cfg.repetitions, cfg.flush_l2);
  // The whole call frees the row's device buffers first (it allocates its own).
  d.outputs = gpu::Buffer();
  d_bytes = gpu::Buffer();
  const Json call = whole_call_json(d, plans, cfg, d.device, failures);
  // What the tensor cores execute: every pass's K (each tap frame's tap rows padded to whole
  // chunks, 8 taps each) by its N (filters x digits).
  const int64_t k = int64_t{TensorCoreShape::kMaxTapRows} * TensorCoreShape::kRowTaps * g.frames();
  const double mma_ops = 2.0 * static_cast<double>(voxels) * static_cast<double>(k) *
                         TensorCoreShape::kColumns * g.passes();
  const double pct = pct_of_peak(fmas, t.median_ms, c);
  row.update(
      {{"device_time", timing_json(t)},
       {"voxels_per_s", static_cast<double>(voxels) / (t.median_ms * 1e-3)},
       {"gflops", 2.0 * fmas / (t.median_ms * 1e-3) * 1e-9},
       {"pct_fma_peak", pct},
       {"int8_mma_tops", mma_ops / (t.median_ms * 1e-3) * 1e-12},
       {"fp32_kernel",
        {{"device_time", timing_json(tf)}, {"pct_fma_peak", pct_of_peak(fmas, tf.median_ms, c)}}},
       {"speedup_vs_fp32", tf.median_ms / t.median_ms},
       {"call_time", call},
       {"target_met", pct >= s.target},
       {"plan",
        {{"describe", std::string("tensor cores: ") +
                          (wgmma ? "wgmma m64n48k32" : "mma.sync m16n8k32") + " u8 x s8, " +
                          std::to_string(TensorCoreShape::kSlices) + " weight digits, N " +
                          std::to_string(TensorCoreShape::kColumns) + " per pass, " +
                          std::to_string(g.passes()) + " passes, K " + std::to_string(k) + " (" +
                          std::to_string(g.frames()) + " tap frame(s))"}}}});
  return row;
}

Json weighted_sum_row(DeviceBank& d, const BenchConfig& cfg, const gpu::Ceilings& c,
                      gpu::Timer& timer, uint64_t seed, int& failures) {
  const int count = d.filters.count;
  const int64_t voxels = d.volume.count();
  const std::vector<float> weights = random_volume(voxels * count, seed + 1);
  gpu::Buffer dw(weights.size());
  dw.upload(weights.data(), weights.size());
  const double fmas = static_cast<double>(voxels) * d.filters.extent.count() * count;
  const std::vector<CheckPlan> plans =
      cpu_bank_check(d.volume, d.filters.extent, count, d.filters.taps, d.input, weights.data(),
                     cfg.check_budget_fmas);
  const auto fused = [&](void* stream) {
    cuda_bank::launch_bank_device(d.launch, d.device, d.padded.data(), d.taps.data(), nullptr,
                                  dw.data(), d.outputs.data(), stream);
  };
  Json row;
  Timing t;
  if (!validated_timing(row, d, fmas, plans, cfg, timer, d.outputs, fused, failures, t))
    return row;
  // Separate: the bank writes the `count` responses, then a pass reads them and the weights and
  // writes the sum; that pass is counted at its memory floor (a lower bound of any kernel).
  gpu::Buffer responses(static_cast<std::size_t>(voxels * count));
  const Timing tb = timer.time(
      [&](void* stream) {
        cuda_bank::launch_bank_device(d.launch, d.device, d.padded.data(), d.taps.data(),
                                      responses.data(), nullptr, nullptr, stream);
      },
      cfg.warmup, cfg.repetitions, cfg.flush_l2);
  const double sum_floor_ms =
      (2.0 * count + 1) * static_cast<double>(voxels) * sizeof(float) / c.copy_bytes_per_s * 1e3;
  const double separate_ms = tb.median_ms + sum_floor_ms;
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", static_cast<double>(voxels) / (t.median_ms * 1e-3)},
              {"gflops", 2.0 * fmas / (t.median_ms * 1e-3) * 1e-9},
              {"pct_fma_peak", pct_of_peak(fmas, t.median_ms, c)},
              {"separate",
               {{"bank_responses", timing_json(tb)},
                {"sum_pass_floor_ms", sum_floor_ms},
                {"lower_bound_ms", separate_ms}}},
              {"fused_over_separate", t.median_ms / separate_ms},
              {"target_met", t.median_ms <= separate_ms},
              {"plan", launch_json(d.launch)}});
  return row;
}

}  // namespace

std::vector<Workload> bank_workloads() {
  std::vector<Workload> list;
  for (const BankSpec& s : kBankSpecs) {
    Workload w;
    w.name = s.name;
    w.kind = Workload::Kind::Bank;
    w.volume = parse_shape(s.volume, "volume");
    if (s.size > 0)
      w.filter = cube(w.volume.dims, s.size);
    w.target = s.target;
    w.target_text = s.target_text;
    w.description = s.description;
    list.push_back(w);
  }
  return list;
}

Json bank_row(const Workload& w, const BenchConfig& config, int device,
              const gpu::Ceilings& ceilings, gpu::Timer& timer, uint64_t seed, int& failures) {
  const BankSpec& s = spec_of(w.name);
  if (s.kind == BankRow::Adaptive)
    return adaptive_row(parse_shape(s.volume, "volume"), s.target, config, device, ceilings, seed,
                        failures);
  DeviceBank d;  // the weighted sum writes one output volume, the responses theirs later
  prepare(d, s, device, seed, s.kind == BankRow::WeightedSum ? 1 : 0);
  if (s.kind == BankRow::Responses)
    return responses_row(d, s, config, device, ceilings, timer, failures);
  if (s.kind == BankRow::TensorCores)
    return tensor_core_row(d, s, config, ceilings, timer, failures);
  return weighted_sum_row(d, config, ceilings, timer, seed, failures);
}

void print_bank_rows(std::ostream& out, const Json& rows) {
  char line[320];
  bool header = false;
  for (const Json& r : rows) {
    const std::string name = text(r, "workload");
    if (name.rfind("bank_", 0) != 0 && name != "adaptive_4d")
      continue;
    if (!header) {
      out << "filter bank rows:\n";
      header = true;
    }
    if (r.contains("error")) {
      out << "  " << name << ": " << text(r, "error") << "\n";
      continue;
    }
    if (r.contains("fp32_kernel")) {
      std::snprintf(line, sizeof line,
                    "  %-12s tensor cores %.3f ms (%.1f%% FMA peak, %.0f int8 TOPS) vs FP32 "
                    "kernel %.3f ms (%.1f%%): %.2fx\n",
                    name.c_str(), number(r["device_time"], "median_ms"), number(r, "pct_fma_peak"),
                    number(r, "int8_mma_tops"),
                    number(r["fp32_kernel"]["device_time"], "median_ms"),
                    number(r["fp32_kernel"], "pct_fma_peak"), number(r, "speedup_vs_fp32"));
      out << line;
    } else if (r.contains("separate_dense")) {
      const Json& sep = r["separate_dense"];
      const double sep_ms =
          sep.contains("device_time") ? number(sep["device_time"], "median_ms") : std::nan("");
      std::snprintf(line, sizeof line,
                    "  %-12s bank %.3f ms (%.1f%% FMA peak) vs %s separate dense launches %.3f ms "
                    "(%.1f%%): %.2fx; whole call %.1f ms\n",
                    name.c_str(), number(r["device_time"], "median_ms"), number(r, "pct_fma_peak"),
                    text(r, "filters").c_str(), sep_ms, number(sep, "pct_fma_peak"),
                    number(r, "speedup_vs_separate"), number(r["call_time"], "median_ms"));
      out << line;
    } else if (r.contains("separate")) {
      std::snprintf(line, sizeof line,
                    "  %-12s fused %.3f ms (%.1f%% FMA peak) vs separate >= %.3f ms (bank %.3f + "
                    "sum pass floor %.3f): fused/separate %.2f\n",
                    name.c_str(), number(r["device_time"], "median_ms"), number(r, "pct_fma_peak"),
                    number(r["separate"], "lower_bound_ms"),
                    number(r["separate"]["bank_responses"], "median_ms"),
                    number(r["separate"], "sum_pass_floor_ms"), number(r, "fused_over_separate"));
      out << line;
    } else if (r.contains("stages")) {
      out << "  " << name << " (median of " << text(r, "runs") << " runs, ms):";
      for (const Json& st : r["stages"]) {
        out << " " << text(st, "stage") << " ";
        std::snprintf(line, sizeof line, "%.1f", number(st, "median_ms"));
        out << line;
        if (st.contains("pct_fma_peak")) {
          std::snprintf(line, sizeof line, " (%.1f%% FMA peak)", number(st, "pct_fma_peak"));
          out << line;
        }
        out << ";";
      }
      const Json& k = r["bank_kernels"];
      std::snprintf(line, sizeof line,
                    " total without design %.1f; bank kernels %.1f%% (quadrature) and %.1f%% "
                    "(reconstruction) of FMA peak\n",
                    number(r, "total_without_design_ms"), number(k, "quadrature_pct_fma_peak"),
                    number(k, "reconstruction_pct_fma_peak"));
      out << line;
    }
  }
}

}  // namespace ndconv::perf
