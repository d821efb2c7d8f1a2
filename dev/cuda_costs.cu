// Experiment: what CUDA's fixed costs are on this machine, as a command pays them: the start-up,
// pinned host allocations of a command's sizes, device allocations, and the process's end with
// those still held or freed first, or the context reset before the end (on this thread, or on
// another while this one does HOST_MB of first-touch writes, as a command writing its output
// would). Prints one line per step (seconds since main); the caller times the whole process
// (dev/cuda_costs.py) so that the end shows as wall - last line.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 dev/cuda_costs.cu -o cuda_costs
// usage: cuda_costs {keep|free|reset|reset-bg} PINNED_MB DEVICE_MB [HOST_MB]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

static const auto g_start = std::chrono::steady_clock::now();

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::fflush(stdout);                                                    \
      std::_Exit(1);                                                          \
    }                                                                         \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4)
    return 2;
  const bool free_first = std::strcmp(argv[1], "free") == 0;
  const bool reset = std::strcmp(argv[1], "reset") == 0;
  const bool reset_bg = std::strcmp(argv[1], "reset-bg") == 0;
  const size_t host_work = argc > 4 ? size_t(std::atol(argv[4])) << 20 : 0;
  const size_t pinned = size_t(std::atol(argv[2])) << 20, device = size_t(std::atol(argv[3])) << 20;
  double t = now();
  auto step = [&](const char* what) {
    const double n = now();
    std::printf("%-28s %8.4f s (at %.4f)\n", what, n - t, n);
    t = n;
  };
  CHECK(cudaFree(nullptr));
  step("start-up (cudaFree(0))");
  void* host = nullptr;
  if (pinned) {
    CHECK(cudaHostAlloc(&host, pinned, cudaHostAllocDefault));
    step("cudaHostAlloc");
    std::memset(host, 1, pinned);
    step("memset pinned");
  }
  void* dev = nullptr;
  if (device) {
    CHECK(cudaMalloc(&dev, device));
    step("cudaMalloc");
    CHECK(cudaMemset(dev, 0, device));
    CHECK(cudaDeviceSynchronize());
    step("cudaMemset");
  }
  if (pinned && device) {
    CHECK(cudaMemcpy(dev, host, pinned < device ? pinned : device, cudaMemcpyHostToDevice));
    step("cudaMemcpy up");
  }
  if (free_first) {
    if (host)
      CHECK(cudaFreeHost(host));
    step("cudaFreeHost");
    if (dev)
      CHECK(cudaFree(dev));
    step("cudaFree");
  }
  if (reset) {
    CHECK(cudaDeviceReset());
    step("cudaDeviceReset");
  }
  std::thread resetter;
  if (reset_bg)
    resetter = std::thread([] { CHECK(cudaDeviceReset()); });
  if (host_work) {
    std::vector<char> bytes(host_work);
    std::memset(bytes.data(), 2, host_work);
    step("host writes");
  }
  if (resetter.joinable()) {
    resetter.join();
    step("join the reset");
  }
  std::printf("end %.4f\n", now());
  std::fflush(stdout);
  std::_Exit(0);
}
