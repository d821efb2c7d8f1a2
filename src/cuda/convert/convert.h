// Conversion of stored values to float on the device (ndconv/stored.h): the GPU backend uploads a
// chunk's stored bytes and converts them here, on the chunk's stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ndconv/stored.h"

namespace ndconv::cuda_backend {

/// Enqueues dst[i] = stored_to_float(src[i]) for i < count (both contiguous, device memory) on
/// `stream`. Throws CudaError when the launch fails.
void enqueue_to_float(ScalarType type, const void* src, float* dst, int64_t count, double scale,
                      double offset, cudaStream_t stream);

}  // namespace ndconv::cuda_backend
