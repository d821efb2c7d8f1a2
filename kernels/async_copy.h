// Asynchronous copies of single floats from global to shared memory (cp.async on the GPU, plain
// copies in the host emulation), in groups that a thread commits and waits for. Shared by the
// kernels that stage their inputs in shared memory: tiled (src/cuda/tiled/), column
// (src/cuda/separable/) and border (src/cuda/border/).
#pragma once

#include "kernels/hd.h"

namespace ndconv::kernels {

/// One float from global to shared memory, or a zero when `src` is null. On the GPU an
/// asynchronous copy (cp.async, zero-filled when src is null), so that the plane being loaded
/// costs no registers and overlaps the compute on the other buffer; tiled_wait completes it.
NDCONV_HD void tiled_copy(float* dst, const float* src, const float* any_valid) {
#ifdef __CUDA_ARCH__
  const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address),
               "l"(src != nullptr ? src : any_valid), "r"(src != nullptr ? 4 : 0));
#else
  (void)any_valid;
  *dst = src != nullptr ? *src : 0.0f;
#endif
}

/// Closes the group of copies issued since the last call (one plane).
NDCONV_HD void tiled_commit() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most `pending` (0 or 1) groups of this thread's copies are in flight.
NDCONV_HD void tiled_wait(int pending) {
#ifdef __CUDA_ARCH__
  if (pending > 0)
    asm volatile("cp.async.wait_group 1;\n" ::);
  else
    asm volatile("cp.async.wait_group 0;\n" ::);
#else
  (void)pending;
#endif
}

/// One float from global to shared memory that is known to exist: cp.async on the GPU (see
/// tiled_copy), without the null check and the zero-fill operand.
NDCONV_HD void tiled_copy_valid(float* dst, const float* src) {
#ifdef __CUDA_ARCH__
  const unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_address), "l"(src));
#else
  *dst = *src;
#endif
}

}  // namespace ndconv::kernels
