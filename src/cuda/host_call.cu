// The host path's shared steps (host_call.h): the device budget, the device's properties, the
// caller's memory and the report's note on it.
#include "cuda/host_call.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/parallel_for.h"
#include "cuda/buffer_pools.h"
#include "cuda/check.h"
#include "cuda/cuda_host.h"
#include "cuda/device_memory.h"
#include "cuda/staging.h"
#include "ndconv/memory.h"

namespace ndconv::cuda_backend {

// Floats the call may allocate: 90% of the free memory (with the idle buffers this device keeps,
// which the call reuses or frees) less a 64 MiB reserve, under the cap.
int64_t device_budget_floats(const Options& options, RunReport& report) {
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  free_bytes += device_cache(options.cuda_device).idle_bytes();
  const size_t reserve = size_t(64) << 20;
  size_t budget = free_bytes > reserve ? (free_bytes - reserve) / 10 * 9 : 0;
  const size_t cap = memory_cap(options);
  if (cap > 0 && cap < budget) {
    budget = cap;
    report.notes.push_back("device memory cap: " + std::to_string(cap) + " bytes");
  }
  return static_cast<int64_t>(budget / sizeof(float));
}

namespace {

// A device's properties, queried once per process: cudaGetDeviceProperties reads every attribute
// and would add its cost to each call.
const cudaDeviceProp& device_properties(int device) {
  static std::mutex mutex;
  static auto* cache = new std::map<int, cudaDeviceProp>();
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache->find(device);
  if (it != cache->end())
    return it->second;
  cudaDeviceProp prop{};
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return cache->emplace(device, prop).first->second;
}

}  // namespace

void set_device(const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  mark_started(options.cuda_device);
  const cudaDeviceProp& prop = device_properties(options.cuda_device);
  report.device_name = prop.name;
  report.notes.push_back("registers per SM: " + std::to_string(prop.regsPerMultiprocessor) +
                         ", SMs: " + std::to_string(prop.multiProcessorCount));
}

bool needs_conversion(const StoredVolumeView& v) {
  return v.type != ScalarType::Float32 || v.scale != 1.0 || v.offset != 0.0;
}

HostAccess host_access(const StoredVolumeView& input, const VolumeView& output,
                       const Options& options) {
  HostAccess h;
  h.input_direct =
      input.is_contiguous() &&
      is_pinned(input.data, static_cast<size_t>(input.voxel_count()) * scalar_size(input.type));
  h.output_direct =
      output.is_contiguous() &&
      is_pinned(output.data, static_cast<size_t>(output.voxel_count()) * sizeof(float));
  const size_t cap = memory_cap(options);
  h.kept_limit = cap > 0 ? std::min(cap, kDeviceKeptBytes) : kDeviceKeptBytes;
  h.threads = core::resolve_thread_count(options.threads);
  return h;
}

std::string host_memory_note(const HostAccess& host, double staging_seconds, double call_seconds) {
  return std::string("host memory: input ") +
         (host.input_direct ? "pinned, copied directly" : "staged") + ", output " +
         (host.output_direct ? "pinned, copied directly" : "staged") + "; host staging " +
         std::to_string(staging_seconds * 1e3) + " ms of " + std::to_string(call_seconds * 1e3) +
         " ms";
}

}  // namespace ndconv::cuda_backend
