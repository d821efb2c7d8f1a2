// The pad and border kernels' instantiations and launchers (border_launch.h). This translation
// unit has its own copy of the constant taps (kernels/tap_memory.cuh), which border_upload_taps
// fills for border_kernel.
#include "cuda/border/border_launch.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "cuda/border/border_thread.h"
#include "cuda/border/pad_thread.h"
#include "cuda/check.h"
#include "cuda/dependent_launch.h"
#include "cuda/border/border_plan.h"
#include "cuda/uploaded_taps.h"
#include "kernels/geometry.h"
#include "kernels/grid_dependency.h"
#include "kernels/schedule.h"
#include "kernels/tap_memory.cuh"

namespace ndconv::kernels {

/// The border kernel (border_thread.h): after a tiled launch with kTiledBulkZeroFaces on the same
/// stream, adds to the outputs whose footprint leaves the volume along x or axis 1 the terms of
/// the boundary's values there. Taps in constant memory (the launcher uses it only where they
/// fit).
__global__ void __launch_bounds__(kBorderThreads)
    border_kernel(Geometry g, BorderPlan plan, const float* __restrict__ in, float* out) {
  extern __shared__ __align__(16) float patch[];
  const int tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < plan.blocks; b += gridDim.x) {
    const BorderBlock k = border_block(g, plan, b);
    border_stage(g, k, in, patch, tid);
    tiled_commit();
    tiled_wait(0);    // this thread's copies have landed
    __syncthreads();  // ... and every thread's
    int64_t o[kAxes];
    if (border_outputs(g, plan, k, tid, o)) {
      float acc[kBorderKO];
      border_accumulate(g, k, patch, ConstantTaps{}, o, acc);
      blocked_store<kBorderKO, false, true>(g, out, o[0], o[1], o[2], o[3], acc);
    }
    __syncthreads();  // the patch is read before the next block's staging
  }
}

/// The padded input of a dense tiled launch (pad_thread.h): each plane (axis 2 by axis 3, along
/// grid z) is a run of quads (4 padded columns) counted row by row, which the blocks along grid y
/// share, kPadQuads per thread; grid y and z capped, the rest covered by grid-stride loops. The
/// host guarantees that a plane's quads count in 32 bits. One instantiation per boundary
/// (kBoundary replaces g.boundary): with the boundary read at run time, mirror and periodic fall
/// below the copy bandwidth that replicate reaches.
template <int kBoundary>
__global__ void __launch_bounds__(256)
    pad_kernel(Geometry g, PadLayout p, const float* __restrict__ in, float* __restrict__ out) {
  g.boundary = kBoundary;
  grid_dependents_launch();  // the tiled kernel's prologue may overlap the end of this pass
  const int quads = static_cast<int>(p.extent[0] / 4);
  const int per_plane = quads * static_cast<int>(p.extent[1]);
  const int64_t planes = g.in_extent[2] * g.in_extent[3];
  const int step = static_cast<int>(blockDim.x) * kPadQuads;
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const int64_t i2 = plane % g.in_extent[2], i3 = plane / g.in_extent[2];
    for (int first = blockIdx.y * step + threadIdx.x; first < per_plane;
         first += gridDim.y * step) {
      PadQuad q[kPadQuads];
      int row[kPadQuads], quad[kPadQuads];
#pragma unroll
      for (int k = 0; k < kPadQuads; ++k) {
        const int i = first + k * static_cast<int>(blockDim.x);
        row[k] = i / quads;
        quad[k] = i - row[k] * quads;
        if (i < per_plane)
          q[k] = pad_read(g, p, in, quad[k], row[k], i2, i3);
      }
#pragma unroll
      for (int k = 0; k < kPadQuads; ++k) {
        if (first + k * static_cast<int>(blockDim.x) < per_plane)
          pad_write(p, out, q[k], quad[k], row[k], i2, i3);
      }
    }
  }
}

}  // namespace ndconv::kernels

namespace ndconv::cuda_backend {
namespace {

ConstantTapUploads g_border_taps;  // this translation unit's kernels::c_taps, per device

}  // namespace

void launch_pad(const PaddedInput& pi, const kernels::Geometry& lg, const float* in, float* padded,
                cudaStream_t stream) {
  kernels::PadLayout layout = pi.layout;
  layout.vector_reads = layout.vector_reads && reinterpret_cast<uintptr_t>(in) % 16 == 0;
  const int threads = 256;
  const int64_t per_plane = layout.extent[0] / 4 * layout.extent[1];
  const int64_t per_block = int64_t{threads} * kernels::kPadQuads;
  const dim3 grid(1,
                  static_cast<unsigned>(std::min<int64_t>(kernels::kMaxGridYZ,
                                                          (per_plane + per_block - 1) / per_block)),
                  static_cast<unsigned>(
                      std::min<int64_t>(kernels::kMaxGridYZ, lg.in_extent[2] * lg.in_extent[3])));
  switch (lg.boundary) {
    case kernels::kReplicate:
      kernels::pad_kernel<kernels::kReplicate>
          <<<grid, threads, 0, stream>>>(lg, layout, in, padded);
      break;
    case kernels::kMirror:
      kernels::pad_kernel<kernels::kMirror><<<grid, threads, 0, stream>>>(lg, layout, in, padded);
      break;
    case kernels::kPeriodic:
      kernels::pad_kernel<kernels::kPeriodic><<<grid, threads, 0, stream>>>(lg, layout, in, padded);
      break;
    case kernels::kReflect:
      kernels::pad_kernel<kernels::kReflect><<<grid, threads, 0, stream>>>(lg, layout, in, padded);
      break;
    default:  // zero: the copy engine's zeros are the boundary; tiled_input_padding_pays says no
      // (the engine hands the backends Boundary::Constant as zero)
      throw std::logic_error("pad_kernel: no padding for the zero boundary");
  }
  NDCONV_CUDA_CHECK_LAUNCH("pad_kernel");
}

TapLease border_upload_taps(int device, const std::vector<float>& taps, cudaStream_t stream) {
  return g_border_taps.upload(device, &kernels::c_taps, taps, stream);
}

void launch_border(int device, const kernels::Geometry& g, const float* in, float* out,
                   cudaStream_t stream) {
  const kernels::BorderPlan plan = kernels::border_plan(g);
  const int64_t grid = std::min<int64_t>(plan.blocks, int64_t{1} << 30);
  // A plain launch: as the tiled kernel's dependent its blocks would share the SMs with the tiled
  // kernel's last wave and slow it down more than the overlap saves.
  launch_kernel(device, false, &kernels::border_kernel, dim3(static_cast<unsigned>(grid)),
                dim3(kernels::kBorderThreads), plan.patch_floats * static_cast<int>(sizeof(float)),
                stream, g, plan, in, out);
}

}  // namespace ndconv::cuda_backend
