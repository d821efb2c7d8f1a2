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

// An idle handle of `device` from the list `list_of` picks in its pool, if there is one.
template <typename Handle, typename ListOf>
bool take_idle(int device, ListOf list_of, Handle& handle) {
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  std::vector<Handle>& idle = list_of(pools()[device]);
  if (idle.empty())
    return false;
  handle = idle.back();
  idle.pop_back();
  return true;
}

// Keeps `handle` idle unless its list already holds `cap`.
template <typename Handle, typename ListOf>
bool keep_idle(int device, ListOf list_of, Handle handle, std::size_t cap) noexcept {
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  std::vector<Handle>& idle = list_of(pools()[device]);
  if (idle.size() >= cap)
    return false;
  idle.push_back(handle);
  return true;
}

// The lists take_idle and keep_idle pick from.
auto streams_of() {
  return [](DevicePool& pool) -> std::vector<cudaStream_t>& { return pool.streams; };
}

auto events_of(bool timing) {
  return [timing](DevicePool& pool) -> std::vector<cudaEvent_t>& {
    return pool.events[timing ? 1 : 0];
  };
}

}  // namespace

cudaStream_t take_stream(int device) {
  cudaStream_t s = nullptr;
  if (!take_idle(device, streams_of(), s))
    NDCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void give_stream(int device, cudaStream_t stream) noexcept {
  if (stream != nullptr && !keep_idle(device, streams_of(), stream, kKeptStreams))
    cudaStreamDestroy(stream);
}

cudaEvent_t take_event(int device, bool timing) {
  cudaEvent_t e = nullptr;
  if (!take_idle(device, events_of(timing), e))
    NDCONV_CUDA_CHECK(
        cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

void give_event(int device, bool timing, cudaEvent_t event) noexcept {
  if (event != nullptr && !keep_idle(device, events_of(timing), event, kKeptEvents))
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
