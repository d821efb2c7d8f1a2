// CUDA side of the perf library: the ceilings' microkernels, device buffers and the event timer.
//
// FMA peak: every thread runs kChains independent FMA chains (enough independent work to hide the
// FMA latency at full occupancy), on a grid of several blocks per SM, long enough (tens of ms)
// that launch overhead is negligible. The result is stored so the compiler cannot drop the loop.
// Copy bandwidth: cudaMemcpyAsync device to device of a buffer much larger than L2, counting the
// bytes read plus the bytes written, as the issue defines the memory floor.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "perf/gpu.h"

namespace ndconv::perf::gpu {

namespace {

// The backend's check: a failed call becomes ndconv::CudaError naming the call and the line.
#define PERF_CUDA(call) NDCONV_CUDA_CHECK(call)

constexpr int kChains = 8;
constexpr int kFmaThreads = 256;

__global__ void fma_kernel(float* out, int iterations, float b, float c) {
  float a[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j)
    a[j] = static_cast<float>(threadIdx.x + j) * 1e-3f;
    // Unrolled so that loop bookkeeping takes a negligible share of the issue slots (one warp
    // instruction per clock per SM sub-partition: every non-FMA instruction costs FMA throughput).
#pragma unroll 16
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j)
      a[j] = fmaf(a[j], b, c);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j)
    s += a[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

}  // namespace

void require(int device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw GpuUnavailable(std::string("no usable GPU: ") + cudaGetErrorName(e) + " (" +
                         std::to_string(static_cast<int>(e)) + "): " + cudaGetErrorString(e));
  }
  if (count == 0)
    throw GpuUnavailable("no usable GPU: no CUDA device found");
  if (device < 0 || device >= count) {
    throw GpuUnavailable("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                         " found)");
  }
}

DeviceFacts facts(int device) {
  require(device);
  return cuda_backend::device_attributes(device);
}

Buffer::Buffer(std::size_t count) : count_(count) {
  if (count)
    PERF_CUDA(cudaMalloc(&data_, count * sizeof(float)));
}

Buffer::~Buffer() {
  if (data_)
    cudaFree(data_);
}

Buffer::Buffer(Buffer&& o) noexcept : data_(o.data_), count_(o.count_) {
  o.data_ = nullptr;
  o.count_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (data_)
      cudaFree(data_);
    data_ = o.data_;
    count_ = o.count_;
    o.data_ = nullptr;
    o.count_ = 0;
  }
  return *this;
}

void Buffer::upload(const float* host, std::size_t count) {
  PERF_CUDA(cudaMemcpy(data_, host, count * sizeof(float), cudaMemcpyHostToDevice));
}

void Buffer::download(float* host, std::size_t count) const {
  PERF_CUDA(cudaMemcpy(host, data_, count * sizeof(float), cudaMemcpyDeviceToHost));
}

void Buffer::poison() {
  // All bits set is a quiet NaN in IEEE 754 single precision.
  PERF_CUDA(cudaMemset(data_, 0xFF, count_ * sizeof(float)));
}

PinnedHostBuffer::PinnedHostBuffer(std::size_t count) : count_(count) {
  if (count)
    PERF_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(float),
                            cudaHostAllocDefault));
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (data_)
    cudaFreeHost(data_);
}

struct Timer::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
};

Timer::Timer(int device) : impl_(std::make_unique<Impl>()) {
  const DeviceFacts f = facts(device);
  impl_->device = device;
  PERF_CUDA(cudaSetDevice(device));
  PERF_CUDA(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  PERF_CUDA(cudaEventCreate(&impl_->start));
  PERF_CUDA(cudaEventCreate(&impl_->stop));
  impl_->flush_bytes = static_cast<std::size_t>(2 * f.l2_bytes);
  PERF_CUDA(cudaMalloc(&impl_->flush, impl_->flush_bytes));
}

Timer::~Timer() {
  if (impl_->flush)
    cudaFree(impl_->flush);
  if (impl_->start)
    cudaEventDestroy(impl_->start);
  if (impl_->stop)
    cudaEventDestroy(impl_->stop);
  if (impl_->stream)
    cudaStreamDestroy(impl_->stream);
}

void* Timer::stream() const {
  return impl_->stream;
}

void Timer::synchronize() {
  PERF_CUDA(cudaStreamSynchronize(impl_->stream));
  PERF_CUDA(cudaGetLastError());
}

Timing Timer::time(const std::function<void(void* stream)>& work, int warmup, int repetitions,
                   bool flush_l2) {
  PERF_CUDA(cudaSetDevice(impl_->device));
  for (int i = 0; i < warmup; ++i)
    work(impl_->stream);
  synchronize();
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    if (flush_l2) {
      // Overwrite twice the L2 with a changing byte so that nothing of the inputs stays cached.
      PERF_CUDA(cudaMemsetAsync(impl_->flush, r & 0xFF, impl_->flush_bytes, impl_->stream));
    }
    PERF_CUDA(cudaEventRecord(impl_->start, impl_->stream));
    work(impl_->stream);
    PERF_CUDA(cudaEventRecord(impl_->stop, impl_->stream));
    PERF_CUDA(cudaEventSynchronize(impl_->stop));
    PERF_CUDA(cudaGetLastError());
    float ms = 0;
    PERF_CUDA(cudaEventElapsedTime(&ms, impl_->start, impl_->stop));
    samples.push_back(ms);
  }
  return summarize(samples);
}

