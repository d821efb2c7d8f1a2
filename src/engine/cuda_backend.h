// The CUDA backend (src/cuda/, kernels/). When ndconv is built without CUDA,
// src/cuda/cuda_unavailable.cpp implements these so that probe() says why and run_* throw.
//
// Two levels:
//  - run_dense / run_separable: host views in and out; the backend stages strided views, uploads,
//    filters (in slabs along the last axis when the volume does not fit in device memory or under
//    the cap), downloads and fills the RunReport. Used by the engine's front end.
//  - launch_*_device: the ITK-free low-level API for benchmarks and sweeps. Data already on the
//    device, contiguous; the call only enqueues work on `stream` (no synchronisation).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/problem.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// Never throws: no driver (cudaErrorInsufficientDriver) or no device is a normal state.
CudaStatus probe();

/// Host views in, host views out; uploads, filters (in slabs when the volume does not fit in the
/// device memory or under the cap) and downloads. Throws CudaError / InvalidArgument / Aborted.
void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);

/// One compiled instantiation of a kernel (outputs per thread along the filtered/last axis) with
/// its resources on a device, as the CUDA runtime reports them.
struct KernelVariant {
  int outputs_per_thread = 0;
  int registers_per_thread = 0;
  std::size_t local_bytes = 0;  ///< local memory per thread (spills); 0 for a healthy variant
  int block_threads = 0;
  int blocks_per_sm = 0;  ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor at block_threads
  double occupancy = 0;   ///< resident warps / maximum warps per SM
};

/// The dense kernel's instantiations (one per compiled KO, ascending) on `device`. `dims` is
/// accepted for symmetry with the problem (the same kernels serve 2D, 3D and 4D). Throws CudaError.
std::vector<KernelVariant> dense_variants(int device, int dims);

/// The tiled dense kernel's instantiations (kernels/tiled_thread.h), in dispatch-table order;
/// outputs_per_thread is KO along the last axis (each thread also computes 8 outputs along x).
std::vector<KernelVariant> tiled_variants(int device);

/// The register-blocked 1D pass used by separable filters along a non-x axis.
std::vector<KernelVariant> separable_variants(int device);

/// What a launch did.
struct LaunchPlan {
  int outputs_per_thread = 0;
  std::string reason;              ///< why this KO (rule or forced)
  int block[3] = {0, 0, 0};        ///< threads per block (x, y, z)
  int grid[3] = {0, 0, 0};         ///< blocks (the kernel loops when a dimension is capped)
  bool taps_in_constant = false;   ///< taps read from __constant__ memory (else global __ldg)
  int launches = 0;                ///< kernels enqueued (separable: one per filtered axis)
  std::string kernel = "blocked";  ///< "blocked" (blocked_thread.h) or "tiled ..." (tiled_thread.h)
  /// One line, e.g. "KO=8 block 128x1x1 grid 2x256x32 taps const".
  std::string describe() const {
    auto xyz = [](const int* v) {
      return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
    };
    return kernel + " KO=" + std::to_string(outputs_per_thread) + " block " + xyz(block) +
           " grid " + xyz(grid) + (taps_in_constant ? " taps const" : " taps global") +
           " launches " + std::to_string(launches);
  }
};

/// Enqueues a dense correlation on `stream` (a cudaStream_t; nullptr = default stream). The
/// problem's input/output data are DEVICE pointers to contiguous volumes; `taps` is a HOST
/// pointer (copied to the device inside the call, stream-ordered). outputs_per_thread 0 = the KO
/// rule (ko_rule.h); a value without an instantiation throws InvalidArgument. No synchronisation.
/// Taps live in one per-device buffer: concurrent launches with different filters on different
/// streams of the same device are not supported.
LaunchPlan launch_dense_device(const detail::CorrelationProblem& p, int outputs_per_thread,
                               int device, void* stream);

/// Floats of device scratch that launch_separable_device needs for `p` (0 when one axis only).
std::size_t separable_scratch_floats(const detail::SeparableProblem& p);

/// Enqueues the 1D passes of a separable correlation (device pointers, contiguous). `scratch`
/// must hold separable_scratch_floats(p) floats (may be null when that is 0).
LaunchPlan launch_separable_device(const detail::SeparableProblem& p, float* scratch, int device,
                                   void* stream);

}  // namespace ndconv::cuda_backend
