// The FFT family's launcher (fft_policy.h explains the method): a dense correlation on device
// data through double-precision cuFFT, with the plans kept per device and transform shape and the
// filter's spectrum cached per device. CUDA host code for launch.cu and the tests.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>

#include "core/problem.h"
#include "cuda/fft/fft_policy.h"
#include "cuda/launch.h"

namespace ndconv::cuda_backend {

/// The choice for problem `p` on `device` as a launch makes it: the cost model (with what the
/// device keeps, and the plans and spectrum counted once where the same shape and filter were
/// asked for before: FftCached::repeated), then (where it
/// gives the FFT) the device's free memory against the buffer, the spectrum unless cached and
/// cuFFT's work area, which the shape's plans say: made here unless the device keeps them (and
/// kept for the launch). Throws CudaError.
DenseMethodChoice choose_dense_method_on_device(const detail::CorrelationProblem& p, int device,
                                                const FftPolicy& policy);

/// Called by launch_fft_dense once each stage is enqueued, in order: "prepare" (taps, plans,
/// scratch), "spectrum" (the filter's, cached or transformed now), "pad", "forward", "product",
/// "inverse", "crop", "non-finite"; the bench's breakdown records an event at each.
using FftStageMark = std::function<void(const char* stage)>;

/// Enqueues `p` (device data; dims 2 or 3) on `stream` through the FFT of choice.shape: the
/// boundary-resolved box padded into a float64 buffer, forward D2Z, the product with the filter's
/// conjugate spectrum, inverse Z2D, the outputs cropped; inputs that are not finite reach the
/// outputs whose footprint holds them, as on the direct path. Returns nothing when the
/// stream-ordered scratch cannot be allocated (the caller runs the direct kernels). Throws
/// CudaError (a failed CUDA or cuFFT call) or InvalidArgument (a shape the FFT cannot run). `mark`,
/// where given, is called after each stage.
std::optional<LaunchPlan> launch_fft_dense(const detail::CorrelationProblem& p, int device,
                                           cudaStream_t stream, const DenseMethodChoice& choice,
                                           const FftStageMark& mark = {});

/// What the FFT family keeps between launches, for tests and release_cached_memory.
struct FftCaches {
  std::size_t idle_plans = 0;      ///< forward and inverse plan pairs not in use
  std::size_t spectra = 0;         ///< filter spectra kept
  std::size_t spectrum_bytes = 0;  ///< their device memory
  std::size_t work_areas = 0;      ///< shapes whose plans' work area is known (no plans to make)
};
FftCaches fft_caches() noexcept;

/// Destroys the idle plans and the cached spectra of every device and forgets the shapes asked
/// for (release_cached_memory).
void release_fft_caches() noexcept;

}  // namespace ndconv::cuda_backend
