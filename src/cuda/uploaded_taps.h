// What a device tap buffer (the __constant__ taps or the global tap buffer) last received, so that
// a launch whose taps are the same skips the upload.
//
// Why: every launch used to copy its taps from host memory, stream-ordered, before its kernels.
// Repeated filtering with one filter (the frames of a 3D+time sequence, a benchmark's repetitions,
// a pipeline run on many volumes) paid that copy each time, inside the time the GPU spends on the
// filter, where the peers' weights already sit on the device.
//
// Ordering: the skipped launch may run on another stream than the upload it relies on, which may
// not have executed yet; so the launch's stream waits on an event recorded after that upload.
// Uploads of other taps into the same buffer are ordered as before (the launcher's concern).
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "cuda/check.h"

namespace ndconv::cuda_backend {

class UploadedTaps {
 public:
  UploadedTaps() = default;
  ~UploadedTaps() {
    if (done_ != nullptr)
      cudaEventDestroy(done_);  // may fail at process exit, after the context is gone: ignored
  }
  UploadedTaps(const UploadedTaps&) = delete;
  UploadedTaps& operator=(const UploadedTaps&) = delete;

  /// Whether the buffer holds exactly `taps` (bit for bit); if so, work queued on `stream` from now
  /// on runs after the upload that wrote them.
  bool holds(const std::vector<float>& taps, cudaStream_t stream) const {
    if (!valid_ || taps.size() != taps_.size() ||
        std::memcmp(taps.data(), taps_.data(), taps.size() * sizeof(float)) != 0)
      return false;
    NDCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, done_, 0));
    return true;
  }

  /// Records that `taps` were just queued for upload into the buffer on `stream` (current device).
  void wrote(const std::vector<float>& taps, cudaStream_t stream) {
    valid_ = false;
    if (done_ == nullptr)
      NDCONV_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    NDCONV_CUDA_CHECK(cudaEventRecord(done_, stream));
    taps_ = taps;
    valid_ = true;
  }

  /// The buffer's contents are unknown (reallocated, or an upload failed part way).
  void forget() { valid_ = false; }

 private:
  std::vector<float> taps_;
  cudaEvent_t done_ = nullptr;
  bool valid_ = false;
};

/// The uploads into one translation unit's copy of the __constant__ taps (kernels/tap_memory.cuh),
/// per device: each translation unit whose kernels read constant taps keeps one of these.
class ConstantTapUploads {
 public:
  /// Copies `taps` (at most kernels::kConstantTapFloats) into `symbol`, that translation unit's
  /// kernels::c_taps, on `stream`, unless it already holds them (then `stream` waits for the
  /// upload that wrote them).
  void upload(int device, const void* symbol, const std::vector<float>& taps, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    UploadedTaps& uploaded = uploads_[device];
    if (uploaded.holds(taps, stream))
      return;
    uploaded.forget();
    NDCONV_CUDA_CHECK(cudaMemcpyToSymbolAsync(symbol, taps.data(), taps.size() * sizeof(float), 0,
                                              cudaMemcpyHostToDevice, stream));
    uploaded.wrote(taps, stream);
  }

 private:
  std::mutex mutex_;
  std::map<int, UploadedTaps> uploads_;
};

}  // namespace ndconv::cuda_backend
