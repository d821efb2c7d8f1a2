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

__global__ void constant_border_kernel(detail::ConstantBorderLayout l, const double* data,
                                       float* out, int64_t stride1, int64_t stride2,
                                       int64_t stride3, int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t o[kMaxDims] = {l.full_first[0], r % l.extent[1], r / l.extent[1] % l.extent[2],
                           r / (l.extent[1] * l.extent[2])};
    const bool inner_row = l.full_first[0] < l.full_end[0] && detail::constant_border_inside(l, o);
    float* row = out + o[1] * stride1 + o[2] * stride2 + o[3] * stride3;
    // Inner rows: the x indices [0, full_first) and [full_end, extent); others: the whole row.
    const int64_t left = inner_row ? l.full_first[0] : l.extent[0];
    const int64_t count = inner_row ? left + l.extent[0] - l.full_end[0] : l.extent[0];
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      o[0] = i < left ? i : l.full_end[0] + (i - left);
      row[o[0]] = static_cast<float>(static_cast<double>(row[o[0]]) +
                                     detail::constant_border_term(l, data, o));
    }
  }
}

}  // namespace

void add_constant_border_device(const detail::ConstantBorder& terms, const VolumeView& output,
                                int device, void* stream_handle) {
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
  constant_border_kernel<<<blocks, kThreads, 0, stream>>>(l, data, output.data, output.stride[1],
                                                          output.stride[2], output.stride[3], rows);
  NDCONV_CUDA_CHECK_LAUNCH("constant_border_kernel");
}

}  // namespace ndconv::cuda_backend
