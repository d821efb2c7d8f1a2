// The GPU recursive Gaussian's launcher: uploads the volume, filters it in place one axis at a
// time in batches of lines whose scratch stays under a fixed budget, downloads it. Every CUDA
// call checked.
#include <algorithm>

#include "cuda/check.h"
#include "cuda/filter_staging.h"
#include "cuda/recursive_gaussian/recursive_gaussian.h"
#include "cuda/recursive_gaussian/recursive_kernel.cuh"

namespace ndconv::cuda_recursive {

namespace {

// Scratch for the extended lines of one batch.
constexpr size_t kScratchBytes = size_t{256} << 20;

}  // namespace

void run(const ConstVolumeView& input, const VolumeView& output,
         const std::array<double, kMaxDims>& sigma,
         const std::array<recursive::Coefficients, kMaxDims>& coefficients,
         const std::array<int64_t, kMaxDims>& margin, Boundary boundary, float outside, int device,
         RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  using namespace cuda_filters;
  report.device_name = select_device(device);
  const int64_t voxels = input.voxel_count();
  auto t0 = std::chrono::steady_clock::now();
  DeviceBuffer<float> volume(static_cast<size_t>(voxels));
  upload(input, volume.data);
  report.seconds_upload = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  LineBatch b{};
  for (int a = 0; a < kMaxDims; ++a)
    b.extent[a] = a < input.dims ? input.extent[a] : 1;
  b.boundary = static_cast<int>(boundary);
  b.outside = outside;
  int64_t widest = 0;
  for (int a = 0; a < input.dims; ++a) {
    if (sigma[a] > 0)
      widest = std::max(widest, b.extent[a] + 2 * margin[a]);
  }
  const int64_t batch_lines = std::max<int64_t>(
      1, static_cast<int64_t>(kScratchBytes / sizeof(float)) / std::max<int64_t>(widest, 1));
  DeviceBuffer<float> scratch(
      static_cast<size_t>(std::max<int64_t>(widest, 1) * std::min(batch_lines, voxels)));
  for (int a = 0; a < input.dims; ++a) {
    if (!(sigma[a] > 0))
      continue;
    b.axis = a;
    b.margin = margin[a];
    const int64_t lines = voxels / b.extent[a];
    for (b.first_line = 0; b.first_line < lines; b.first_line += batch_lines) {
      b.lines = std::min(batch_lines, lines - b.first_line);
      constexpr int kBlock = 128;
      const unsigned grid = static_cast<unsigned>((b.lines + kBlock - 1) / kBlock);
      recursive_lines<<<grid, kBlock>>>(volume.data, scratch.data, b, coefficients[a]);
      NDCONV_CUDA_CHECK_LAUNCH("recursive_lines");
    }
  }
  finish_and_download(volume.data, output, t0, report);
}

}  // namespace ndconv::cuda_recursive
