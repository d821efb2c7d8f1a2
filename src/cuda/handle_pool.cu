// The per-device pools of streams and events (handle_pool.h).
#include <map>
#include <mutex>
#include <vector>

#include "cuda/check.h"
#include "cuda/handle_pool.h"

namespace ndconv::cuda_backend {

namespace {

struct DevicePool {
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events[2];  // [timing]
};

std::mutex g_pools_mutex;
// Never destroyed, so that process exit does not call into a runtime already torn down.
std::map<int, DevicePool>& pools() {
  static auto* p = new std::map<int, DevicePool>();
  return *p;
}

}  // namespace

cudaStream_t take_stream(int device) {
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    std::vector<cudaStream_t>& idle = pools()[device].streams;
    if (!idle.empty()) {
      const cudaStream_t s = idle.back();
      idle.pop_back();
      return s;
    }
  }
  cudaStream_t s = nullptr;
  NDCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void give_stream(int device, cudaStream_t stream) noexcept {
  if (stream == nullptr)
    return;
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    std::vector<cudaStream_t>& idle = pools()[device].streams;
    if (idle.size() < kKeptStreams) {
      idle.push_back(stream);
      return;
    }
  }
  cudaStreamDestroy(stream);
}

cudaEvent_t take_event(int device, bool timing) {
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    std::vector<cudaEvent_t>& idle = pools()[device].events[timing ? 1 : 0];
    if (!idle.empty()) {
      const cudaEvent_t e = idle.back();
      idle.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  NDCONV_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

void give_event(int device, bool timing, cudaEvent_t event) noexcept {
  if (event == nullptr)
    return;
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    std::vector<cudaEvent_t>& idle = pools()[device].events[timing ? 1 : 0];
    if (idle.size() < kKeptEvents) {
      idle.push_back(event);
      return;
    }
  }
  cudaEventDestroy(event);
}

void release_idle_handles() noexcept {
  std::map<int, DevicePool> idle;
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    idle.swap(pools());
  }
  for (auto& [device, pool] : idle) {
    for (const cudaStream_t s : pool.streams)
      cudaStreamDestroy(s);
    for (const auto& list : pool.events)
      for (const cudaEvent_t e : list)
        cudaEventDestroy(e);
  }
}

IdleHandles idle_handles() noexcept {
  IdleHandles h;
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  for (const auto& [device, pool] : pools()) {
    h.streams += pool.streams.size();
    h.events += pool.events[0].size() + pool.events[1].size();
  }
  return h;
}

}  // namespace ndconv::cuda_backend
