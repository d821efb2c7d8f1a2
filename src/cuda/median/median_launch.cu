// The GPU median's launcher: picks the kernel's window capacity, stages the volume on the device
// and back, every CUDA call checked.
#include <chrono>
#include <vector>

#include "cuda/check.h"
#include "cuda/filter_staging.h"
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

template <int kWindow>
void launch(const float* in, float* out, const MedianShape& shape, int64_t voxels,
            cudaStream_t stream) {
  constexpr int kBlock = 128;
  const int64_t blocks = (voxels + kBlock - 1) / kBlock;
  const unsigned grid = static_cast<unsigned>(blocks < (1 << 30) ? blocks : (1 << 30));
  median_kernel<kWindow><<<grid, kBlock, 0, stream>>>(in, out, shape, voxels);
  NDCONV_CUDA_CHECK_LAUNCH("median_kernel");
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

void launch_device(const float* input, float* output, int dims, const Index& extent,
                   const Index& radius, Boundary boundary, void* stream) {
  std::string why;
  if (!can_implement(dims, radius, why))
    throw InvalidArgument(why);
  MedianShape shape;
  int64_t voxels = 1;
  for (int a = 0; a < kMaxDims; ++a) {
    shape.extent[a] = a < dims ? extent[a] : 1;
    shape.radius[a] = a < dims ? radius[a] : 0;
    voxels *= shape.extent[a];
  }
  shape.boundary = static_cast<int>(boundary);
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t w = window_of(dims, radius);
  if (w <= 27)
    launch<27>(input, output, shape, voxels, s);
  else if (w <= 125)
    launch<125>(input, output, shape, voxels, s);
  else
    launch<kMaxWindow>(input, output, shape, voxels, s);
}

void run(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
         Boundary boundary, int device, RunReport& report) {
  using namespace cuda_filters;
  std::string why;
  if (!can_implement(input.dims, radius, why))
    throw InvalidArgument(why);
  report.device_name = select_device(device);
  const int64_t voxels = input.voxel_count();

  auto t0 = std::chrono::steady_clock::now();
  DeviceBuffer<float> d_in(static_cast<size_t>(voxels)), d_out(static_cast<size_t>(voxels));
  upload(input, d_in.data);
  report.seconds_upload = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  launch_device(d_in.data, d_out.data, input.dims, input.extent, radius, boundary, nullptr);
  finish_and_download(d_out.data, output, t0, report);
}

}  // namespace ndconv::cuda_median
