// Hopper's bulk tensor copy (TMA) for whole shared-memory tiles, and the shared-memory barriers
// (mbarrier) that its copies complete on. One thread issues a copy of a box of a tensor in global
// memory, described by a tensor map the host encoded (src/cuda/tensor_map.h); the copy engine
// moves it, fills the elements outside the tensor with zeros, and counts its bytes on a barrier
// that the consumers wait on. Why: copying a plane thread by thread costs every thread a dozen or
// more copies with their address and bounds arithmetic, a large share of a small filter's
// instructions; a bulk copy is a handful of instructions in one thread, and every thread's wait
// replaces a barrier. A box must start on a 16-byte boundary along its first axis: at any other x
// the copy engine stops the kernel with an illegal-instruction error (tensor_map.h checks it).
//
// Device-only instructions: compiled for sm_90 and later. On older targets (the 80-real build)
// the functions compile to nothing and the launcher never selects them (tensor_map.h checks the
// device). The host has no copy engine: the tiled kernel's host form copies the box itself.
#pragma once

#include <cstdint>

#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

/// An encoded tensor map (CUtensorMap of the driver API: 128 bytes, 64-byte aligned), kept opaque
/// here so that the kernels need no driver header. Passed to a kernel by value as a
/// __grid_constant__ parameter: the copy instruction reads it from the parameter space.
struct alignas(64) TensorMap {
  unsigned char bytes[128];
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NDCONV_BULK_COPY 1
#endif

/// Shared-memory address of a generic pointer into shared memory.
NDCONV_HD unsigned shared_address(const void* p) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

/// One thread: initialises a barrier that completes when one arrival and its expected bytes have
/// come, and makes it visible to the copy engine (the async proxy). A block barrier must follow
/// before any other thread uses it.
NDCONV_HD void bulk_barrier_init(uint64_t* barrier) {
#ifdef NDCONV_BULK_COPY
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(barrier)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
  asm volatile("fence.proxy.async.shared::cta;\n" ::);
#else
  (void)barrier;
#endif
}

/// Orders this thread's earlier ordinary shared-memory accesses before later copy-engine writes
/// (a buffer that threads wrote or read and the copy engine refills next).
NDCONV_HD void bulk_fence_shared() {
#ifdef NDCONV_BULK_COPY
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// One thread: arms `barrier` to complete when `bytes` more have landed (one arrival: every box
/// copied on it until it completes counts its bytes against this).
NDCONV_HD void bulk_expect(uint64_t* barrier, int bytes) {
#ifdef NDCONV_BULK_COPY
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
      "r"(bytes)
      : "memory");
#else
  (void)barrier, (void)bytes;
#endif
}

/// One thread: copies the box of `map` at coordinates c (element indices along the map's four
/// dimensions, any of them outside the tensor) into shared memory at `dst` (128-byte aligned); its
/// bytes (the whole box, zero-filled elements included) count on `barrier`, which bulk_expect
/// armed for them.
NDCONV_HD void bulk_copy_box_on(const TensorMap& map, const int (&c)[4], float* dst,
                                uint64_t* barrier) {
#ifdef NDCONV_BULK_COPY
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]),
      "r"(shared_address(barrier))
      : "memory");
#else
  (void)map, (void)c, (void)dst, (void)barrier;
#endif
}

/// One thread: one box copy whose `bytes` complete `barrier` (bulk_expect, then bulk_copy_box_on).
NDCONV_HD void bulk_copy_box(const TensorMap& map, const int (&c)[4], float* dst, uint64_t* barrier,
                             int bytes) {
  bulk_expect(barrier, bytes);
  bulk_copy_box_on(map, c, dst, barrier);
}

/// The host form of a box copy (the emulations; the host has no copy engine): the box of
/// `width` x `rows` elements along axes 0 and 1 (one along the others) at coordinates c of the
/// input of g, into dst (rows `width` apart), with zeros outside the volume as the copy engine
/// fills them.
inline void bulk_copy_box_host(const Geometry& g, const float* in, const int (&c)[4], int width,
                               int rows, float* dst) {
  for (int r = 0; r < rows; ++r) {
    for (int col = 0; col < width; ++col) {
      const int64_t i[kAxes] = {int64_t{c[0]} + col, int64_t{c[1]} + r, c[2], c[3]};
      bool inside = true;
      int64_t at = 0;
      for (int a = 0; a < kAxes; ++a) {
        inside = inside && i[a] >= 0 && i[a] < g.in_extent[a];
        at += i[a] * g.in_stride[a];
      }
      dst[r * width + col] = inside ? in[at] : 0.0f;
    }
  }
}

/// Every consuming thread: waits until the phase of `barrier` with parity `parity` (0 for its
/// first completion, then alternating) has completed; the copy's bytes are then visible.
NDCONV_HD void bulk_wait(uint64_t* barrier, unsigned parity) {
#ifdef NDCONV_BULK_COPY
  const unsigned bar = shared_address(barrier);
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
#else
  (void)barrier, (void)parity;
#endif
}

}  // namespace ndconv::kernels
