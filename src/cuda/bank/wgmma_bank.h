// The wgmma filter bank's launch (wgmma.cu, the one translation unit compiled for sm_90a): what
// the tensor-core bank's launch (tensor_core.cu) calls where its policy takes Hopper's warpgroup
// MMA. Declared for builds with CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/bank/tensor_core_layout.h"

namespace ndconv::cuda_bank {

/// Whether `device` (the current one) runs the wgmma kernels: compute capability 9.0 and this
/// binary holds their sm_90a code (the CUDA runtime finds an image of the kernel for the device).
bool wgmma_runs_on(int device);

/// The compiled block shapes for one tap frame (3D) or several (`frames`, 4D), which the policy
/// chooses among by index (TensorCoreBankPolicy::wgmma_shape_3d, _4d); the name of shape `shape`
/// for the bank `g`.
int wgmma_shape_count(bool frames);
std::string wgmma_shape_name(const TensorCoreGeometry& g, int shape);

/// Output rows per warp of shape `shape` for `g` (what wgmma_weights lays out for it) and the
/// shared bytes of its block.
int wgmma_bank_rows(const TensorCoreGeometry& g, int shape);
int wgmma_bank_shared_bytes(const TensorCoreGeometry& g, int shape);
/// Whether shape `shape` for `g` reads its weights in wgmma_pair_tails' order.
bool wgmma_bank_pair_tails(const TensorCoreGeometry& g, int shape);

/// Enqueues the bank on `stream` of `device` as launch_tensor_core_bank with shape `shape`, the
/// weights `b` laid out by wgmma_weights for wgmma_bank_rows(g, shape) rows (WgmmaWeights::b, on
/// the device; reordered by wgmma_pair_tails where wgmma_bank_pair_tails). Throws InvalidArgument
/// where the block does not fit on the GPU's SMs.
void launch_wgmma_bank(const TensorCoreGeometry& g, int shape, int device, const uint8_t* padded,
                       const uint8_t* b, const float* scales, float* outputs, cudaStream_t stream);

}  // namespace ndconv::cuda_bank
