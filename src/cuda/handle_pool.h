// Streams and events kept per device between calls. A pipelined call uses five streams and a few
// dozen events; creating and destroying them cost it about 50 us (4 us a stream, 0.8 us an
// event, dev/api_costs.cpp), 3% of a 64 MiB call on pinned memory and more of a small one. Stream
// and Event (device_memory.h) take theirs from the pool of the current device and give them back
// on destruction; their owners wait for the work queued on them first, so a handle taken from the
// pool has nothing pending. Each device keeps at most kKeptStreams streams and kKeptEvents events
// of each kind idle; release_cached_memory() destroys the idle ones. Safe from several threads.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ndconv::cuda_backend {

inline constexpr std::size_t kKeptStreams = 32;
inline constexpr std::size_t kKeptEvents = 256;

/// A non-blocking stream of `device` (the current device), from its pool or newly created.
/// Throws CudaError when one cannot be created.
cudaStream_t take_stream(int device);
/// Gives back a stream of `device` whose work is done (destroyed when the pool is full).
void give_stream(int device, cudaStream_t stream) noexcept;

/// An event of `device` (the current device) with timing or without, from its pool or newly
/// created. Throws CudaError when one cannot be created.
cudaEvent_t take_event(int device, bool timing);
/// Gives back an event taken with the same `timing` (destroyed when the pool is full).
void give_event(int device, bool timing, cudaEvent_t event) noexcept;

/// Destroys the idle streams and events of every device (release_cached_memory).
void release_idle_handles() noexcept;

/// Idle handles of all devices, for tests.
struct IdleHandles {
  std::size_t streams = 0;
  std::size_t events = 0;
};
IdleHandles idle_handles() noexcept;

}  // namespace ndconv::cuda_backend
