// The engine's plan of a run, made before any work: which backend and why, the method, the kernel
// family, outputs per thread and why, the memory the run needs and the estimated times. The
// engine's own calls decide with the same function (src/engine/backend_choice.h), so a plan says
// what the call will do; the command line, the ITK filters, the bench and the Python package ask
// for it and print it, and hold no decision of their own.
//
//   ndconv::FilterRequest r;
//   r.kind = ndconv::FilterKind::Separable;
//   r.dims = 3;
//   r.extent = {256, 256, 256, 1};
//   r.filter_extent = {17, 17, 17, 1};
//   r.options.backend = ndconv::parse_device("auto").backend;
//   std::cout << ndconv::plan(r).text() << "\n";
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv {

/// Where a user wants the work done.
struct DeviceWish {
  Backend backend = Backend::Auto;
  int cuda_device = 0;  ///< the GPU of one volume: the first of a list
  /// Several GPUs ("cuda:0,1", or every one with "cuda:all"): a batch spreads its inputs over
  /// them; one volume runs on `cuda_device`. Empty for one GPU.
  std::vector<int> cuda_devices;
  bool all_cuda_devices = false;  ///< "cuda:all": the list is every usable GPU (cuda_devices_of)
};

/// The accepted device texts, for help texts: "auto, cpu, cuda, cuda:N, cuda:N,M,... or cuda:all".
const char* device_grammar();

/// Parses "auto", "cpu", "cuda", "cuda:N" (N a device index), "cuda:N,M,..." (distinct indices)
/// or "cuda:all"; throws InvalidArgument naming the accepted forms.
DeviceWish parse_device(const std::string& text);

/// The GPUs of `wish` (one for a single GPU; every usable one for "cuda:all", which asks CUDA),
/// each checked against the devices CUDA sees. Throws InvalidArgument for an index that is not
/// there, or for "cuda:all" without a usable GPU (naming why). Empty for auto and cpu.
std::vector<int> cuda_devices_of(const DeviceWish& wish);

/// The filters the engine plans (the adaptive filter plans its stages as banks and separable
/// passes).
enum class FilterKind { Dense, Separable, Bank, Median, RecursiveGaussian };
/// How many FilterKind values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kFilterKindCount =
    static_cast<std::size_t>(FilterKind::RecursiveGaussian) + 1;

/// A filter run as the plan sees it: shapes and types only, no data.
struct FilterRequest {
  FilterKind kind = FilterKind::Dense;
  int dims = 3;
  Index extent{1, 1, 1, 1};  ///< the input's voxels per axis
  /// Taps per axis: the dense filter's or the bank's filters' extents; a separable filter's 1D
  /// filter lengths (1: the axis is not filtered); the median's window (2 radius + 1). Unused for
  /// the recursive Gaussian.
  Index filter_extent{1, 1, 1, 1};
  int filters = 1;  ///< the bank's filter count
  /// Bytes per input voxel as the backend would upload it (the stored type's size,
  /// ndconv/stored.h).
  std::size_t input_bytes_per_voxel = sizeof(float);
  bool input_pinned = false;   ///< the input is in page-locked memory (ndconv/memory.h)
  bool output_pinned = false;  ///< likewise the output
  /// Cost CUDA's start-up as paid: for a caller that starts it (warm_up_cuda_async) behind work of
  /// its own, e.g. reading the input, should the GPU be chosen.
  bool startup_hidden = false;
  /// false: under Backend::Auto, where the cost model gives the work to the GPU, plan the GPU
  /// without asking CUDA for its devices (which would wait for the driver): for a caller that then
  /// starts CUDA in the background (warm_up_cuda_async). The filter call probes as usual.
  bool probe_devices = true;
  /// The backend wish, device, threads, memory cap, boundary, region, expert outputs per thread.
  Options options;
};

struct Plan {
  Backend backend = Backend::Cpu;
  std::string backend_reason;
  std::string method;          ///< e.g. "direct correlation", "separable passes", "selection"
  std::string kernel_family;   ///< e.g. "CPU row kernels (avx512)", "GPU tiled or blocked"
  int outputs_per_thread = 0;  ///< 0: chosen at launch from the device's facts
  std::string outputs_per_thread_reason;
  /// Device memory a GPU run needs at once (0: none, or the backend works in slabs under the cap).
  double device_bytes = 0;
  /// The cost model's estimates: the CPU's for every filter, the GPU's where the model chose
  /// between them (dense and separable under Backend::Auto; else 0).
  double estimated_cpu_seconds = 0;
  double estimated_gpu_seconds = 0;

  /// One line for --verbose: "cpu: CPU requested; direct correlation, CPU row kernels (avx512),
  /// 4 outputs per iteration (...)".
  std::string text() const;
};

/// The plan of `request`. Never starts CUDA where the cost model gives the work to the CPU.
/// Throws InvalidArgument for a request the engine cannot run (a dimension or filter over its
/// limits), or with Backend::Cuda when no GPU can take it (as the filter call itself would).
Plan plan(const FilterRequest& request);

const char* to_string(FilterKind kind);

}  // namespace ndconv
