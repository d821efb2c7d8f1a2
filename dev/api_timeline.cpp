// The GPU timeline of one whole filter call on pinned host buffers (the bench's api_* workloads):
// every copy, kernel and runtime call as CUPTI's activity records give them, relative to the
// call's start on the host, and a summary of where the copy engines and the SMs sat idle. The
// machines have no Nsight Systems; CUPTI ships with the toolkit. A development probe, not a
// benchmark: tracing slows the host (each runtime call takes a few microseconds more, and a call's
// first cudaMemcpyAsync 0.36-0.45 ms where untraced it takes 2-8 us, api_costs.cpp), so read the
// GPU side (order, overlap, gaps) from it and the host's times from api_costs.
//   g++ -O2 -std=c++17 -I src -I /usr/local/cuda/include dev/api_timeline.cpp
//       build/src/libndconv_core.a -L/usr/local/cuda/lib64 -lcupti -lcudart -lpthread
//       -o api_timeline && ./api_timeline [--list]
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api_call.h"

namespace {

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) {
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    std::fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    std::exit(1);
  }
}

struct Op {
  enum Kind { Upload, Download, Kernel, Memset, Api } kind;
  uint64_t start, end;
  uint32_t stream;
  uint64_t bytes;
  std::string name;
};

std::mutex ops_mutex;
std::vector<Op> ops;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(ops_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        const bool up = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        ops.push_back({up ? Op::Upload : Op::Download, m->start, m->end, m->streamId, m->bytes,
                       up ? "H2D" : "D2H"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        std::string name = k->name ? k->name : "?";
        if (name.size() > 60)
          name = name.substr(0, 60);
        ops.push_back({Op::Kernel, k->start, k->end, k->streamId, 0, name});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        ops.push_back({Op::Memset, m->start, m->end, m->streamId, m->bytes, "memset"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        const char* name = nullptr;
        cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
        ops.push_back({Op::Api, a->start, a->end, 0, 0, name ? name : "?"});
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

// Length of the union of the intervals of one kind inside [from, to].
double busy_us(const std::vector<Op>& list, Op::Kind kind, uint64_t from, uint64_t to) {
  std::vector<std::pair<uint64_t, uint64_t>> v;
  for (const Op& o : list)
    if (o.kind == kind && o.end > from && o.start < to)
      v.push_back({std::max(o.start, from), std::min(o.end, to)});
  std::sort(v.begin(), v.end());
  uint64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : v) {
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open)
      total += cur_e - cur_s;
    cur_s = s;
    cur_e = e;
    open = true;
  }
  if (open)
    total += cur_e - cur_s;
  return static_cast<double>(total) / 1e3;
}

void span(const std::vector<Op>& list, Op::Kind kind, uint64_t t0, const char* label) {
  uint64_t first = UINT64_MAX, last = 0, bytes = 0;
  int n = 0;
  for (const Op& o : list)
    if (o.kind == kind) {
      first = std::min(first, o.start);
      last = std::max(last, o.end);
      bytes += o.bytes;
      ++n;
    }
  if (n == 0)
    return;
  const double busy = busy_us(list, kind, first, last);
  std::printf("  %-8s %3d ops  %8.1f .. %8.1f us  busy %8.1f us (%.0f%% of its span)", label, n,
              (first - t0) / 1e3, (last - t0) / 1e3, busy, 100.0 * busy / ((last - first) / 1e3));
  if (bytes > 0)
    std::printf("  %.1f GB/s busy", static_cast<double>(bytes) / (busy * 1e3));
  std::printf("\n");
}

void call(const char* name, int dims, ndconv::Index extent, int k, double sigma, bool list) {
  ApiCall run(dims, extent, k, sigma);
  for (int i = 0; i < 4; ++i)
    run();
  check(cuptiActivityFlushAll(1), "flush");
  {
    std::lock_guard<std::mutex> lock(ops_mutex);
    ops.clear();
  }
  uint64_t t0 = 0, t1 = 0;
  check(cuptiGetTimestamp(&t0), "timestamp");
  const ndconv::RunReport r = run();
  check(cuptiGetTimestamp(&t1), "timestamp");
  check(cuptiActivityFlushAll(1), "flush");
  std::vector<Op> v;
  {
    std::lock_guard<std::mutex> lock(ops_mutex);
    for (const Op& op : ops)
      if (op.end >= t0 && op.start <= t1)
        v.push_back(op);
  }
  std::sort(v.begin(), v.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
  std::printf("%s: call %.1f us on the host\n", name, (t1 - t0) / 1e3);
  for (const auto& note : r.notes)
    std::printf("    %s\n", note.c_str());
  span(v, Op::Upload, t0, "H2D");
  span(v, Op::Kernel, t0, "kernels");
  span(v, Op::Download, t0, "D2H");
  span(v, Op::Api, t0, "runtime");
  uint64_t last_up = 0;
  for (const Op& op : v)
    if (op.kind == Op::Upload)
      last_up = std::max(last_up, op.end);
  std::printf("  after the last upload: %.1f us to the call's end\n", (t1 - last_up) / 1e3);
  for (const Op& op : v)
    if (op.kind == Op::Api && op.name.rfind("cudaMemcpyAsync", 0) == 0) {
      std::printf("  the call's first cudaMemcpyAsync: %.1f us on the host, from %.1f us\n",
                  (op.end - op.start) / 1e3, (op.start - t0) / 1e3);
      break;
    }
  // The runtime calls the host makes before the first copy starts, by name.
  uint64_t first_up = UINT64_MAX;
  for (const Op& op : v)
    if (op.kind == Op::Upload)
      first_up = std::min(first_up, op.start);
  std::vector<std::pair<std::string, std::pair<int, double>>> before;
  for (const Op& op : v) {
    if (op.kind != Op::Api || op.start >= first_up)
      continue;
    auto it = std::find_if(before.begin(), before.end(),
                           [&](const auto& b) { return b.first == op.name; });
    if (it == before.end())
      it = before.insert(before.end(), {op.name, {0, 0.0}});
    it->second.first += 1;
    it->second.second += (op.end - op.start) / 1e3;
  }
  std::printf("  runtime calls before the first copy (%.1f us after the call's start):",
              (first_up - t0) / 1e3);
  for (const auto& [api, stat] : before)
    std::printf(" %s x%d %.1f us;", api.c_str(), stat.first, stat.second);
  std::printf("\n");
  if (!list)
    return;
  for (const Op& op : v) {
    if (op.kind == Op::Api && op.end - op.start < 5000)
      continue;  // runtime calls only where they take 5 us or more
    std::printf("    %8.1f %8.1f  %-6s s%-3u %9.1f KiB  %s\n", (op.start - t0) / 1e3,
                (op.end - t0) / 1e3,
                op.kind == Op::Api      ? "api"
                : op.kind == Op::Kernel ? "kernel"
                                        : "copy",
                op.stream, op.bytes / 1024.0, op.name.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool list = argc > 1 && std::strcmp(argv[1], "--list") == 0;
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "callbacks");
  for (const auto kind : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                          CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME})
    check(cuptiActivityEnable(kind), "enable");
  call("api_dense3d_11 256^3", 3, {256, 256, 256, 1}, 11, 0, list);
  call("api_dense4d_7 96^3x16", 4, {96, 96, 96, 16}, 7, 0, list);
  call("api_dense2d_17 4096^2", 2, {4096, 4096, 1, 1}, 17, 0, list);
  call("api_gauss3d_s2 256^3", 3, {256, 256, 256, 1}, 0, 2.0, list);
  check(cuptiActivityFlushAll(1), "flush");
  return 0;
}
