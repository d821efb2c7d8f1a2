// The GPU median's launcher: picks the kernel's window capacity, stages the volume on the device
// and back, every CUDA call checked.
#include <chrono>
#include <vector>

#include "cuda/check.h"
#include "cuda/median/median.h"
#include "cuda/median/median_kernel.cuh"
#include "cuda/median/median_select.h"

namespace ndconv::cuda_median {

namespace {

int64_t window_of(int dims, const Index& radius) {
  int64_t w = 1;
  for (int a = 0; a < dims; ++a)
    w *= 2 * radius[a] + 1;
  return w;
}

// Device memory freed on every path out.
struct DeviceBuffer {
  float* data = nullptr;
  explicit DeviceBuffer(size_t count) {
    NDCONV_CUDA_CHECK(cudaMalloc(&data, count * sizeof(float)));
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// A contiguous copy of a strided view, or the view's own data when it is contiguous.
template <typename T>
const float* contiguous(const BasicVolumeView<T>& v, std::vector<float>& copy) {
  if (v.is_contiguous())
    return v.data;
  copy.resize(static_cast<size_t>(v.voxel_count()));
  size_t i = 0;
  for (int64_t t = 0; t < v.extent[3]; ++t)
    for (int64_t z = 0; z < v.extent[2]; ++z)
      for (int64_t y = 0; y < v.extent[1]; ++y)
        for (int64_t x = 0; x < v.extent[0]; ++x)
          copy[i++] = v.data[x * v.stride[0] + y * v.stride[1] + z * v.stride[2] + t * v.stride[3]];
  return copy.data();
}

template <int kWindow>
void launch(const float* in, float* out, const MedianShape& shape, int64_t voxels,
            cudaStream_t stream) {
  constexpr int kBlock = 128;
  const int64_t blocks = (voxels + kBlock - 1) / kBlock;
  const unsigned grid = static_cast<unsigned>(blocks < (1 << 30) ? blocks : (1 << 30));
  median_kernel<kWindow><<<grid, kBlock, 0, stream>>>(in, out, shape, voxels);
  NDCONV_CUDA_CHECK_LAUNCH("median_kernel");
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool can_implement(int dims, const Index& radius, std::string& why) {
  const int64_t w = window_of(dims, radius);
  if (w > kMaxWindow) {
    why = "the GPU median holds at most " + std::to_string(kMaxWindow) +
          " voxels per window (radius 3 in 3D); this window has " + std::to_string(w);
    return false;
  }
  return true;
}

void run(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
         Boundary boundary, int device, RunReport& report) {
  std::string why;
  if (!can_implement(input.dims, radius, why))
    throw InvalidArgument(why);
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  report.device_name = prop.name;
  MedianShape shape;
  for (int a = 0; a < kMaxDims; ++a) {
    shape.extent[a] = a < input.dims ? input.extent[a] : 1;
    shape.radius[a] = a < input.dims ? radius[a] : 0;
  }
  shape.boundary = static_cast<int>(boundary);
  const int64_t voxels = input.voxel_count();
  const size_t bytes = static_cast<size_t>(voxels) * sizeof(float);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<float> staged_in, staged_out;
  const float* host_in = contiguous(input, staged_in);
  DeviceBuffer d_in(static_cast<size_t>(voxels)), d_out(static_cast<size_t>(voxels));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_in.data, host_in, bytes, cudaMemcpyHostToDevice));
  report.seconds_upload = seconds(t0);

  t0 = std::chrono::steady_clock::now();
  const int64_t w = window_of(input.dims, radius);
  if (w <= 27)
    launch<27>(d_in.data, d_out.data, shape, voxels, nullptr);
  else if (w <= 125)
    launch<125>(d_in.data, d_out.data, shape, voxels, nullptr);
  else
    launch<kMaxWindow>(d_in.data, d_out.data, shape, voxels, nullptr);
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute = seconds(t0);

  t0 = std::chrono::steady_clock::now();
  float* host_out = output.is_contiguous()
                        ? output.data
                        : (staged_out.resize(static_cast<size_t>(voxels)), staged_out.data());
  NDCONV_CUDA_CHECK(cudaMemcpy(host_out, d_out.data, bytes, cudaMemcpyDeviceToHost));
  if (!output.is_contiguous()) {
    size_t i = 0;
    for (int64_t t = 0; t < output.extent[3]; ++t)
      for (int64_t z = 0; z < output.extent[2]; ++z)
        for (int64_t y = 0; y < output.extent[1]; ++y)
          for (int64_t x = 0; x < output.extent[0]; ++x)
            output.data[x * output.stride[0] + y * output.stride[1] + z * output.stride[2] +
                        t * output.stride[3]] = staged_out[i++];
  }
  report.seconds_download = seconds(t0);
}

}  // namespace ndconv::cuda_median
