// The wgmma filter bank's launch (wgmma_bank.h): the compiled tiles and their launch. The one
// translation unit built for sm_90a (its own object library, src/cuda/bank/sources.cmake), so that
// the rest of the tree keeps its architectures and CI's build time barely grows.
#include <string>

#include "cuda/bank/wgmma_bank.h"
#include "cuda/bank/wgmma_kernel.cuh"
#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_bank {

namespace {

// The compiled tiles (dev/wgmma_bank_sweep.cu): one tap frame (3D) and several (4D).
using WgmmaTile = TensorCoreTile<4, 4, TensorCoreCopies::Shared>;
constexpr int kWgmmaMinBlocks = 3;
using WgmmaFramesTile = TensorCoreTile<4, 12, TensorCoreCopies::Shared>;
constexpr int kWgmmaFramesMinBlocks = 1;

template <class Tile, int MinBlocks>
void launch_tile(const TensorCoreGeometry& g, int device, const uint8_t* padded, const uint8_t* b,
                 const float* scales, float* outputs, cudaStream_t stream) {
  const TensorCoreArgs a =
      tensor_core_args<Tile>(g, padded, reinterpret_cast<const int32_t*>(b), scales, outputs);
  const int sms = cuda_backend::device_attributes(device).multiprocessors;
  if (!launch_wgmma_kernel<Tile, MinBlocks>(a, g.passes(), sms, stream))
    throw InvalidArgument("the wgmma filter bank's block does not fit on the GPU's SMs (" +
                          std::to_string(wgmma_shared_bytes<Tile>(g.frames())) +
                          " bytes of shared memory)");
  NDCONV_CUDA_CHECK_LAUNCH("the wgmma filter bank kernel");
}

}  // namespace

bool wgmma_runs_on(int device) {
  const cuda_backend::DeviceAttributes& d = cuda_backend::device_attributes(device);
  if (d.cc_major != 9 || d.cc_minor != 0)
    return false;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, wgmma_bank_kernel<WgmmaTile, kWgmmaMinBlocks>) !=
      cudaSuccess) {
    cudaGetLastError();  // no image for the device: clear the error
    return false;
  }
  return true;
}

int wgmma_bank_rows(const TensorCoreGeometry& g) {
  return g.frames() > 1 ? WgmmaFramesTile::kRows : WgmmaTile::kRows;
}

int wgmma_bank_shared_bytes(const TensorCoreGeometry& g) {
  return g.frames() > 1 ? wgmma_shared_bytes<WgmmaFramesTile>(g.frames())
                        : wgmma_shared_bytes<WgmmaTile>(1);
}

void launch_wgmma_bank(const TensorCoreGeometry& g, int device, const uint8_t* padded,
                       const uint8_t* b, const float* scales, float* outputs, cudaStream_t stream) {
  if (g.frames() > 1)
    launch_tile<WgmmaFramesTile, kWgmmaFramesMinBlocks>(g, device, padded, b, scales, outputs,
                                                        stream);
  else
    launch_tile<WgmmaTile, kWgmmaMinBlocks>(g, device, padded, b, scales, outputs, stream);
}

}  // namespace ndconv::cuda_bank
