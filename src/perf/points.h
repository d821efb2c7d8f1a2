// What the GPU sweep times for each problem: one point per compiled kernel instantiation it can
// ask the CUDA backend for explicitly (cuda_backend::DenseKernelRequest), plus the automatic plan
// as a point of its own. A point is keyed on the kernel that actually ran (family, TX, KO, block),
// never on a KO alone: since the tiled kernel, one KO can mean two different kernels.
//
// Forced points: every compiled KO of the blocked kernel; every compiled KO of the tiled kernel
// with its default shape (TX 8, block rows as the automatic plan picks them); in 2D the tiled
// kernel puts y on its tile rows and has no last axis to block, so only its KO 1. With
// --block-shapes also every other compiled tiled shape (TX 16 with 2x64 threads, 128x1 threads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cuda_backend.h"

namespace ndconv::perf {

struct PointRequest {
  cuda_backend::DenseKernelRequest request;
  bool is_auto = false;
  /// "auto", "blocked KO=4", "tiled TX=8 KO=4", "tiled TX=16 KO=2 rows=64".
  std::string label() const;
};

/// The points of a problem of dimension `dims` over the compiled `variants`: forced points (as
/// above; `kos` non-empty keeps only those KO) in table order, then the auto point.
std::vector<PointRequest> sweep_points(
    const std::vector<cuda_backend::DenseKernelVariant>& variants, int dims,
    const std::vector<int64_t>& kos, bool block_shapes);

/// Throws InvalidArgument naming the compiled values when a KO of `kos` is compiled in neither
/// family.
void check_compiled_kos(const std::vector<cuda_backend::DenseKernelVariant>& variants,
                        const std::vector<int64_t>& kos);

/// "blocked" or "tiled".
const char* family_name(cuda_backend::DenseKernel kernel);

/// The launch's threads per block, "4x32x1".
std::string block_text(const cuda_backend::LaunchPlan& plan);

}  // namespace ndconv::perf
