// Boundary::Constant's terms on a device output (cuda_host.h, core/constant_border.h): the layout's
// data uploaded to stream-ordered scratch, then one block per output row at a time, each adding
// the terms of its row's border outputs (the whole row where the row itself lies in the shell).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/constant_border.h"
#include "cuda/check.h"
#include "cuda/cuda_host.h"
#include "cuda/stream_scratch.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_backend {
namespace {

// The output's strides as a kernel argument.
struct Strides {
  int64_t s[kMaxDims];
};

// One block per row at a time, its threads sharing the row's border outputs.
__global__ void constant_border_kernel(detail::ConstantBorderLayout l, const double* data,
                                       float* out, Strides stride, int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    detail::add_constant_border_row(l, data, out, stride.s, r, threadIdx.x, blockDim.x);
}

}  // namespace

void add_constant_border_device(const detail::ConstantBorder& terms, const VolumeView& output,
                                int device, void* stream_handle) {
  const CallerDevice caller_device;  // restored on return (check.h)
  if (terms.empty())
    return;
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const int64_t doubles = static_cast<int64_t>(terms.data.size());
  // Freed on the stream after the kernel; the host data is staged by the copy before it returns.
  StreamScratch scratch(device, 2 * doubles, stream);
  if (scratch.get() == nullptr) {
    throw InvalidArgument("no device memory for the constant boundary's terms (" +
                          std::to_string(doubles * 8) + " bytes)");
  }
  auto* data = reinterpret_cast<double*>(scratch.get());
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(data, terms.data.data(), static_cast<size_t>(doubles) * 8,
                                    cudaMemcpyHostToDevice, stream));
  const detail::ConstantBorderLayout& l = terms.layout;
  const int64_t rows = l.extent[1] * l.extent[2] * l.extent[3];
  constexpr int kThreads = 128;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65536));
  const Strides stride{{output.stride[0], output.stride[1], output.stride[2], output.stride[3]}};
  constant_border_kernel<<<blocks, kThreads, 0, stream>>>(l, data, output.data, stride, rows);
  NDCONV_CUDA_CHECK_LAUNCH("constant_border_kernel");
}

}  // namespace ndconv::cuda_backend
