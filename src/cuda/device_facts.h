// Device attributes and kernel resources, queried from the CUDA runtime once per device or per
// (device, kernel, block size, dynamic shared memory) and cached for the process: they do not
// change while it runs. Thread-safe. The launchers' rules, the study tools and the reports all
// read the same numbers from here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// What the launchers and the tools need to know about a device.
struct DeviceAttributes {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int64_t l2_bytes = 0;
  int64_t total_memory = 0;
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  int runtime_version = 0;  ///< e.g. 13000
  int driver_version = 0;   ///< CUDA version the driver supports, e.g. 13000
};

/// One compiled instantiation of a kernel (outputs per thread along the filtered/last axis) with
/// its resources on a device, as the CUDA runtime reports them.
struct KernelVariant {
  int outputs_per_thread = 0;
  int registers_per_thread = 0;
  std::size_t local_bytes = 0;  ///< local memory per thread (spills); 0 for a healthy variant
  int block_threads = 0;
  int blocks_per_sm = 0;  ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor at block_threads
  double occupancy = 0;   ///< resident warps / maximum warps per SM
};

/// The attributes of `device` (queried on first use). Throws CudaError.
const DeviceAttributes& device_attributes(int device);

/// The public description of `device` (ndconv/types.h): its cached attributes and total memory,
/// and with `free_memory` its free memory as the runtime reports it now, which makes `device`
/// current and so starts CUDA on it (about 0.1 s alone, 0.2 s while another device starts, on the
/// lent H200 machines); without it free_memory is 0 and no context is made. Throws CudaError.
DeviceInfo device_info(int device, bool free_memory = true);

/// The resources of `kernel` (a __global__ function's address) on `device` in blocks of `threads`
/// threads with `dynamic_shared_bytes` of dynamic shared memory (0: the kernel's own resources;
/// a launch's dynamic shared memory lowers its blocks per SM), labelled with `ko`.
KernelVariant kernel_resources(int device, const void* kernel, int ko, int threads,
                               int dynamic_shared_bytes = 0);

/// The dynamic shared memory `kernel` may use per block on `device`: the device's opt-in limit
/// less the kernel's static shared memory. A kernel may use more than the default 48 KiB only
/// after cudaFuncSetAttribute raises its own limit, which this does on first use.
int opt_in_dynamic_shared_memory(int device, const void* kernel);

}  // namespace ndconv::cuda_backend
