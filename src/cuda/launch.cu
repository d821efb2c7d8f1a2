// The low-level API's dense entry points (cuda/launch.h): which family serves a dense launch
// (the tiled kernel where it can implement the problem, else the blocked kernel; or the one the
// request names), the list of both families' instantiations, and the per-device global tap buffer
// that the families reading taps from global memory share. No kernel is instantiated here: each
// family's launcher is in its folder (tiled/, blocked/, separable/).
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "cuda/blocked/blocked_launch.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "cuda/launch_common.h"
#include "cuda/tiled/tiled_launch.h"
#include "cuda/uploaded_taps.h"

namespace ndconv::cuda_backend {
namespace {

std::mutex g_mutex;                            // the global tap buffers and their upload records
std::map<int, DeviceBuffer> g_global_taps;     // per device, grow-only
std::map<int, UploadedTaps> g_global_uploads;  // what each device's global tap buffer last received

}  // namespace

const float* upload_global_taps(int device, const std::vector<float>& taps, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_mutex);
  UploadedTaps& uploaded = g_global_uploads[device];
  DeviceBuffer& buffer = g_global_taps[device];
  if (buffer.size() < taps.size()) {
    uploaded.forget();
    NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));  // earlier launches may still read it
    buffer.allocate(taps.size());
  }
  if (!uploaded.holds(taps, stream)) {
    uploaded.forget();
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), taps.data(), taps.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, stream));
    uploaded.wrote(taps, stream);
  }
  return buffer.get();
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem& p,
                               const DenseKernelRequest& request, int device, void* stream_handle,
                               const Tuning& tuning) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  if (request.kernel != DenseKernel::Tiled &&
      (request.tiled_outputs_along_x != 0 || request.tiled_block_rows != 0))
    throw InvalidArgument("a tiled kernel shape (TX, block rows) needs DenseKernel::Tiled");
  switch (request.kernel) {
    case DenseKernel::Tiled:
      return launch_requested_tiled(p, request, device, stream, tuning);
    case DenseKernel::Blocked:
      return launch_blocked_dense(p, request.outputs_per_thread, device, stream);
    case DenseKernel::Auto:
      break;
  }
  if (std::optional<LaunchPlan> tiled =
          launch_auto_tiled(p, request.outputs_per_thread, device, stream, tuning))
    return *tiled;
  return launch_blocked_dense(p, request.outputs_per_thread, device, stream);
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem& p, int outputs_per_thread,
                               int device, void* stream_handle, const Tuning& tuning) {
  DenseKernelRequest request;
  request.outputs_per_thread = outputs_per_thread;
  return launch_dense_device(p, request, device, stream_handle, tuning);
}

std::vector<DenseKernelVariant> dense_kernel_variants(int device) {
  std::vector<DenseKernelVariant> list = blocked_kernel_variants(device);
  const std::vector<DenseKernelVariant> tiled = tiled_kernel_variants(device);
  list.insert(list.end(), tiled.begin(), tiled.end());
  return list;
}

}  // namespace ndconv::cuda_backend
