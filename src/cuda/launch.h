// The CUDA backend's low-level API (src/cuda/, kernels/), ITK-free, for the benchmark and sweep
// tools and the tests: data already on the device, contiguous; a call only enqueues work on
// `stream` (no synchronisation). Every launcher choice comes from a Tuning (tuning.h), whose
// defaults the engine's front end uses.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cuda/device_facts.h"
#include "cuda/tuning.h"
#include "cuda/cuda_backend.h"
#include "core/problem.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// The dense kernel's instantiations (one per compiled KO, ascending) on `device`. `dims` is
/// accepted for symmetry with the problem (the same kernels serve 2D, 3D and 4D). Throws CudaError.
std::vector<KernelVariant> dense_variants(int device, int dims);

/// The tiled dense kernel's instantiations (cuda/tiled/tiled_thread.h), in dispatch-table order,
/// then the lead-tap shape's with row code fixed for one filter width (3, 5, ..., 15 taps: KO 4);
/// outputs_per_thread is KO along the last axis (each thread also computes 8 outputs along x).
std::vector<KernelVariant> tiled_variants(int device);

/// Local memory a tiled kernel with fixed row code may use (the dispatch table's use none): ptxas
/// spills 20-24 bytes in each, once per tile, and they still outrun the shape's kernel for every
/// width (kTiledFixedTable in the launcher).
inline constexpr size_t kTiledFixedRowsLocalBytes = 32;

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
  /// The launched kernel's family: "blocked", "tiled" or "row" (the x-row kernel of separable
  /// filters); `kernel` is the same with details, for people.
  std::string family = "blocked";
  /// Why the launch ran the direct kernels or the FFT (cuda/fft/fft_policy.h): the cost model's
  /// times, or what ruled the FFT out. Empty where no choice was made (a forced kernel).
  std::string method_reason;
  int outputs_along_x = 1;  ///< TX: outputs per thread along x (tiled kernel), else 1
  /// The launched kernel's resources as the CUDA runtime reports them, so that a sweep records
  /// what ran rather than what a table says. blocks_per_sm and occupancy count the launch's
  /// dynamic shared memory (the tiled kernel's depends on the filter). Separable plans: the first
  /// pass's kernel, like block and grid.
  KernelVariant resources;
  /// One line, e.g. "KO=8 block 128x1x1 grid 2x256x32 taps const".
  std::string describe() const {
    auto xyz = [](const int* v) {
      return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
    };
    return kernel + " KO=" + std::to_string(outputs_per_thread) + " block " + xyz(block) +
           " grid " + xyz(grid) + (taps_in_constant ? " taps const" : " taps global") +
           " launches " + std::to_string(launches) +
           (method_reason.empty() ? "" : "; " + method_reason);
  }
};

/// Enqueues a dense correlation on `stream` (a cudaStream_t; nullptr = default stream). The
/// problem's input/output data are DEVICE pointers to contiguous volumes; `taps` is a HOST
/// pointer (copied to the device inside the call, stream-ordered). outputs_per_thread 0 = the KO
/// rule (ko_rule.h); a value without an instantiation throws InvalidArgument. No synchronisation.
/// Concurrent launches from several threads, each on its own stream, may use different filters:
/// the tap buffers order only what would overwrite taps that queued kernels still read
/// (uploaded_taps.h).
LaunchPlan launch_dense_device(const detail::CorrelationProblem& p, int outputs_per_thread,
                               int device, void* stream, const Tuning& tuning = Tuning{});

/// Which dense kernel a launch may use. Auto: the automatic plan (the FFT where the cost model of
/// Tuning::fft gives it, without a forced KO; else the tiled kernel where it can implement the
/// problem, else the blocked kernel). Tiled / Blocked / Fft: that kernel or an InvalidArgument
/// saying in one line why it cannot serve the problem (not compiled, too large for shared memory,
/// spills, in 2D a KO other than 1, a 4D volume or no memory for the FFT), never another kernel.
enum class DenseKernel { Auto, Tiled, Blocked, Fft };
/// How many DenseKernel values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kDenseKernelCount = static_cast<std::size_t>(DenseKernel::Fft) + 1;

