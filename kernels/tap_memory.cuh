// The tap readers of the kernels that read taps from memory the launcher fills.
//
// Taps are warp-uniform: every thread of a warp reads the same tap in the same FMA. They sit in
// __constant__ memory (served by the constant cache as a broadcast) when they fit, else in global
// memory read through the read-only path (__ldg).
//
// c_taps is `static`: CUDA separable compilation is off, so every translation unit that includes
// this header has its own copy, and a launcher uploads to the copy of the translation unit whose
// kernels read it (ConstantTapUploads, cuda/uploaded_taps.h).
#pragma once

#include <cuda_runtime.h>

#include "kernels/constant_taps.h"

namespace ndconv::kernels {

static __constant__ float c_taps[kConstantTapFloats];

struct ConstantTaps {
  __device__ __forceinline__ float operator()(int i) const { return c_taps[i]; }
};

struct GlobalTaps {
  const float* __restrict__ taps;
  __device__ __forceinline__ float operator()(int i) const { return __ldg(taps + i); }
};

}  // namespace ndconv::kernels
