// What the bank's per-voxel kernels share (bank.cu's padding, bank_tensor.cu's structure tensor,
// control.cu's control tensor and weights): the largest banks and tensors they take, and their
// launch shape. Device code only.
#pragma once

#include <cstdint>

namespace ndconv::cuda_bank {

// The largest reconstruction bank: the lowpass and 10 highpass filters (4D); the largest tensor:
// 10 components (4D); the largest quadrature bank: 12 complex filters (4D).
constexpr int kMaxHighpass = 10;
constexpr int kMaxComponents = 10;
constexpr int kMaxQuadrature = 12;

// Threads per block of the per-voxel kernels (structure tensor, weights, padding).
constexpr int kVoxelThreads = 256;

inline unsigned voxel_blocks(int64_t voxels) {
  return static_cast<unsigned>((voxels + kVoxelThreads - 1) / kVoxelThreads);
}

}  // namespace ndconv::cuda_bank
