// copy_boxes_device (ndconv/device.h, cuda_host.h): boxes of contiguous device volumes copied into
// another by the runtime's 3D copies, one per box and 4th-axis plane, on the caller's stream. The
// engine has checked the boxes against the volumes' extents.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/check.h"
#include "cuda/cuda_host.h"
#include "cuda/host_call.h"

namespace ndconv::cuda_backend {
namespace {

// A contiguous volume (x fastest) as the 3D copies see it: rows of extent[0] values, `extent[1]`
// rows a plane; the 4th axis is stepped by the caller.
cudaPitchedPtr pitched(const void* data, const Index& extent, std::size_t value_bytes) {
  const std::size_t row = static_cast<std::size_t>(extent[0]) * value_bytes;
  return make_cudaPitchedPtr(const_cast<void*>(data), row, row,
                             static_cast<std::size_t>(extent[1]));
}

}  // namespace

void copy_boxes_device(const std::vector<StoredVolumeView>& sources, void* target,
                       const Index& target_extent, const std::vector<BoxCopy>& boxes, int device,
                       void* stream_handle) {
  const CallerDevice caller_device;  // restored on return (check.h)
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  for (const StoredVolumeView& source : sources)
    check_device_view(source.data, source.is_contiguous(), device, "a source volume");
  check_device_view(target, true, device, "the target volume");
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const std::size_t value_bytes = scalar_size(sources.front().type);
  const int64_t target_volume = target_extent[0] * target_extent[1] * target_extent[2];
  for (const BoxCopy& box : boxes) {
    if (box.extent[0] * box.extent[1] * box.extent[2] * box.extent[3] == 0)
      continue;
    const StoredVolumeView& source = sources[static_cast<std::size_t>(box.source)];
    const int64_t source_volume = source.extent[0] * source.extent[1] * source.extent[2];
    for (int64_t t = 0; t < box.extent[3]; ++t) {
      cudaMemcpy3DParms copy{};
      copy.srcPtr = pitched(source.data + (box.source_start[3] + t) * source_volume * value_bytes,
                            source.extent, value_bytes);
      copy.srcPos = make_cudaPos(static_cast<std::size_t>(box.source_start[0]) * value_bytes,
                                 static_cast<std::size_t>(box.source_start[1]),
                                 static_cast<std::size_t>(box.source_start[2]));
      copy.dstPtr = pitched(static_cast<unsigned char*>(target) +
                                (box.target_start[3] + t) * target_volume * value_bytes,
                            target_extent, value_bytes);
      copy.dstPos = make_cudaPos(static_cast<std::size_t>(box.target_start[0]) * value_bytes,
                                 static_cast<std::size_t>(box.target_start[1]),
                                 static_cast<std::size_t>(box.target_start[2]));
      copy.extent = make_cudaExtent(static_cast<std::size_t>(box.extent[0]) * value_bytes,
                                    static_cast<std::size_t>(box.extent[1]),
                                    static_cast<std::size_t>(box.extent[2]));
      copy.kind = cudaMemcpyDeviceToDevice;
      NDCONV_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
    }
  }
}

}  // namespace ndconv::cuda_backend
