// The streaming kernel's launch (stream_launch.cu; the kernel: stream_thread.h), for the separable
// launcher (separable_launch.cu).
#pragma once

#include <string>
#include <vector>

#include "cuda/launch.h"
#include "cuda/separable/separable_plan.h"
#include "cuda/tuning.h"

namespace ndconv::cuda_backend {

/// Whether `device` has the copy engine the streaming kernel reads its planes with (sm_90 and
/// later): plans ask for the streaming pass only there.
bool stream_device(int device);

/// Enqueues streaming pass `pass` (plan_stream) on `stream` (a cudaStream_t): its taps as kernel
/// parameters, the input's tensor map, chunks along z as the device's resident blocks and
/// Tuning::stream_min_chunk give them. Records the launch in `result` and returns the plan's words
/// for it. Throws InvalidArgument where the map cannot be encoded (the plan's rules make that a
/// driver without the encoder) or the shared memory does not fit.
std::string launch_stream(int device, const SeparablePass& pass, const std::vector<float>& taps,
                          const float* in, float* out, void* stream, const Tuning& tuning,
                          LaunchPlan& result);

}  // namespace ndconv::cuda_backend
