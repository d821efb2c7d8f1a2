// The device tap buffers (a translation unit's __constant__ taps, the global tap buffers): what
// each last received, so that a launch whose taps are the same skips the upload, and which kernels
// read it since, so that a launch with other taps overwrites it only after them.
//
// Why skip: every launch used to copy its taps from host memory, stream-ordered, before its
// kernels. Repeated filtering with one filter (the frames of a 3D+time sequence, a benchmark's
// repetitions, a pipeline run on many volumes) paid that copy each time, inside the time the GPU
// spends on the filter, where the peers' weights already sit on the device.
//
// Concurrent calls (several threads, each on its own streams): a launch takes a lease on the
// buffer holding its taps (TapLease) while it enqueues the kernels that read them; the lease's end
// records an event after those kernels on the launch's stream. The skipped upload's launch waits
// (on the GPU) for the upload that wrote its taps; an upload of other taps waits for the kernels
// that read the buffer's previous taps, and only for them. Launches with the same taps share a
// buffer and run at once; launches with other taps take another global buffer (GlobalTapBuffers),
// or, for a translation unit's one constant buffer, wait on the host until the other launch has
// enqueued its kernels and then on the GPU until they have run.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
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

/// Events recorded after the kernels that read one tap buffer since its last upload.
class TapReaders {
 public:
  TapReaders() = default;
  ~TapReaders() {
    for (cudaEvent_t e : events_)
      cudaEventDestroy(e);  // may fail at process exit, after the context is gone: ignored
  }
  TapReaders(const TapReaders&) = delete;
  TapReaders& operator=(const TapReaders&) = delete;

  /// Records that the work queued on `stream` so far reads the buffer. Past kMaxEvents readers,
  /// `stream` first waits for the earlier ones (which read the same taps: no conflict, and for
  /// repeated calls long done), so that one event stands for them all.
  void read_by(cudaStream_t stream) {
    if (used_ == kMaxEvents) {
      for (std::size_t i = 0; i < used_; ++i)
        NDCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, events_[i], 0));
      used_ = 0;
    }
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      NDCONV_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events_.push_back(e);
    }
    NDCONV_CUDA_CHECK(cudaEventRecord(events_[used_], stream));
    ++used_;
  }

  /// Makes `stream` wait for every reader recorded since clear().
  void wait(cudaStream_t stream) const {
    for (std::size_t i = 0; i < used_; ++i)
      NDCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, events_[i], 0));
  }

  /// Blocks until every reader recorded since clear() has run (before the buffer is freed).
  void synchronize() const {
    for (std::size_t i = 0; i < used_; ++i)
      NDCONV_CUDA_CHECK(cudaEventSynchronize(events_[i]));
  }

  /// Forgets the readers: the upload that follows wait() comes after them, and every later reader
  /// after that upload.
  void clear() { used_ = 0; }

 private:
  static constexpr std::size_t kMaxEvents = 8;
  std::vector<cudaEvent_t> events_;  // [0, used_) recorded since clear(); the rest for reuse
  std::size_t used_ = 0;
};

/// One tap buffer's state: its contents, its readers, and the launches now enqueueing kernels
/// that read it (its leases), during which no other taps may be uploaded into it.
struct TapSlot {
  UploadedTaps uploaded;
  TapReaders readers;
  int leases = 0;
};

/// A launch's use of a tap buffer, from the upload (or its skip) until its kernels are enqueued:
/// release() (or the destructor) records the readers' event on the launch's stream and lets other
/// taps into the buffer. Empty (get() null, nothing to release) when the launch needs no buffer.
class TapLease {
 public:
  TapLease() = default;
  TapLease(std::mutex& mutex, std::condition_variable& released, TapSlot& slot, cudaStream_t stream,
           const float* data)
      : mutex_(&mutex), released_(&released), slot_(&slot), stream_(stream), data_(data) {
    ++slot.leases;  // the caller holds `mutex`
  }
  ~TapLease() { release(); }
  TapLease(TapLease&& o) noexcept { *this = std::move(o); }
  TapLease& operator=(TapLease&& o) noexcept {
    if (this != &o) {
      release();
      mutex_ = std::exchange(o.mutex_, nullptr);
      released_ = std::exchange(o.released_, nullptr);
      slot_ = std::exchange(o.slot_, nullptr);
      stream_ = o.stream_;
      data_ = o.data_;
    }
    return *this;
  }
  TapLease(const TapLease&) = delete;
  TapLease& operator=(const TapLease&) = delete;

  /// The global buffer's address (null for constant memory).
  const float* get() const { return data_; }

  /// The kernels that read the buffer are enqueued on the stream.
  void release() noexcept {
    if (slot_ == nullptr)
      return;
    {
      std::lock_guard<std::mutex> lock(*mutex_);
      try {
        slot_->readers.read_by(stream_);
      } catch (...) {
        // The event could not be recorded: the CUDA context is failing, and the launch's own
        // checks report it.
      }
      --slot_->leases;
    }
    released_->notify_all();
    slot_ = nullptr;
  }

 private:
  std::mutex* mutex_ = nullptr;
  std::condition_variable* released_ = nullptr;
  TapSlot* slot_ = nullptr;
  cudaStream_t stream_ = nullptr;
  const float* data_ = nullptr;
};

/// The uploads into one translation unit's copy of the __constant__ taps (kernels/tap_memory.cuh),
/// per device: each translation unit whose kernels read constant taps keeps one of these.
class ConstantTapUploads {
 public:
  /// Copies `taps` (at most kernels::kConstantTapFloats) into `symbol`, that translation unit's
  /// kernels::c_taps, on `stream`, unless it already holds them (then `stream` waits for the
  /// upload that wrote them). Other taps wait until no launch holds a lease on the buffer, and on
  /// `stream` for the kernels that read them. Hold the lease until the kernels are enqueued.
  TapLease upload(int device, const void* symbol, const std::vector<float>& taps,
                  cudaStream_t stream) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::unique_ptr<TapSlot>& owned = slots_[device];
    if (!owned)
      owned = std::make_unique<TapSlot>();
    TapSlot& slot = *owned;
    bool held = false;  // holds() makes `stream` wait for the upload that wrote the taps
    released_.wait(lock, [&] {
      held = slot.uploaded.holds(taps, stream);
      return held || slot.leases == 0;
    });
    if (!held) {
      slot.uploaded.forget();
      slot.readers.wait(stream);
      slot.readers.clear();
      NDCONV_CUDA_CHECK(cudaMemcpyToSymbolAsync(symbol, taps.data(), taps.size() * sizeof(float), 0,
                                                cudaMemcpyHostToDevice, stream));
      slot.uploaded.wrote(taps, stream);
    }
    return TapLease(mutex_, released_, slot, stream, nullptr);
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  std::map<int, std::unique_ptr<TapSlot>> slots_;
};

}  // namespace ndconv::cuda_backend
