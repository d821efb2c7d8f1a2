// The adaptive filter's control tensor on the GPU (bank_backend.h: run_control_tensor): the
// per-voxel code of control_voxel.h, the same as the CPU's, in two kernels around a reduction of
// the largest magnitude (atomicMax on the bit patterns of non-negative doubles, which order as the
// values do); and the reconstruction's weights formed from it (launch_control_weights).
#include <cstdint>
#include <vector>

#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/bank_voxels.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"

namespace ndconv::cuda_bank {

namespace {

using cuda_backend::DeviceBuffer;

// Components c of voxel v at tensor[c * voxels + v].
__global__ void control_shape_kernel(detail::ControlMapping m, float* tensor, int64_t voxels,
                                     int components, float* magnitude, unsigned long long* largest,
                                     detail::MagnitudeRegion region) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double x = 0;
  if (v < voxels) {
    double t[kMaxComponents], c[kMaxComponents];
    for (int k = 0; k < components; ++k)
      t[k] = tensor[k * voxels + v];
    x = detail::control_shape(m, t, c);
    magnitude[v] = static_cast<float>(x);
    for (int k = 0; k < components; ++k)
      tensor[k * voxels + v] = static_cast<float>(c[k]);
    if (!region.holds(v))
      x = 0;  // filtered, but its magnitude does not count
  }
  // The block's largest, then one atomic per warp that holds a positive one.
  for (int offset = 16; offset > 0; offset /= 2)
    x = fmax(x, __shfl_down_sync(0xffffffffu, x, offset));
  if ((threadIdx.x & 31) == 0 && x > 0)
    atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(x)));
}

__global__ void control_gain_kernel(detail::ControlMapping m, float* tensor, int64_t voxels,
                                    int components, const float* magnitude,
                                    const unsigned long long* largest, double scale) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= voxels)
    return;
  const double divisor =
      scale >= 0 ? scale : __longlong_as_double(static_cast<long long>(*largest));
  const double gamma = detail::control_gain(m, magnitude[v], divisor);
  for (int k = 0; k < components; ++k)
    tensor[k * voxels + v] = static_cast<float>(gamma * tensor[k * voxels + v]);
}

struct WeightCoefficients {
  double value[kMaxHighpass * kMaxComponents];
  int highpass;    // weights after the lowpass's
  int components;  // of the control tensor
};

// The reconstruction's weights from the control tensor (component c at control[c * voxels]):
// 1 for the lowpass, then sum_c value[k * components + c] * C_c for highpass k. Each thread reads
// all of its voxel's components before it writes a weight, so `control` may lie inside `weights`
// (no __restrict__: the weights are computed in place over the tensor).
__global__ void control_weights_kernel(const float* control, int64_t voxels, WeightCoefficients w,
                                       float* weights) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= voxels)
    return;
  double c[kMaxComponents];
#pragma unroll
  for (int k = 0; k < kMaxComponents; ++k)
    c[k] = k < w.components ? static_cast<double>(control[k * voxels + v]) : 0.0;
  weights[v] = 1.0f;
  for (int k = 0; k < w.highpass; ++k) {
    double s = 0;
#pragma unroll
    for (int j = 0; j < kMaxComponents; ++j)
      if (j < w.components)
        s += w.value[k * w.components + j] * c[j];
    weights[(k + 1) * voxels + v] = static_cast<float>(s);
  }
}

}  // namespace

void launch_control_weights(const float* control, int components,
                            const std::vector<double>& coefficients, int64_t voxels, float* weights,
                            void* stream) {
  const int64_t highpass =
      components > 0 ? static_cast<int64_t>(coefficients.size()) / components : 0;
  if (highpass < 1 || highpass > kMaxHighpass || components > kMaxComponents ||
      static_cast<int64_t>(coefficients.size()) != highpass * components)
    throw InvalidArgument(
        "the GPU reconstruction takes a lowpass and 1 to 10 highpass filters "
        "weighted by 1 to 10 control tensor components");
  WeightCoefficients w{};
  std::copy(coefficients.begin(), coefficients.end(), w.value);
  w.highpass = static_cast<int>(highpass);
  w.components = components;
  control_weights_kernel<<<voxel_blocks(voxels), kVoxelThreads, 0,
                           static_cast<cudaStream_t>(stream)>>>(control, voxels, w, weights);
  NDCONV_CUDA_CHECK_LAUNCH("the reconstruction weights kernel");
}

void launch_control_tensor(const detail::ControlMapping& mapping, float* tensor, int64_t voxels,
                           int components, float* magnitude, unsigned long long* largest,
                           void* stream_handle, const detail::MagnitudeRegion& region,
                           double scale) {
  if (components < 1 || components > kMaxComponents)
    throw InvalidArgument("the GPU control tensor takes 1 to 10 components");
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  NDCONV_CUDA_CHECK(cudaMemsetAsync(largest, 0, sizeof(unsigned long long), stream));
  const unsigned blocks = static_cast<unsigned>((voxels + 255) / 256);
  control_shape_kernel<<<blocks, 256, 0, stream>>>(mapping, tensor, voxels, components, magnitude,
                                                   largest, region);
  NDCONV_CUDA_CHECK_LAUNCH("the control tensor kernel");
  control_gain_kernel<<<blocks, 256, 0, stream>>>(mapping, tensor, voxels, components, magnitude,
                                                  largest, scale);
  NDCONV_CUDA_CHECK_LAUNCH("the control gain kernel");
}

bool run_control_tensor(const detail::ControlMapping& mapping,
                        std::vector<std::vector<float>>& tensor, const Options& options,
                        const detail::MagnitudeRegion& region, double scale, double& used) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  const int components = static_cast<int>(tensor.size());
  if (components < 1 || components > kMaxComponents)
    throw InvalidArgument("the GPU control tensor takes 1 to 10 components");
  const int64_t voxels = static_cast<int64_t>(tensor[0].size());
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double needed = static_cast<double>(voxels) * (components + 1) * sizeof(float);
  if (needed > 0.5 * static_cast<double>(free_bytes))
    return false;
  // The largest magnitude's 8 bytes at the start of the scratch (cudaMalloc aligns it), the
  // magnitudes after them.
  DeviceBuffer d_tensor(static_cast<size_t>(voxels * components));
  DeviceBuffer d_scratch(static_cast<size_t>(voxels + 2));
  auto* largest = reinterpret_cast<unsigned long long*>(d_scratch.get());
  for (int k = 0; k < components; ++k)
    NDCONV_CUDA_CHECK(cudaMemcpy(d_tensor.get() + k * voxels, tensor[k].data(),
                                 static_cast<size_t>(voxels) * sizeof(float),
                                 cudaMemcpyHostToDevice));
  launch_control_tensor(mapping, d_tensor.get(), voxels, components, d_scratch.get() + 2, largest,
                        nullptr, region, scale);
  used = scale;
  if (scale < 0)
    NDCONV_CUDA_CHECK(cudaMemcpy(&used, largest, sizeof(double), cudaMemcpyDeviceToHost));
  for (int k = 0; k < components; ++k)
    NDCONV_CUDA_CHECK(cudaMemcpy(tensor[k].data(), d_tensor.get() + k * voxels,
                                 static_cast<size_t>(voxels) * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  return true;
}

}  // namespace ndconv::cuda_bank
