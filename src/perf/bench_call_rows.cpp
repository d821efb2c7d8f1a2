// The bench's whole-call timings (bench_rows.h): a GPU workload's engine call on pageable and on
// pinned host buffers, and the api rows that hold those calls against
// max(upload, kernel, download) at the host bandwidths measured in the same run.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "ndconv/memory.h"
#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/check.h"
#include "perf/floors.h"
#include "perf/gpu.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

using Kind = Workload::Kind;

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

}  // namespace

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

}  // namespace ndconv::perf
