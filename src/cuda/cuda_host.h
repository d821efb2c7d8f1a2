// The CUDA backend's host services for the engine's public API (ndconv/memory.h, warm-up, the
// backend choice). src/cuda/host_memory.cu implements them; src/cuda/host_memory_unavailable.cpp
// in a build without CUDA, where they report nothing pinned and nothing started. None throws.
#pragma once

#include <cstddef>

#include "core/constant_border.h"
#include "core/problem.h"
#include "ndconv/memory.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// Page-locked host memory (portable to every device), or nullptr when CUDA cannot provide it.
void* pinned_host_allocate(std::size_t bytes) noexcept;
void pinned_host_free(void* p) noexcept;

/// Whether CUDA reports both ends of [p, p + bytes) as page-locked host memory.
bool host_range_pinned(const void* p, std::size_t bytes) noexcept;

/// The device and staging buffer caches (src/cuda/buffer_pools.h).
void release_cached_memory() noexcept;
CachedMemory cached_memory() noexcept;

/// Whether ndconv was built with the CUDA backend (asks nothing of CUDA).
bool compiled() noexcept;

/// Whether this process has already paid CUDA's start-up (a context exists on `device`).
bool started(int device) noexcept;

/// Creates the runtime's context on `device` now (the start-up cost), ignoring failures: they are
/// reported by the probe later.
void start(int device) noexcept;

/// The device-pointer entry points (ndconv/device.h) after the front end: contiguous device views,
/// enqueued on `stream` without synchronisation. Throw InvalidArgument / CudaError.
void run_dense_device(const detail::CorrelationProblem& problem, const Options& options,
                      void* stream, RunReport& report);
void run_separable_device(const detail::SeparableProblem& problem, const Options& options,
                          void* stream, RunReport& report);

/// Adds Boundary::Constant's terms (core/constant_border.h) to a contiguous device output, enqueued
/// on `stream` after the filter's kernels. Throws CudaError / InvalidArgument.
void add_constant_border_device(const detail::ConstantBorder& terms, const VolumeView& output,
                                int device, void* stream);

/// run_dense / run_separable on stored values (ndconv/stored.h): `problem.input` gives the
/// geometry only; the values come from `input`, uploaded as stored and converted on the device.
void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report);
void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report);

}  // namespace ndconv::cuda_backend
