// Portability of code that runs on both sides: NDCONV_HD marks a function that compiles both for
// the GPU (nvcc) and for the host (g++ or the host pass of nvcc), so that the CI machine, which has
// no GPU, runs the very same code (the kernels' indexing through a host loop over the launch grid,
// the adaptive filter's per-voxel control on the CPU). Macros only.
#pragma once

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
