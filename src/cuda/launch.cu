// The low-level API's dense entry points (cuda/launch.h): which family serves a dense launch
// (the tiled kernel where it can implement the problem, else the blocked kernel; or the one the
// request names), the list of both families' instantiations, and the per-device global tap buffers
// that the families reading taps from global memory share (uploaded_taps.h). No kernel is
// instantiated here: each family's launcher is in its folder (tiled/, blocked/, separable/).
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cuda/blocked/blocked_launch.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/fft/fft_launch.h"
#include "cuda/launch.h"
#include "cuda/launch_common.h"
#include "cuda/tiled/tiled_launch.h"
#include "cuda/uploaded_taps.h"

namespace ndconv::cuda_backend {
namespace {

// The global tap buffers of one device. A launch takes the buffer that holds its taps, else one
// that no launch holds a lease on (the least recently used), else a new one, so that concurrent
// launches with different taps each have their own; kept buffers are few and small (a dense
// filter's taps, at most a few hundred KiB).
class GlobalTapBuffers {
 public:
  TapLease acquire(const std::vector<float>& taps, cudaStream_t stream) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Buffer>& b : buffers_) {
      if (b->slot.uploaded.holds(taps, stream))
        return lease(*b, stream);
    }
    Buffer* chosen = nullptr;
    if (buffers_.size() >= kKeptBuffers) {
      for (const std::unique_ptr<Buffer>& b : buffers_) {
        if (b->slot.leases == 0 && (chosen == nullptr || b->last_use < chosen->last_use))
          chosen = b.get();
      }
    }
    if (chosen == nullptr)
      chosen = buffers_.emplace_back(std::make_unique<Buffer>()).get();
    TapSlot& slot = chosen->slot;
    slot.uploaded.forget();
    if (chosen->data.size() < taps.size()) {
      slot.readers.synchronize();  // the kernels that read the buffer, before it is freed
      chosen->data.allocate(taps.size());
    } else {
      slot.readers.wait(stream);
    }
    slot.readers.clear();
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(chosen->data.get(), taps.data(), taps.size() * sizeof(float),
                                      cudaMemcpyHostToDevice, stream));
    slot.uploaded.wrote(taps, stream);
    return lease(*chosen, stream);
  }

 private:
  struct Buffer {
    DeviceBuffer data;  // grow-only
    TapSlot slot;
    uint64_t last_use = 0;
  };
  // Buffers kept before the least recently used free one is overwritten: a few filters used in
  // turn keep their taps on the device.
  static constexpr std::size_t kKeptBuffers = 4;

  TapLease lease(Buffer& b, cudaStream_t stream) {
    b.last_use = ++uses_;
    return TapLease(mutex_, released_, b.slot, stream, b.data.get());
  }

  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  uint64_t uses_ = 0;
};

GlobalTapBuffers& global_tap_buffers(int device) {
  static std::mutex mutex;
  static auto* devices = new std::map<int, std::unique_ptr<GlobalTapBuffers>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GlobalTapBuffers>& buffers = (*devices)[device];
  if (!buffers)
    buffers = std::make_unique<GlobalTapBuffers>();
  return *buffers;
}

}  // namespace

TapLease upload_global_taps(int device, const std::vector<float>& taps, cudaStream_t stream) {
  return global_tap_buffers(device).acquire(taps, stream);
}

namespace {

// DenseKernel::Fft: the FFT whatever the cost model says, or why it cannot run.
LaunchPlan launch_requested_fft(const detail::CorrelationProblem& p,
                                const DenseKernelRequest& request, int device, cudaStream_t stream,
                                const Tuning& tuning) {
  if (request.outputs_per_thread != 0)
    throw InvalidArgument("the FFT has no outputs per thread to force");
  if (p.input.dims < 2 || p.input.dims > 3)
    throw InvalidArgument("the FFT path transforms 2D and 3D volumes; this one has " +
                          std::to_string(p.input.dims) + " axes");
  DenseMethodChoice choice =
      choose_dense_method_on_device(p, device, forced_fft_policy(tuning.fft));
  if (!choice.fft)
    throw InvalidArgument("the FFT cannot serve this problem (" + choice.reason + ")");
  choice.reason = "FFT requested";
  std::optional<LaunchPlan> plan = launch_fft_dense(p, device, stream, choice);
  if (!plan)
    throw InvalidArgument("no stream-ordered device memory for the FFT's buffer (" +
                          std::to_string(choice.shape.buffer_bytes >> 20) + " MiB)");
  return *plan;
}

}  // namespace

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
    case DenseKernel::Fft:
      return launch_requested_fft(p, request, device, stream, tuning);
    case DenseKernel::Auto:
      break;
  }
  // The FFT where the cost model gives it (a forced KO asks for the direct kernels).
  std::string method_reason;
  if (request.outputs_per_thread == 0 && p.input.dims <= 3) {
    const DenseMethodChoice choice = choose_dense_method_on_device(p, device, tuning.fft);
    method_reason = choice.reason;
    if (choice.fft) {
      if (std::optional<LaunchPlan> fft = launch_fft_dense(p, device, stream, choice))
        return *fft;
      method_reason = "direct: no stream-ordered memory for the FFT's buffer";
    }
  }
  LaunchPlan plan;
  if (std::optional<LaunchPlan> tiled =
          launch_auto_tiled(p, request.outputs_per_thread, device, stream, tuning))
    plan = *tiled;
  else
    plan = launch_blocked_dense(p, request.outputs_per_thread, device, stream);
  plan.method_reason = method_reason;
  return plan;
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
