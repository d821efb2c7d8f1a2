// Where a whole filter call on pinned host buffers spends its time beyond its transfers: the
// bench's api_* workloads and smaller volumes of the same filters, each call's wall time with the
// engine's own account (-v notes: host set-up, launches, when all was enqueued), and the CUDA
// runtime calls a call makes, timed alone. A development probe, not a benchmark.
//   g++ -O2 -std=c++17 -I src dev/api_costs.cpp build/src/libndconv_core.a
//       -L/usr/local/cuda/lib64 -lcudart -lpthread -o api_costs && ./api_costs
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "api_call.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median wall time of `reps` calls of f, after two warm-up calls.
template <typename F>
double median_ms(int reps, F f) {
  f();
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void call(const char* name, int dims, ndconv::Index extent, int k, double sigma) {
  ApiCall call(dims, extent, k, sigma);
  ndconv::RunReport r;
  const double wall = median_ms(7, [&] { r = call(); });
  std::printf(
      "%-22s %9.3f ms wall, %.3f ms engine; gpu upload %.3f compute %.3f download %.3f ms\n", name,
      wall, r.seconds_total * 1e3, r.seconds_upload * 1e3, r.seconds_compute * 1e3,
      r.seconds_download * 1e3);
  for (const auto& note : r.notes)
    std::printf("    %s\n", note.c_str());
}

}  // namespace

int main() {
  check(cudaFree(nullptr), "cudaFree(0)");
  const int reps = 200;
  cudaStream_t s = nullptr;
  std::printf("stream create+destroy %.4f ms\n", median_ms(reps, [&] {
                check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
                check(cudaStreamDestroy(s), "stream destroy");
              }));
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  cudaEvent_t e = nullptr;
  std::printf("event create+destroy %.4f ms\n", median_ms(reps, [&] {
                check(cudaEventCreate(&e), "event");
                check(cudaEventDestroy(e), "event destroy");
              }));
  check(cudaEventCreate(&e), "event");
  std::printf("event record+sync (idle) %.4f ms\n", median_ms(reps, [&] {
                check(cudaEventRecord(e, s), "record");
                check(cudaEventSynchronize(e), "sync");
              }));
  std::printf("stream wait event %.4f ms\n",
              median_ms(reps, [&] { check(cudaStreamWaitEvent(s, e, 0), "wait"); }));
  float* d = nullptr;
  check(cudaMalloc(&d, 1 << 20), "malloc");
  std::vector<float> h(1024);
  std::printf("memcpy async 4 KiB pageable + sync %.4f ms\n", median_ms(reps, [&] {
                check(cudaMemcpyAsync(d, h.data(), 4096, cudaMemcpyHostToDevice, s), "copy");
                check(cudaStreamSynchronize(s), "sync");
              }));
  cudaPointerAttributes attr{};
  std::printf("pointer attributes %.4f ms\n",
              median_ms(reps, [&] { check(cudaPointerGetAttributes(&attr, d), "attr"); }));
  int dev = 0;
  std::printf("set device %.4f ms\n", median_ms(reps, [&] { check(cudaSetDevice(dev), "set"); }));
  check(cudaFree(d), "free");

  // The host's time in one cudaMemcpyAsync of 8 MiB from pinned memory: the first copy on a
  // stream created just before it, and a copy on a stream that has done work before.
  const size_t big = size_t{8} << 20;
  void* pinned = nullptr;
  check(cudaHostAlloc(&pinned, big, cudaHostAllocDefault), "host alloc");
  check(cudaMalloc(&d, big), "malloc");
  const auto copy_call_ms = [&](cudaStream_t stream) {
    const auto t0 = Clock::now();
    check(cudaMemcpyAsync(d, pinned, big, cudaMemcpyHostToDevice, stream), "copy");
    const double ms = ms_since(t0);
    check(cudaStreamSynchronize(stream), "sync");
    return ms;
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<double> fresh, reused;
    for (int i = 0; i < 20; ++i) {
      cudaStream_t t = nullptr;
      check(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "stream");
      fresh.push_back(copy_call_ms(t));
      check(cudaStreamDestroy(t), "stream destroy");
      reused.push_back(copy_call_ms(s));
    }
    std::sort(fresh.begin(), fresh.end());
    std::sort(reused.begin(), reused.end());
    std::printf(
        "8 MiB pinned cudaMemcpyAsync, host time of the call: first on a new stream median %.4f "
        "(min %.4f, max %.4f) ms; on a used stream median %.4f (max %.4f) ms\n",
        fresh[10], fresh[0], fresh[19], reused[10], reused[19]);
  }
  check(cudaFree(d), "free");
  check(cudaFreeHost(pinned), "free host");

  call("dense3d_11 256^3", 3, {256, 256, 256, 1}, 11, 0);
  call("dense3d_11 128^3", 3, {128, 128, 128, 1}, 11, 0);
  call("dense3d_11 32^3", 3, {32, 32, 32, 1}, 11, 0);
  call("dense4d_7 96^3x16", 4, {96, 96, 96, 16}, 7, 0);
  call("dense2d_17 4096^2", 2, {4096, 4096, 1, 1}, 17, 0);
  call("gauss3d_s2 256^3", 3, {256, 256, 256, 1}, 0, 2.0);
  call("gauss3d_s2 32^3", 3, {32, 32, 32, 1}, 0, 2.0);
  return 0;
}
