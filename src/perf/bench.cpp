// The bench's run (bench.h: run_bench): choosing the workloads, measuring the device's ceilings,
// running each row (bench_rows.h, median_rows.h, bank_rows.h, e2e.h) and the summary; and the
// timings as the rows write them. The workloads are listed in bench_workloads.cpp and printed by
// bench_table.cpp.
#include "perf/bench.h"

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "perf/bank_rows.h"
#include "perf/tensor_dense_rows.h"
#include "perf/bench_rows.h"
#include "perf/context.h"
#include "perf/fft_rows.h"
#include "perf/gpu.h"
#include "perf/median_rows.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

using Kind = Workload::Kind;

bool needs_gpu(const Workload& w) {
  return w.kind == Kind::GpuDense || w.kind == Kind::GpuSeparable || w.kind == Kind::Api ||
         w.kind == Kind::GpuMedian || w.kind == Kind::Bank || w.kind == Kind::GpuFft ||
         w.kind == Kind::GpuTensorDense;
}

const char* backend_text(Kind k) {
  switch (k) {
    case Kind::CpuDense:
    case Kind::CpuBank:
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
    else if (w.kind == Kind::GpuFft)
      row = fft_gpu_row(w, cfg, g, seed, result.failures);
    else if (w.kind == Kind::GpuTensorDense)
      row = tensor_dense_row(w, cfg, g.dev, g.ceil, *g.timer, seed, result.failures);
    else if (w.kind == Kind::EndToEnd)
      row = e2e->sequence_row(w.command, w.format, result.failures);
    else if (w.kind == Kind::Batch)
      row = e2e->batch_row(result.failures);
    else if (w.kind == Kind::CpuBank)
      row = cpu_bank_row(w, cfg, seed, result.failures);
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