namespace {

// Host <-> device bandwidth as the engine's synchronous copies see it: the host clock around one
// large cudaMemcpy (256 MiB, or the device buffer if smaller), from and to memory of each kind.
void measure_host_bandwidth(int device, int repetitions, Buffer& on_device, Ceilings& c) {
  PERF_CUDA(cudaSetDevice(device));
  const std::size_t count = std::min<std::size_t>(on_device.size(), (std::size_t{1} << 28) / 4);
  const double bytes = static_cast<double>(count * sizeof(float));
  std::vector<float> pageable(count, 1.0f);  // written, so that its pages exist before timing
  PinnedHostBuffer pinned(count);
  std::fill(pinned.data(), pinned.data() + count, 1.0f);
  auto rate = [&](float* host, bool upload) {
    const Timing t = time_host(
        [&] {
          if (upload)
            on_device.upload(host, count);
          else
            on_device.download(host, count);
        },
        1, repetitions);
    return bytes / (t.median_ms * 1e-3);
  };
  c.h2d_pageable_bytes_per_s = rate(pageable.data(), true);
  c.d2h_pageable_bytes_per_s = rate(pageable.data(), false);
  c.h2d_pinned_bytes_per_s = rate(pinned.data(), true);
  c.d2h_pinned_bytes_per_s = rate(pinned.data(), false);
  // Both at once: the upload into `on_device` and a download from a second device buffer into a
  // second pinned buffer, each on its own stream, the host clock around both.
  Buffer other(count);
  PinnedHostBuffer returned(count);
  cudaStream_t streams[2];
  for (cudaStream_t& s : streams)
    PERF_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Timing both = time_host(
      [&] {
        PERF_CUDA(cudaMemcpyAsync(on_device.data(), pinned.data(), count * sizeof(float),
                                  cudaMemcpyHostToDevice, streams[0]));
        PERF_CUDA(cudaMemcpyAsync(returned.data(), other.data(), count * sizeof(float),
                                  cudaMemcpyDeviceToHost, streams[1]));
        for (cudaStream_t s : streams)
          PERF_CUDA(cudaStreamSynchronize(s));
      },
      1, repetitions);
  for (cudaStream_t s : streams)
    PERF_CUDA(cudaStreamDestroy(s));
  c.duplex_pinned_bytes_per_s = bytes / (both.median_ms * 1e-3);
  c.host_copy_bytes = static_cast<int64_t>(bytes);
}

}  // namespace

Ceilings measure_ceilings(int device, int repetitions) {
  const DeviceFacts f = facts(device);
  Timer timer(device);
  Ceilings c;

  // FMA peak: 8 blocks of 256 threads per SM (full occupancy at <= 32 registers per thread).
  const int blocks = f.multiprocessors * (f.max_threads_per_sm / kFmaThreads);
  const int iterations = 1 << 14;
  Buffer sink(static_cast<std::size_t>(blocks) * kFmaThreads);
  const Timing fma = timer.time(
      [&](void* s) {
        fma_kernel<<<blocks, kFmaThreads, 0, static_cast<cudaStream_t>(s)>>>(
            sink.data(), iterations, 0.999999f, 1e-7f);
      },
      2, repetitions, false);
  const double fmas = static_cast<double>(blocks) * kFmaThreads * iterations * kChains;
  c.fma_ms = fma.median_ms;
  c.fma_flops = 2.0 * fmas / (fma.median_ms * 1e-3);

  // Copy bandwidth: 1 GiB, or a quarter of the memory on small cards, and at least 8x the L2.
  std::size_t bytes = std::size_t{1} << 30;
  bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(f.total_memory / 4));
  bytes = std::max<std::size_t>(bytes, static_cast<std::size_t>(8 * f.l2_bytes));
  Buffer a(bytes / sizeof(float)), b(bytes / sizeof(float));
  PERF_CUDA(cudaMemset(a.data(), 1, bytes));
  const Timing copy = timer.time(
      [&](void* s) {
        PERF_CUDA(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice,
                                  static_cast<cudaStream_t>(s)));
      },
      2, repetitions, false);
  c.copy_ms = copy.median_ms;
  c.copy_bytes = static_cast<int64_t>(bytes);
  c.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / (copy.median_ms * 1e-3);
  measure_host_bandwidth(device, repetitions, a, c);
  return c;
}

}  // namespace ndconv::perf::gpu
