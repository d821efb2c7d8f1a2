// The __global__ entry point of the streaming kernel of separable filters (stream_thread.h).
// Include from exactly one translation unit of the product (stream_launch.cu); dev/stream_sweep.cu
// instantiates other shapes.
#pragma once

#include <cuda_runtime.h>

#include "cuda/separable/stream_thread.h"
#include "kernels/async_copy.h"
#include "kernels/bulk_copy.h"
#include "kernels/geometry.h"

namespace ndconv::kernels {

/// One block per x-y tile and chunk along z (stream_launch_shape; grid y and z in range:
/// stream_can_implement). Thread 0 keeps kStages plane copies in flight; per plane p: every thread
/// waits for its copy, runs its x tasks (and, in a face tile with a halo, patches plane p + 1 once
/// that has landed), one block barrier, thread 0 refills the buffer with plane p + kStages, then
/// every thread runs its y pass and ring step and stores the output plane that completed. The ring
/// step is dispatched on p mod K (stream_ring_dispatch) so that every ring slot is a compile-time
/// index.
template <int K, typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    stream_kernel(Geometry g, StreamLayout l, StreamTaps t, const __grid_constant__ TensorMap map,
                  const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ __align__(128) float stream_shared[];
  float* const shared = stream_shared;
  uint64_t* const bars = reinterpret_cast<uint64_t*>(shared + l.barriers);
  const int tid = threadIdx.x;
  const StreamBlock b = stream_block<S>(g, l, static_cast<int>(blockIdx.x),
                                        static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z));
  if (tid == 0) {
    for (int s = 0; s < S::kStages; ++s)
      bulk_barrier_init(&bars[s]);
  }
  stream_plane_table(g, l, b, shared, tid, S::kThreads);
  if (S::kZTapRegisters && tid == 0) {
#pragma unroll
    for (int j = 0; j < K; ++j)
      shared[l.taps + j] = t.z[j];
  }
  __syncthreads();
  if (tid == 0) {
    for (int s = 0; s < S::kStages && s < b.planes; ++s)
      stream_load_plane(g, l, map, in, b, shared, s, shared + s * l.plane_floats, &bars[s]);
  }
  const bool halo = tiled_halo_needed(l.halo, b.t);
  if (halo) {
    tiled_halo_list<S>(g, l.halo, b.t, shared, tid);
    bulk_wait(&bars[0], 0);
    stream_patch_halo<S>(g, l, in, shared, shared, b, 0, tid);
    __syncthreads();
  }
  StreamColumn column = stream_output_column<S>(g, b, out, tid);
  float ring[K][S::kYRun];
#pragma unroll
  for (int j = 0; j < K; ++j) {
#pragma unroll
    for (int i = 0; i < S::kYRun; ++i)
      ring[j][i] = 0.0f;
  }
  // kZTapRegisters: the ring's taps in registers, loaded from shared memory (the compiler would
  // fold copies of the parameters back into constant operands).
  float tz[K];
#pragma unroll
  for (int j = 0; j < K; ++j)
    tz[j] = S::kZTapRegisters ? shared[l.taps + j] : 0.0f;
  int r = 0;  // p mod K
#pragma unroll 1
  for (int p = 0; p < b.planes; ++p) {
    const int s = p % S::kStages;
    float* const plane = shared + s * l.plane_floats;
    float* const xb = shared + l.xbuf + (p & 1) * l.xbuf_floats;
    bulk_wait(&bars[s], (p / S::kStages) & 1);
    stream_filter_x<K, S>(t, plane, xb, tid);
    if (halo && p + 1 < b.planes) {
      const int s1 = (p + 1) % S::kStages;
      bulk_wait(&bars[s1], ((p + 1) / S::kStages) & 1);
      stream_patch_halo<S>(g, l, in, shared, shared + s1 * l.plane_floats, b, p + 1, tid);
    }
    // Every thread's x tasks on this buffer are done: the copy engine may refill it. (No proxy
    // fence for reads: the barrier orders them, as a CUTLASS producer refills a released stage.)
    __syncthreads();
    if (tid == 0 && p + S::kStages < b.planes)
      stream_load_plane(g, l, map, in, b, shared, p + S::kStages, plane, &bars[s]);
    float v[S::kYRun], o[S::kYRun];
    stream_filter_y<K, S>(t, xb, tid, v);
    if constexpr (S::kZTapRegisters)
      stream_ring_dispatch<K, S>(r, ring, v, tz, o);
    else
      stream_ring_dispatch<K, S>(r, ring, v, t.z, o);
    r = r + 1 == K ? 0 : r + 1;
    if (p >= K - 1)
      stream_store<S>(g, column, o);
  }
}

}  // namespace ndconv::kernels
