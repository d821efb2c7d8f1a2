// Experiment: what starting CUDA on every device of a machine costs a process, one device after
// the other (as a probe that asks each device in turn) or all at once (one thread per device),
// and what the first large allocation on each then costs. Prints one line per step (seconds since
// main); the caller times the whole process, so that the end shows as wall - last line.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 dev/cuda_devices_start.cu -o cuda_devices_start
// usage: cuda_devices_start {serial|parallel|first} [DEVICE_MB]
//   serial: cudaSetDevice + cudaMemGetInfo on device 0, then 1, ...; parallel: the same on one
//   thread per device; first: device 0 only. Then DEVICE_MB allocated and set on each device.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda_check.h"

static const auto g_start = std::chrono::steady_clock::now();

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

static void start_device(int d, double* seconds) {
  const double t = now();
  CHECK(cudaSetDevice(d));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  *seconds = now() - t;
}

int main(int argc, char** argv) {
  if (argc < 2)
    return 2;
  const size_t device_bytes = argc > 2 ? size_t(std::atol(argv[2])) << 20 : 0;
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  std::printf("cudaGetDeviceCount %d devices at %.4f\n", count, now());
  if (std::strcmp(argv[1], "first") == 0)
    count = 1;
  std::vector<double> seconds(count);
  const double t = now();
  if (std::strcmp(argv[1], "parallel") == 0) {
    std::vector<std::thread> threads;
    for (int d = 0; d < count; ++d)
      threads.emplace_back(start_device, d, &seconds[d]);
    for (auto& thread : threads)
      thread.join();
  } else {
    for (int d = 0; d < count; ++d)
      start_device(d, &seconds[d]);
  }
  for (int d = 0; d < count; ++d)
    std::printf("device %d started in %.4f s\n", d, seconds[d]);
  std::printf("all started in %.4f s (at %.4f)\n", now() - t, now());
  if (device_bytes > 0) {
    for (int d = 0; d < count; ++d) {
      const double a = now();
      CHECK(cudaSetDevice(d));
      void* p = nullptr;
      CHECK(cudaMalloc(&p, device_bytes));
      const double b = now();
      CHECK(cudaMemset(p, 0, device_bytes));
      CHECK(cudaDeviceSynchronize());
      std::printf("device %d: cudaMalloc %.4f s, first cudaMemset %.4f s\n", d, b - a, now() - b);
    }
  }
  std::printf("end %.4f\n", now());
  std::fflush(stdout);
  return 0;
}
