// The cost model behind Backend::Auto: an estimate of a call's time on the CPU and on the GPU from
// the work (output voxels x taps), the bytes that cross PCIe (and whether the caller's memory is
// pinned), and whether this process has already paid CUDA's start-up. Pure and CUDA-free, so CI
// tests it.
//
// The estimates lean towards the CPU on purpose: the CPU's rates are the fastest measured, the
// GPU's the slowest, so that Auto never picks a GPU that loses to the CPU; where the GPU wins by
// less than the model's error the CPU's loss is small.
#pragma once

#include <cstdint>
#include <string>

namespace ndconv::detail {

/// The model's constants, each with the measurement it comes from.
struct CostConstants {
  /// The CPU's time, per thread (docs/performance.md, "The CPU cost model", has the measured
  /// table): a call's fixed cost, a pass over the volume per output voxel (the input's conversion
  /// and padded copy, the output's first touch, a separable pass's intermediate: memory traffic),
  /// and the arithmetic. Fitted on the quiet 2-core development VM (AMD EPYC, AVX-512, load about
  /// 1; 2026-11-29) to the bundled 160^3 echo volume (uint8) and the e2e rows' 160^3 x 20 series:
  /// smooth sigma 1-4 voxels 21-24 ms, the series smoothed frame by frame 0.10 s, median radius
  /// 1-3 13/45/112 ms, all on 2 threads.
  double cpu_fixed_seconds = 200e-6;
  double cpu_pass_seconds_per_voxel = 4e-9;
  /// A dense call's pass: the ring kernels pad rows per thread in the cache and write each output
  /// once (convolve box:3 of the echo volume in 2 ms).
  double cpu_dense_pass_seconds_per_voxel = 0.5e-9;
  /// The same for separable passes that run slab by slab in the cache (no taps along the last
  /// axis: a 4D series smoothed frame by frame).
  double cpu_slab_pass_seconds_per_voxel = 0.7e-9;
  /// Dense multiply-adds per second per thread: 3D filters on the ring kernels (an accumulator
  /// strip per output down a column along the last axis; box:5 and box:7 in 3 and 7 ms).
  double cpu_taps_per_second_per_thread = 100e9;
  /// The same for a dense filter with taps along a 4th axis, on the blocks of the row kernels (a
  /// 7^4 filter's weight table is too large for the rings' and longer blocks): 7^4 over the
  /// 160^3 x 20 series in 1.81 s.
  double cpu_dense_4d_taps_per_second_per_thread = 55e9;
  /// The filter bank's: the adaptive filter's true-4D banks on 160^3 x 10 (24 quadrature filters
  /// of 7^4 in 10.6 s, 11 reconstruction filters of 9^4 in 12.6 s: 111 and 117e9 per thread, 84%
  /// of the 278 GFMA/s ceiling measured in the same run).
  double cpu_bank_taps_per_second_per_thread = 115e9;
  /// Separable 1D taps per second per thread (short rows per tap: below the dense rate).
  double cpu_separable_taps_per_second_per_thread = 20e9;
  /// The median's seconds per window voxel per output voxel, one thread (the counting passes):
  /// 160^3 uint8 at radius 2 and 3 in 45 and 112 ms on 2 threads.
  double cpu_median_seconds_per_key = 0.15e-9;
  /// The recursive Gaussian's seconds per voxel and axis, one thread.
  double cpu_recursive_seconds_per_voxel_axis = 3e-9;
  /// The adaptive filter's control tensor: seconds per voxel, one thread, divided by d^3 (its
  /// eigen-decomposition's work grows about as the cube of the tensor's size): 3D 0.164 s on
  /// 160^3, 4D 3.95 s on 160^3 x 10, 2 threads (3.0e-9 both).
  double cpu_control_seconds_per_voxel_cube = 3e-9;
  /// A filter response the bank writes and the structure tensor reads back (its magnitude and
  /// share of the tensor), per voxel, one thread: the quadrature stage beyond its multiply-adds
  /// (3D 160^3: 0.177 s for 12 responses of 7^3, 71 ms of it multiply-adds).
  double cpu_response_seconds_per_voxel = 4e-9;
  /// GPU multiply-adds per second, dense: dense3d_5 (256^3, 5^3, 2.1e9 multiply-adds) in 0.129 ms
  /// on the H100 (docs/records/2026-11-21-h100-kernel-passes.md), the slowest dense row.
  double gpu_dense_taps_per_second = 16.2e12;
  /// Separable: gauss3d_s2 (256^3, 3 x 17 taps) in 0.1265 ms on the H100, memory-bound.
  double gpu_separable_taps_per_second = 6.7e12;
  /// Device memory traffic per output voxel and pass, at the H100's measured copy rate (2.99 TB/s)
  /// discounted to 2 TB/s: the floor of a small-filter call.
  double gpu_bytes_per_second = 2.0e12;
  /// Host-device copies: pinned 51.6 GB/s each way, pageable 16.9 GB/s up and 12.0 GB/s down
  /// (issue 29, the public API on the H100 machine).
  double pinned_bytes_per_second = 51.6e9;
  double pageable_upload_bytes_per_second = 16.9e9;
  double pageable_download_bytes_per_second = 12.0e9;
  /// A call's fixed GPU cost (device choice, streams, events, launches, synchronisation).
  double gpu_fixed_seconds = 300e-6;
  /// CUDA's start-up (driver, context) the first GPU call of a process pays: the 0.3 s the CLI's
  /// filter step spent beyond upload, compute and download (issue 29, H100 machine).
  double cuda_startup_seconds = 0.3;
  /// Input bytes per pipelined chunk (src/cuda/chunk_plan.h, kTargetChunkFloats).
  double chunk_bytes = 8.0 * (1 << 20);
};

inline constexpr CostConstants kCostConstants{};

struct CostInput {
  int64_t input_voxels = 0;
  int64_t output_voxels = 0;
  double input_bytes_per_voxel = 4;  ///< as uploaded: the stored type's size (ndconv/stored.h)
  double taps_per_output = 1;  ///< dense: the filter's taps; separable: the sum of the 1D taps
  int passes = 1;              ///< separable: filtered axes; dense: 1
  bool separable = false;
  bool dense_4d = false;     ///< dense with taps along a 4th axis (its own CPU rate)
  bool slab_passes = false;  ///< separable, no taps along the last axis (passes slab by slab)
  bool input_pinned = false;
  bool output_pinned = false;
  bool cuda_started = false;  ///< this process already has a CUDA context on the device
  /// Seconds a start-up under way (warm_up_cuda_async) has run already: only the rest is counted.
  double startup_elapsed_seconds = 0;
  int cpu_threads = 1;
};

struct CostEstimate {
  double cpu_seconds = 0;
  double gpu_seconds = 0;  ///< start-up included when not yet paid
  double gpu_kernel_seconds = 0;
  double gpu_upload_seconds = 0;
  double gpu_download_seconds = 0;
  double gpu_startup_seconds = 0;
  bool prefer_gpu = false;
  std::string reason;  ///< one line: the two estimates and what decided
};

/// The estimates for `in` and the choice (GPU only when its estimate is below the CPU's).
CostEstimate estimate_costs(const CostInput& in, const CostConstants& k = kCostConstants);

/// A CPU run as the CPU estimate sees it.
struct CpuWork {
  enum class Kind { Dense, Separable, Bank, Median, Recursive } kind = Kind::Dense;
  int64_t output_voxels = 0;
  /// Dense: the filter's taps; bank: the taps of all its filters; separable: the sum of the 1D
  /// lengths; median: the window's voxels; recursive: the filtered axes.
  double taps_per_output = 1;
  int passes = 1;            ///< passes over the volume (separable: filtered axes)
  bool slab_passes = false;  ///< separable passes slab by slab in the cache (CostInput's)
  bool dense_4d = false;     ///< dense with taps along a 4th axis (CostInput's)
  int threads = 1;
};

/// The CPU's estimated seconds for `work`.
double estimate_cpu_seconds(const CpuWork& work, const CostConstants& k = kCostConstants);

}  // namespace ndconv::detail
