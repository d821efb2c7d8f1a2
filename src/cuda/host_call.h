// The steps that the CUDA backend's two call pipelines (resident_pipeline.h, chunk_pipeline.h)
// share: the device memory a call may use, the device's selection, the caller's memory and how the
// copies reach it, and the report's note on it. Host code of cuda_backend.cu's calls only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/seconds_since.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

using Clock = std::chrono::steady_clock;
using detail::seconds_since;

/// Floats the call may allocate: 90% of the free memory (with the idle buffers this device keeps,
/// which the call reuses or frees) less a 64 MiB reserve, under the cap.
int64_t device_budget_floats(const Options& options, RunReport& report);

/// Selects options.cuda_device and names it in the report.
void set_device(const Options& options, RunReport& report);

/// The device entry points' first step (ndconv/device.h): selects options.cuda_device and checks
/// that both views are contiguous and in its memory (or managed); InvalidArgument when not.
void prepare_device_call(const ConstVolumeView& input, const VolumeView& output,
                         const Options& options, RunReport& report);

/// Whether stored values must be converted on the device (not float32 with scale 1 and offset 0).
bool needs_conversion(const StoredVolumeView& v);

/// How the call reaches the caller's memory: the copy engines read and write it directly where it
/// is pinned and contiguous; else pinned staging buffers are filled and emptied by the CPU.
struct HostAccess {
  bool input_direct = false;
  bool output_direct = false;
  std::size_t kept_limit = 0;  ///< device memory the caches keep after the call
  int threads = 1;             ///< CPU threads of the staging copies
};

HostAccess host_access(const StoredVolumeView& input, const VolumeView& output,
                       const Options& options);

/// The report's note on the caller's memory and the host staging's share of the call.
std::string host_memory_note(const HostAccess& host, double staging_seconds, double call_seconds);

}  // namespace ndconv::cuda_backend
