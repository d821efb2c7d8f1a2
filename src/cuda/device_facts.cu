// The cache of device attributes and kernel resources (device_facts.h).
#include "cuda/device_facts.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "cuda/check.h"

namespace ndconv::cuda_backend {
namespace {

// One mutex for the three caches: every query is a few runtime calls, taken once.
std::mutex g_mutex;
std::map<int, DeviceAttributes> g_devices;
std::map<std::tuple<int, const void*, int, int>, KernelVariant> g_kernels;
std::map<std::pair<int, const void*>, int> g_shared_limits;

const DeviceAttributes& attributes_locked(int device) {
  const auto it = g_devices.find(device);
  if (it != g_devices.end())
    return it->second;
  cudaDeviceProp p{};
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceAttributes a;
  a.index = device;
  a.name = p.name;
  a.cc_major = p.major;
  a.cc_minor = p.minor;
  a.multiprocessors = p.multiProcessorCount;
  a.l2_bytes = p.l2CacheSize;
  a.total_memory = static_cast<int64_t>(p.totalGlobalMem);
  a.registers_per_sm = p.regsPerMultiprocessor;
  a.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  NDCONV_CUDA_CHECK(cudaRuntimeGetVersion(&a.runtime_version));
  NDCONV_CUDA_CHECK(cudaDriverGetVersion(&a.driver_version));
  return g_devices.emplace(device, a).first->second;
}

}  // namespace

const DeviceAttributes& device_attributes(int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return attributes_locked(device);
}

DeviceInfo device_info(int device, bool free_memory) {
  const DeviceAttributes& a = device_attributes(device);
  DeviceInfo info{a.index, a.name, a.cc_major, a.cc_minor, a.multiprocessors};
  if (!free_memory) {
    info.total_memory = static_cast<std::size_t>(a.total_memory);
    return info;
  }
  const CallerDevice caller_device;  // a probe of every device leaves the caller's current
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&info.free_memory, &info.total_memory));
  return info;
}

KernelVariant kernel_resources(int device, const void* kernel, int ko, int threads,
                               int dynamic_shared_bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto key = std::make_tuple(device, kernel, threads, dynamic_shared_bytes);
  const auto it = g_kernels.find(key);
  if (it != g_kernels.end()) {
    KernelVariant v = it->second;
    v.outputs_per_thread = ko;
    return v;
  }
  cudaFuncAttributes attr{};
  NDCONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks = 0;
  NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                                  dynamic_shared_bytes));
  const int max_threads = attributes_locked(device).max_threads_per_sm;
  KernelVariant v;
  v.outputs_per_thread = ko;
  v.registers_per_thread = attr.numRegs;
  v.local_bytes = attr.localSizeBytes;
  v.block_threads = threads;
  v.blocks_per_sm = blocks;
  v.occupancy = max_threads > 0 ? double(blocks) * threads / max_threads : 0.0;
  g_kernels.emplace(key, v);
  return v;
}

int opt_in_dynamic_shared_memory(int device, const void* kernel) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto key = std::make_pair(device, kernel);
  const auto it = g_shared_limits.find(key);
  if (it != g_shared_limits.end())
    return it->second;
  int optin = 0;
  NDCONV_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr{};
  NDCONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int limit = optin - static_cast<int>(attr.sharedSizeBytes);
  NDCONV_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  g_shared_limits.emplace(key, limit);
  return limit;
}

}  // namespace ndconv::cuda_backend