/// An explicit dense launch: kernel family and shape, for sweeps and comparisons.
struct DenseKernelRequest {
  DenseKernel kernel = DenseKernel::Auto;
  /// KO along the last axis; 0 = the family's own choice (Auto: the plan's; Tiled: the automatic
  /// plan's for the TX, the register budget's among the compiled KO for TX 8 and 1 for TX 16, or
  /// 1 when the last axis has one output, as a 2D image in the tiled kernel's geometry; Blocked:
  /// the KO rule). The tiled
  /// kernel puts a 2D image's y on its tile rows and has no last axis to block there: in 2D it
  /// implements KO 1 only.
  int outputs_per_thread = 0;
  /// Tiled only: outputs per thread along x, 0 = 8 (the default), or 16 (the wide 2D shape).
  int tiled_outputs_along_x = 0;
  /// Tiled only: threads per block along axis 1 (y), 0 = as the automatic plan (the most
  /// compiled for the TX and KO when axis 1 has at least 16 outputs, else the fewest).
  int tiled_block_rows = 0;
};

/// Enqueues a dense correlation like the overload above, with the kernel chosen by `request`.
LaunchPlan launch_dense_device(const detail::CorrelationProblem& p,
                               const DenseKernelRequest& request, int device, void* stream,
                               const Tuning& tuning = Tuning{});

/// One compiled dense kernel instantiation: family, shape and resources (without dynamic shared
/// memory, which depends on the filter). Each blocked KO has a constant-memory and a global-memory
/// tap flavour (listed both); the tiled kernel's taps are in shared memory.
struct DenseKernelVariant {
  DenseKernel kernel = DenseKernel::Blocked;  ///< Tiled or Blocked
  int outputs_along_x = 1;                    ///< TX (tiled), 1 (blocked)
  int block_x = 0;                            ///< threads per block along x
  int block_rows = 1;                         ///< threads per block along axis 1
  bool constant_taps = false;                 ///< blocked: the constant-memory tap flavour
  KernelVariant resources;                    ///< resources.outputs_per_thread is the KO
};

/// Every compiled dense instantiation of both families on `device`, in dispatch-table order
/// (blocked, then tiled). Throws CudaError.
std::vector<DenseKernelVariant> dense_kernel_variants(int device);

/// Floats of device scratch that launch_separable_device needs for `p` (0 when one axis only)
/// under any forced KO and tuning.
std::size_t separable_scratch_floats(const detail::SeparableProblem& p);

/// Floats of device scratch that launch_separable_device needs for `p` with this forced KO
/// (0: the rules) and tuning: 0 for one pass (the slab kernel's, or one axis).
std::size_t separable_launch_scratch_floats(const detail::SeparableProblem& p,
                                            int outputs_per_thread = 0,
                                            const Tuning& tuning = Tuning{});

/// Enqueues the 1D passes of a separable correlation (device pointers, contiguous). `scratch`
/// must hold separable_scratch_floats(p) floats (may be null when that is 0). outputs_per_thread:
/// a forced KO for the passes along axes other than x (0 = the rules).
LaunchPlan launch_separable_device(const detail::SeparableProblem& p, float* scratch, int device,
                                   void* stream, int outputs_per_thread = 0,
                                   const Tuning& tuning = Tuning{});

/// The separable correlation of `filter` (taps per axis in correlation order; an axis without
/// taps is not filtered) over the `same` region: the output has the input's extents, each 1D
/// filter anchored at k / 2 as filter_separable's correlation. `in` and `out` are contiguous
/// volumes of the same extents (device pointers for launch_same_separable_device) that do not
/// overlap. Throws InvalidArgument for a filter of another dimension or with too many taps.
detail::SeparableProblem same_region_separable(const ConstVolumeView& in, const VolumeView& out,
                                               const SeparableFilter& filter, Boundary boundary);

/// Enqueues that correlation on `stream` (launch_separable_device on same_region_separable, no
/// synchronisation): the device-level separable smoothing of a volume already on the device.
/// `scratch` holds separable_scratch_floats of the problem (the same for every volume of these
/// extents and this filter).
LaunchPlan launch_same_separable_device(const ConstVolumeView& in, const VolumeView& out,
                                        const SeparableFilter& filter, Boundary boundary,
                                        float* scratch, int device, void* stream,
                                        int outputs_per_thread = 0);

/// The blocked kernel's instantiations that read taps from global memory (large dense filters).
std::vector<KernelVariant> dense_variants_global_taps(int device);

/// cuda_backend::run_dense / run_separable (cuda/cuda_backend.h) with the kernel request and
/// tuning given (the engine's front end uses the defaults, with options.expert's KO).
void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const DenseKernelRequest& request, const Tuning& tuning);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report, const Tuning& tuning);
/// The same on stored values (cuda/cuda_host.h's run_dense_stored / run_separable_stored).
void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report, const DenseKernelRequest& request,
                      const Tuning& tuning);
void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report, const Tuning& tuning);

}  // namespace ndconv::cuda_backend
