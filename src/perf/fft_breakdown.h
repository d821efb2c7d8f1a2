// Where one FFT launch's time goes (the fft rows' breakdown): the forced FFT path
// (cuda/fft/fft_launch.h) on data already on the device, timed stage by stage with a CUDA event
// after each stage and the host clock at the same points, so that one GPU run without Nsight says
// which pass, transform, allocation or host step costs what. CUDA builds only (fft_breakdown.cu);
// without CUDA it throws GpuUnavailable as the rest of the GPU layer.
#pragma once

#include "core/problem.h"
#include "cuda/fft/fft_policy.h"
#include "perf/report.h"

namespace ndconv::perf {

/// `p` (device data, 2 or 3 axes) through the FFT forced with `policy`'s sizes on `stream` of
/// `device`: one first call (the plans, work-area estimate and spectra released before it) and
/// `repetitions` repeats (the median per stage). Per stage ("choose": the cost model with its
/// device queries, then fft_launch.h's stages), "device_ms" (event to event: the device's time
/// including any wait for the host) and "host_ms" (the enqueue's host time); and the transform.
Json fft_breakdown(const detail::CorrelationProblem& p, const cuda_backend::FftPolicy& policy,
                   int device, void* stream, int repetitions);

}  // namespace ndconv::perf
