// The one place where the engine decides between the CPU and the GPU. Every filter (dense,
// separable, bank, median, recursive Gaussian, the adaptive filter's stages) and the public plan
// (ndconv/plan.h) describe their work in a BackendWork and call choose_backend; nothing else
// probes for a GPU or reads Options::backend.
#pragma once

#include <optional>
#include <string>

#include "engine/backend_cost.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// What a filter tells the backend choice about one run.
struct BackendWork {
  /// Names the filter in messages ("median").
  const char* filter = "filter";
  /// Why the GPU kernel cannot take this request (empty: it can). Auto then takes the CPU;
  /// Backend::Cuda is an InvalidArgument.
  std::string kernel_cannot;
  /// Device memory the GPU run needs at once; 0 where the backend works in slabs under any cap.
  double device_bytes = 0;
  /// Auto asks the cost model first where the filter has one (dense, separable): the CPU then wins
  /// without CUDA being started. startup_elapsed_seconds is filled in here, and cuda_started
  /// where CUDA has started (a caller may set it to cost the start-up as paid).
  std::optional<CostInput> cost;
  /// false: where the cost model gives the work to the GPU, answer Cuda without asking CUDA for
  /// its devices (a plan made before CUDA is started in the background, ndconv/plan.h).
  bool probe = true;
};

/// Backend::Cpu: as asked. Backend::Cuda: the GPU, or an InvalidArgument saying why not. Auto: the
/// cost model (when the work has one), then the GPU where one is usable and the kernel and memory
/// allow it, else the CPU. Fills the report's backend, backend_reason and (GPU) device_name.
/// `estimate`, when given, receives the cost model's estimate (zero where none was made).
Backend choose_backend(const Options& options, const BackendWork& work, RunReport& report,
                       CostEstimate* estimate = nullptr);

/// The device list, probed once per process (refreshed while no GPU is usable).
CudaStatus cached_probe();

/// Seconds a start-up begun by warm_up_cuda_async has run so far (0 when none is under way).
double warm_up_elapsed_seconds();

}  // namespace ndconv::detail
