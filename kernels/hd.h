// Portability for the kernels' per-thread functions: NDCONV_HD marks a function that compiles
// both for the GPU (nvcc) and for the host (g++ or the host pass of nvcc), so that the CI machine,
// which has no GPU, runs the very same indexing code through a host loop over the launch grid.
// Also the __host__ __device__ twin of detail::boundary_index (src/engine/problem.h).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define NDCONV_HD __host__ __device__ __forceinline__
#else
#define NDCONV_HD inline
#endif

// Full unrolling of loops over compile-time trip counts (the KO accumulators): nvcc's device pass
// and g++ (the CI emulation) each get their own spelling; nvcc's host pass, which never runs these
// loops hot, gets none (g++ would warn about the CUDA pragma, cudafe about the GCC one).
#if defined(__CUDA_ARCH__)
#define NDCONV_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define NDCONV_UNROLL
#else
#define NDCONV_UNROLL _Pragma("GCC unroll 32")
#endif

// No unrolling of a short loop with a run-time trip count, where nvcc's default (by 4, with a
// remainder prologue) costs more than the loop (the halo's slots, tiled_halo.h).
#if defined(__CUDA_ARCH__)
#define NDCONV_NO_UNROLL _Pragma("unroll 1")
#else
#define NDCONV_NO_UNROLL
#endif

namespace ndconv::kernels {

/// Boundary conditions as integers (the values of ndconv::Boundary) so that kernels need no
/// engine header.
enum BoundaryCode : int { kZero = 0, kReplicate = 1, kMirror = 2, kPeriodic = 3 };

/// The input index that index i (possibly outside [0, n)) reads under boundary b, or -1 for a
/// zero. Must agree with detail::boundary_index; the host tests compare the two exhaustively.
/// I is int64_t (boundary_index_hd) or, where a kernel knows its extents fit, int: a 64-bit
/// remainder is a subroutine call on the GPU, and a call site in a register-heavy kernel made
/// ptxas spill around it (the column kernel).
template <typename I>
NDCONV_HD I boundary_index_t(I i, I n, int b) {
  if (i >= 0 && i < n)
    return i;
  if (b == kZero)
    return -1;
  if (b == kReplicate)
    return i < 0 ? 0 : n - 1;
  // Periodic and mirror first try the common case of an index within one extent of the volume
  // without a division (kernels map halo indices per element).
  if (b == kPeriodic) {
    if (i >= -n && i < 2 * n)
      return i < 0 ? i + n : i - n;
    const I r = i % n;
    return r < 0 ? r + n : r;
  }
  // Mirror without repeating the edge: d c b | a b c d.
  if (n == 1)
    return 0;
  if (i > -n && i < 2 * n - 1)
    return i < 0 ? -i : 2 * (n - 1) - i;
  const I period = 2 * (n - 1);
  I r = i % period;
  if (r < 0)
    r += period;
  return r < n ? r : period - r;
}

NDCONV_HD int64_t boundary_index_hd(int64_t i, int64_t n, int b) {
  return boundary_index_t<int64_t>(i, n, b);
}

}  // namespace ndconv::kernels
