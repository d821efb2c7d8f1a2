// copy_boxes_device (ndconv/device.h): the boxes checked against the volumes here, without CUDA,
// so that every build refuses a wrong request the same way; the copies in the CUDA backend.
#include <string>

#include "cuda/cuda_host.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/errors.h"

namespace ndconv {
namespace {

void check_box(const BoxCopy& box, std::size_t index, int dims, const Index& source,
               const Index& target) {
  const std::string which = "box " + std::to_string(index);
  for (int a = 0; a < kMaxDims; ++a) {
    const int64_t start_s = box.source_start[a], start_t = box.target_start[a];
    const int64_t n = box.extent[a];
    if (n < 0 || start_s < 0 || start_t < 0)
      throw InvalidArgument(which + ": negative start or extent along axis " + std::to_string(a));
    if (a >= dims && (n != 1 || start_s != 0 || start_t != 0))
      throw InvalidArgument(which + ": axis " + std::to_string(a) + " is beyond the volumes' " +
                            std::to_string(dims) + " axes");
    if (start_s + n > source[a] || start_t + n > target[a])
      throw InvalidArgument(which + " reaches past its " +
                            std::string(start_s + n > source[a] ? "source" : "target") +
                            " along axis " + std::to_string(a));
  }
}

}  // namespace

void copy_boxes_device(const std::vector<StoredVolumeView>& sources, void* target,
                       const Index& target_extent, const std::vector<BoxCopy>& boxes, int device,
                       void* stream) {
  if (sources.empty())
    throw InvalidArgument("copy_boxes_device needs at least one source volume");
  const StoredVolumeView& first = sources.front();
  if (first.dims < 1 || first.dims > kMaxDims)
    throw InvalidArgument("the source volumes must have 1 to 4 axes");
  for (const StoredVolumeView& s : sources) {
    if (s.type != first.type || s.dims != first.dims)
      throw InvalidArgument("the source volumes must share one type and dimension");
    if (s.data == nullptr)
      throw InvalidArgument("a source volume has no data");
    if (!s.is_contiguous())
      throw InvalidArgument("the source volumes must be contiguous");
  }
  if (target == nullptr)
    throw InvalidArgument("the target volume has no data");
  for (int a = 0; a < kMaxDims; ++a) {
    if (target_extent[a] < 1 || (a >= first.dims && target_extent[a] != 1))
      throw InvalidArgument("the target's extent must be positive along its " +
                            std::to_string(first.dims) + " axes and 1 beyond");
  }
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const BoxCopy& box = boxes[i];
    if (box.source < 0 || static_cast<std::size_t>(box.source) >= sources.size())
      throw InvalidArgument("box " + std::to_string(i) + " names source " +
                            std::to_string(box.source) + " of " + std::to_string(sources.size()));
    check_box(box, i, first.dims, sources[static_cast<std::size_t>(box.source)].extent,
              target_extent);
  }
  const CudaStatus cuda = cuda_status();
  if (!cuda.usable)
    throw InvalidArgument("device memory needs a usable GPU: " + cuda.reason);
  cuda_backend::copy_boxes_device(sources, target, target_extent, boxes, device, stream);
}

}  // namespace ndconv
