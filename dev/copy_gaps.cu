// What a download stream's per-chunk bookkeeping costs: eight 8 MiB device-to-host copies on one
// stream while eight 8 MiB host-to-device copies run on another (as in the resident pipeline),
// with nothing between the copies, or with the events and waits a chunk's download has around
// it (a wait for the chunk's kernel on a compute stream, timing events before and after). The
// span of the downloads from the first one's start to the last one's end, median of 9. A
// development probe, not a benchmark.
//   nvcc -O2 -std=c++17 -arch=sm_90 dev/copy_gaps.cu -o copy_gaps && ./copy_gaps
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void touch(float* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    p[0] += 1.0f;
}

constexpr int kCopies = 8;
constexpr size_t kBytes = size_t{8} << 20;

// Between the downloads: nothing; a wait for a kernel that has ended; the pipeline's chain (the
// kernel of copy i waits for upload i, the download for the kernel) with timing events before and
// after each download, or with one timing-free event after it.
enum class Between { Nothing, WaitForEndedKernel, ChainTimingEvents, ChainPlainEvent };

const char* name(Between b) {
  switch (b) {
    case Between::Nothing:
      return "copies only";
    case Between::WaitForEndedKernel:
      return "wait for an ended kernel";
    case Between::ChainTimingEvents:
      return "upload-kernel-download chain, timing events";
    case Between::ChainPlainEvent:
      return "upload-kernel-download chain, plain event";
  }
  return "?";
}

}  // namespace

int main() {
  char *h_in = nullptr, *h_out = nullptr, *d_in = nullptr, *d_out = nullptr;
  float* d_flag = nullptr;
  check(cudaHostAlloc(&h_in, kCopies * kBytes, cudaHostAllocPortable), "host alloc");
  check(cudaHostAlloc(&h_out, kCopies * kBytes, cudaHostAllocPortable), "host alloc");
  check(cudaMalloc(&d_in, kCopies * kBytes), "malloc");
  check(cudaMalloc(&d_out, kCopies * kBytes), "malloc");
  check(cudaMalloc(&d_flag, 256), "malloc");
  cudaStream_t up, down, compute;
  for (cudaStream_t* s : {&up, &down, &compute})
    check(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), "stream");
  std::vector<cudaEvent_t> kernel_done(kCopies), start(kCopies), done(kCopies), plain(kCopies),
      uploaded(kCopies);
  for (int i = 0; i < kCopies; ++i) {
    check(cudaEventCreateWithFlags(&uploaded[i], cudaEventDisableTiming), "event");
    check(cudaEventCreate(&kernel_done[i]), "event");
    check(cudaEventCreate(&start[i]), "event");
    check(cudaEventCreate(&done[i]), "event");
    check(cudaEventCreateWithFlags(&plain[i], cudaEventDisableTiming), "event");
  }
  cudaEvent_t first, last;
  check(cudaEventCreate(&first), "event");
  check(cudaEventCreate(&last), "event");

  for (const bool duplex : {false, true})
    for (const Between b : {Between::Nothing, Between::WaitForEndedKernel,
                            Between::ChainTimingEvents, Between::ChainPlainEvent}) {
      const bool chain = b == Between::ChainTimingEvents || b == Between::ChainPlainEvent;
      if (chain && !duplex)
        continue;
      std::vector<float> spans;
      for (int rep = 0; rep < 10; ++rep) {
        check(cudaDeviceSynchronize(), "sync");
        for (int i = 0; i < kCopies; ++i) {  // the kernels the downloads wait for, done by now
          touch<<<1, 32, 0, compute>>>(d_flag);
          check(cudaEventRecord(kernel_done[i], compute), "record");
        }
        check(cudaStreamSynchronize(compute), "sync");
        check(cudaEventRecord(first, down), "record");
        for (int i = 0; i < kCopies; ++i) {
          if (duplex) {
            check(cudaMemcpyAsync(d_in + i * kBytes, h_in + i * kBytes, kBytes,
                                  cudaMemcpyHostToDevice, up),
                  "copy up");
            check(cudaEventRecord(uploaded[i], up), "record");
          }
          if (chain) {
            check(cudaStreamWaitEvent(compute, uploaded[i], 0), "wait");
            touch<<<1, 32, 0, compute>>>(d_flag);
            check(cudaEventRecord(kernel_done[i], compute), "record");
          }
          if (b != Between::Nothing)
            check(cudaStreamWaitEvent(down, kernel_done[i], 0), "wait");
          if (b == Between::ChainTimingEvents)
            check(cudaEventRecord(start[i], down), "record");
          check(cudaMemcpyAsync(h_out + i * kBytes, d_out + i * kBytes, kBytes,
                                cudaMemcpyDeviceToHost, down),
                "copy down");
          if (b == Between::ChainTimingEvents)
            check(cudaEventRecord(done[i], down), "record");
          if (b == Between::ChainPlainEvent)
            check(cudaEventRecord(plain[i], down), "record");
        }
        check(cudaEventRecord(last, down), "record");
        check(cudaDeviceSynchronize(), "sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, first, last), "elapsed");
        if (rep > 0)
          spans.push_back(ms);
      }
      std::sort(spans.begin(), spans.end());
      const float ms = spans[spans.size() / 2];
      std::printf("%-8s %-46s %7.3f ms for %d x 8 MiB down (%.1f GB/s)\n",
                  duplex ? "duplex" : "one-way", name(b), ms, kCopies,
                  kCopies * kBytes / (ms * 1e6));
    }
  return 0;
}
