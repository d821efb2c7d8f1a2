// 128-bit memory accesses of four consecutive floats, written as explicit PTX on the GPU.
//
// Why not a float4 cast: in the column kernel NVVM split `*reinterpret_cast<float4*>(p) = ...`
// into four 32-bit stores (its SASS held no STG.E.128 or STS.128 at all), so a
// warp's store of 512 contiguous bytes took four instructions that each touched every sector. An
// asm statement is not split. Every pointer here must be 16-byte aligned; the callers check that
// (ColumnLayout::vector_in / vector_out and the staged row's x origin).
//
// On the host (the CI emulation) each is a plain copy of the four floats (copy_four).
#pragma once

#include "kernels/hd.h"

namespace ndconv::kernels {

/// The host's stand-in for every access below: the four floats one by one.
NDCONV_HD void copy_four(float* dst, const float* src) {
  for (int x = 0; x < 4; ++x)
    dst[x] = src[x];
}

/// Four floats of global memory into registers through the read-only path (__ldg of a float4
/// is one LDG.E.128; it is not split).
NDCONV_HD void vector_load_global(float (&v)[4], const float* p) {
#ifdef __CUDA_ARCH__
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = f.x;
  v[1] = f.y;
  v[2] = f.z;
  v[3] = f.w;
#else
  copy_four(v, p);
#endif
}

/// Where a vector store writes.
enum class MemorySpace { Global, Shared };

/// Four floats from registers to global or shared memory.
template <MemorySpace kSpace>
NDCONV_HD void vector_store(float* p, const float* v) {
#ifdef __CUDA_ARCH__
  if constexpr (kSpace == MemorySpace::Shared) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(address), "f"(v[0]), "f"(v[1]),
                 "f"(v[2]), "f"(v[3])
                 : "memory");
  } else {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(v[0]), "f"(v[1]),
                 "f"(v[2]), "f"(v[3])
                 : "memory");
  }
#else
  copy_four(p, v);
#endif
}

/// Four floats from global to shared memory asynchronously (cp.async of 16 bytes, cached in L2
/// only); tiled_commit / tiled_wait complete it like the 4-byte copies.
NDCONV_HD void vector_copy_async(float* dst, const float* src) {
#ifdef __CUDA_ARCH__
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(src) : "memory");
#else
  copy_four(dst, src);
#endif
}

}  // namespace ndconv::kernels
