// Kernel launches that may overlap the kernel before them on the stream (programmatic dependent
// launch, kernels/grid_dependency.h): cudaLaunchKernelEx with the programmatic stream
// serialization attribute where the device supports it (compute capability 9.0 and later); else a
// plain launch.
// Only kernels that call grid_dependency_wait before their first dependent global access may be
// launched with `after_kernel` set.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "cuda/check.h"
#include "cuda/device_facts.h"

namespace ndconv::cuda_backend {

/// Whether a launch on `device` may overlap the kernel before it.
inline bool dependent_launch_enabled(int device) {
  return device_attributes(device).cc_major >= 9;
}

/// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...); with `after_kernel` (the
/// previous work on the stream is a kernel of ours whose results this one reads) as a dependent
/// launch where dependent_launch_enabled(device).
template <typename... Params, typename... Args>
void launch_kernel(int device, bool after_kernel, void (*kernel)(Params...), dim3 grid, dim3 block,
                   int shared_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = static_cast<size_t>(shared_bytes);
  config.stream = stream;
  cudaLaunchAttribute attribute[1] = {};
  if (after_kernel && dependent_launch_enabled(device)) {
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // the launch error is reported here, not by a later call
    throw_cuda_error("cudaLaunchKernelEx", status, __FILE__, __LINE__);
  }
}

}  // namespace ndconv::cuda_backend
