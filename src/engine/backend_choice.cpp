// The backend choice (backend_choice.h), the process's probe cache and CUDA's early start.
#include "engine/backend_choice.h"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_host.h"
#include "ndconv/device.h"
#include "ndconv/errors.h"

namespace ndconv {

namespace {

// The device list for the backend choice (a probe asks every device for its properties, not for
// its free memory, so that it starts CUDA on no device; the list does not change while the
// process runs). Never destroyed: the warm-up thread may still be
// probing while static destructors run at exit.
struct ProbeCache {
  std::mutex mutex;
  CudaStatus status;
  bool usable_seen = false;
};
ProbeCache& probe_cache() {
  static ProbeCache* cache = new ProbeCache();
  return *cache;
}

// True from a warm-up's start until its thread has finished; the start, in steady-clock ticks.
std::atomic<bool> g_warm_up_pending{false};
std::atomic<int64_t> g_warm_up_began{0};

}  // namespace

CudaStatus detail::cached_probe() {
  ProbeCache& c = probe_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.usable_seen) {
    c.status = cuda_backend::probe(false);
    c.usable_seen = c.status.usable;
  }
  return c.status;
}

double detail::warm_up_elapsed_seconds() {
  if (!g_warm_up_pending.load())
    return 0.0;
  const auto began = std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(g_warm_up_began.load()));
  return detail::seconds_since(began);
}

Backend detail::choose_backend(const Options& options, const BackendWork& work, RunReport& report,
                               CostEstimate* estimate) {
  if (estimate != nullptr)
    *estimate = CostEstimate{};
  report.backend = Backend::Cpu;
  if (options.backend == Backend::Cpu) {
    report.backend_reason = "CPU requested";
    return Backend::Cpu;
  }
  const bool forced = options.backend == Backend::Cuda;
  std::string why_gpu = "CUDA requested";
  if (!forced && work.cost) {
    CostInput cost = *work.cost;
    // A caller may cost the start-up as paid (ndconv/plan.h, FilterRequest::startup_hidden).
    cost.cuda_started = cost.cuda_started || cuda_backend::started(options.cuda_device);
    cost.startup_elapsed_seconds = cost.cuda_started ? 0.0 : warm_up_elapsed_seconds();
    const CostEstimate e = estimate_costs(cost);
    if (estimate != nullptr)
      *estimate = e;
    if (!e.prefer_gpu) {
      // CUDA is not started to find out whether a GPU is there: the estimate says why not.
      report.backend_reason = "auto: " + e.reason + "; no GPU was probed";
      return Backend::Cpu;
    }
    why_gpu = "auto: " + e.reason;
    if (!work.probe && cuda_backend::compiled()) {
      report.backend = Backend::Cuda;
      report.backend_reason = why_gpu + "; the GPU is probed when the work starts";
      return Backend::Cuda;
    }
  } else if (!forced) {
    why_gpu = "GPU found";
  }
  const CudaStatus status = cached_probe();
  const int d = options.cuda_device;
  const bool device_exists = status.usable && d >= 0 && d < static_cast<int>(status.devices.size());
  if (!device_exists) {
    const std::string why = !status.usable ? status.reason
                                           : "no CUDA device " + std::to_string(d) + " (" +
                                                 std::to_string(status.devices.size()) + " found)";
    if (forced)
      throw InvalidArgument("CUDA backend unavailable: " + why);
    report.backend_reason = "no usable GPU (" + why + "); using the CPU";
    return Backend::Cpu;
  }
  const DeviceInfo& device = status.devices[d];
  std::string unfit = work.kernel_cannot;
  // The free memory of the device the run takes, asked now: CUDA starts on that device only.
  if (unfit.empty()) {
    try {
      if (static_cast<double>(cuda_backend::free_memory_of(d)) < work.device_bytes)
        unfit = "the volume does not fit in the GPU's free memory";
    } catch (const std::exception& e) {
      unfit = std::string("CUDA did not start on it (") + e.what() + ")";
    }
  }
  if (!unfit.empty()) {
    if (forced)
      throw InvalidArgument(std::string("the GPU ") + work.filter + " cannot run: " + unfit);
    report.backend_reason = std::string("the ") + work.filter + " on the CPU: " + unfit;
    return Backend::Cpu;
  }
  report.backend = Backend::Cuda;
  report.device_name = device.name;
  report.backend_reason = why_gpu + ": device " + std::to_string(d) + " (" + device.name + ")";
  return Backend::Cuda;
}

void warm_up_cuda_async(int device) noexcept {
  try {
    warm_up_cuda_async(std::vector<int>{device});
  } catch (...) {
    // No list could be made: CUDA starts in the first GPU call instead.
  }
}

void warm_up_cuda_async(const std::vector<int>& devices) noexcept {
  // The future outlives main(): its destructor at exit waits for a start-up still under way. What
  // the thread touches is constructed before it starts (or never destroyed), so that nothing it
  // uses is destroyed before the future at exit.
  static std::once_flag once;
  static std::future<void> warm_up;
  try {
    std::call_once(once, [&devices] {
      (void)probe_cache();
      g_warm_up_began = std::chrono::steady_clock::now().time_since_epoch().count();
      g_warm_up_pending = true;
      warm_up = std::async(std::launch::async, [devices] {
        if (!devices.empty())
          cuda_backend::start(devices.front());
        const CudaStatus status = detail::cached_probe();
        if (devices.empty()) {
          for (const DeviceInfo& d : status.devices)
            cuda_backend::start(d.index);
        }
        for (size_t i = 1; i < devices.size(); ++i)
          cuda_backend::start(devices[i]);
        g_warm_up_pending = false;
      });
    });
  } catch (...) {
    // No thread could be started: CUDA starts in the first GPU call instead.
    g_warm_up_pending = false;
  }
}

bool cuda_built() noexcept {
  return cuda_backend::compiled();
}

bool cuda_warm_up_pending() noexcept {
  return g_warm_up_pending.load();
}

bool cuda_started(int device) noexcept {
  return cuda_backend::started(device);
}

}  // namespace ndconv
