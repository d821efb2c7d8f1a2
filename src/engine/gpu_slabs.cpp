#include "engine/gpu_slabs.h"

#include "engine/backend_choice.h"
#include "ndconv/errors.h"

namespace ndconv::detail {

void check_gpus_there(const std::vector<int>& devices) {
  const CudaStatus status = cached_probe();
  const int count = static_cast<int>(status.devices.size());
  for (int device : devices) {
    if (device < 0 || device >= count) {
      throw InvalidArgument("GPU " + std::to_string(device) + " of the device list is not there (" +
                            (status.usable ? std::to_string(count) + " usable" : status.reason) +
                            ")");
    }
  }
}

}  // namespace ndconv::detail
