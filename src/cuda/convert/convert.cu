// The device conversion of stored values to float (convert.h): one grid-stride kernel per type.
#include <algorithm>
#include <cstdint>

#include "cuda/check.h"
#include "cuda/convert/convert.h"
#include "core/convert_value.h"
#include "core/stored_access.h"

namespace ndconv::cuda_backend {

namespace {

template <typename T>
__global__ void to_float_kernel(const T* __restrict__ src, float* __restrict__ dst, int64_t count,
                                bool identity, double scale, double offset) {
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += step)
    dst[i] = convert::stored_to_float(src[i], identity, scale, offset);
}

template <typename T>
void launch(const void* src, float* dst, int64_t count, double scale, double offset,
            cudaStream_t stream) {
  constexpr int kThreads = 256;
  // Enough blocks to fill any current GPU; each thread then walks the rest.
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 4096);
  const bool identity = scale == 1.0 && offset == 0.0;
  to_float_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const T*>(src), dst, count, identity, scale, offset);
  NDCONV_CUDA_CHECK_LAUNCH("to_float_kernel");
}

}  // namespace

void enqueue_to_float(ScalarType type, const void* src, float* dst, int64_t count, double scale,
                      double offset, cudaStream_t stream) {
  if (count <= 0)
    return;
  detail::visit_scalar_type(
      type, [&](auto zero) { launch<decltype(zero)>(src, dst, count, scale, offset, stream); });
}

}  // namespace ndconv::cuda_backend
