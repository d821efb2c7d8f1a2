// The bench's table for people (bench.h: print_bench_table): the kernel rows, the api rows, the
// whole-command rows and the bank rows, each with its own columns.
#include <cstdio>
#include <ostream>
#include <string>

#include "perf/bank_rows.h"
#include "perf/tensor_dense_rows.h"
#include "perf/bench.h"
#include "perf/fft_rows.h"
#include "perf/report.h"

namespace ndconv::perf {

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
      std::snprintf(buf, sizeof buf, "%.1fx ITK, %.0f%% CPU FMA", number(r, "speedup_vs_peer"),
                    number(r, "pct_cpu_fma_peak"));
      ceiling = buf;
    } else if (r.contains("pct_cpu_fma_peak")) {
      std::snprintf(buf, sizeof buf, "%.1f%% CPU FMA peak", number(r, "pct_cpu_fma_peak"));
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
    if (r.contains("other_plan")) {
      // The separable rows: the plan the rule did not take (slab kernel or column passes).
      const Json& c = r["other_plan"];
      std::snprintf(line, sizeof line, "  %s on the %s plan instead: %.4f ms, %.2fx memory floor\n",
                    text(r, "workload").c_str(), text(c, "family").c_str(),
                    number(c["device_time"], "median_ms"), number(c, "floor_ratio"));
      out << line;
    }
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
  Json kernels = Json::array(), api = Json::array(), commands = Json::array(), fft = Json::array();
  for (const Json& r : doc["workloads"]) {
    const std::string name = text(r, "workload");
    if (name.rfind("api_", 0) == 0)
      api.push_back(r);
    else if (name.rfind("fft", 0) == 0)
      fft.push_back(r);
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
  print_tensor_dense_rows(out, kernels);
  if (!fft.empty())
    print_fft_rows(out, fft);
}

}  // namespace ndconv::perf
