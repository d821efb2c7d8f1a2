// Every choice the CUDA launchers make, in one plain struct with the defaults that won on the
// bench (docs/performance.md, design decisions). The library uses the defaults; the sweep and
// bench tools and the tests set fields and pass the struct down the low-level API (launch.h) or
// cuda_backend::run_dense / run_separable. Nothing here is read from the environment.
#pragma once

#include "cuda/bank/tensor_core_policy.h"
#include "cuda/fft/fft_policy.h"
#include "cuda/tensor_dense/tensor_dense_policy.h"

namespace ndconv::cuda_backend {

struct Tuning {
  /// 2D filters at least this wide along x take the wide tiled shape (16 outputs along x per
  /// thread): more FMAs per shared load and per row set-up; narrower ones keep more tiles per SM
  /// with 8 outputs along x.
  int tiled_wide_x_min_taps = 9;

  /// The tiled kernel serves a problem only with at least this many resident blocks per SM, so
  /// that one block's barriers and plane loads overlap another's FMAs; fewer (filters whose taps
  /// fill the shared memory) go to the blocked kernel.
  int tiled_min_blocks_per_sm = 2;

  /// The most halo elements per thread a bulk-copied tiled launch patches into its face tiles
  /// (cuda/tiled/tiled_halo.h); past that the staging costs more shared memory than the tile
  /// itself, and the launch corrects its face shell with the border kernel or pads its input
  /// instead. 0: never patch the halo.
  int tiled_max_halo_slots = 8;

  /// The border kernel's work, in FMAs per input voxel, up to which a bulk launch without a halo
  /// corrects its face shell (cuda/border/border_thread.h) instead of padding its input: padding
  /// costs one read and one write of the volume whatever the filter, while the shell's work grows
  /// with the filter. 0: pad wherever padding pays; a huge value: the border kernel wherever it
  /// fits.
  double border_fmas_per_voxel = 8.0;

  /// Separable 3D filters with the same tap count along x, y and z may run as one pass on the slab
  /// kernel (cuda/separable/slab_thread.h) where it can implement them. false: never.
  bool separable_slab = true;

  /// ... and do where the column kernel's x tiles (128 x) would be used at most this much
  /// (x extent / the tiles' width): H200, 17-tap Gaussian, slab against the column passes: 272^3
  /// (x tiles 71% used) 0.283 against 0.340 ms, 256^3 (100%) 0.210 against 0.116 ms (the slab
  /// kernel of then, y first on 64 x 16 tiles; x first on 32 x 32 it takes 0.273 and 0.203). The
  /// slab kernel's own plane copies take 3.5x the memory floor, so where the column passes waste no
  /// lanes they win.
  double slab_max_column_x_use = 0.75;

  /// The slab kernel cuts a volume of fewer x-y tiles than the device holds blocks into chunks
  /// along z, each of at least this many output planes (a chunk reads K - 1 planes more than it
  /// emits, and filters them along x and y).
  int slab_min_chunk = 32;

  /// Separable 3D filters with the same compiled tap count along x, y and z run as one pass on the
  /// streaming kernel (cuda/separable/stream_thread.h) wherever it can implement them: the copy
  /// engine reads the input (sm_90 and later, cuda/tensor_map.h). It comes before the slab kernel
  /// and the column passes: H200, 17-tap Gaussian, 256^3 0.0894 against 0.1168 ms (column
  /// passes), 272^3 0.1186 against 0.3391 ms (docs/performance.md). false: never.
  bool separable_stream = true;

  /// The streaming kernel cuts a volume of fewer x-y tiles than the device holds blocks into chunks
  /// along z, each of at least this many output planes (a chunk reads K - 1 planes more than it
  /// emits, and filters them along x and y).
  int stream_min_chunk = 32;

  /// Dense filters through the FFT (cuda/fft/): whether Auto may take it and the cost model's
  /// per-device constants, measured by the bench's fft rows.
  FftPolicy fft;

  /// The filter bank on the tensor cores for 8-bit inputs (cuda/bank/tensor_core_kernel.cuh).
  TensorCoreBankPolicy bank_tensor_cores;

  /// One dense 7^3 or 11^3 filter on the tensor cores for 8-bit 3D inputs
  /// (cuda/tensor_dense/tensor_dense_kernel.cuh), before the FP32 kernels and the FFT.
  TensorCoreDensePolicy dense_tensor_cores;

  /// The 3 x 3 x 3 median (cuda/median/median_columns.h): the outputs each thread selects along z
  /// (8, 12, 14 or 16). A plane is sorted once per thread for three windows, so more outputs sort
  /// fewer planes each, in more shared memory a block; H200, 256^3: 0.150 / 0.144 / 0.147 /
  /// 0.142 ms, within the run's spread; 14 is the bench's (0.1426 ms).
  int median_column_outputs = 14;
};

/// The defaults with the FFT never chosen by Auto: the direct kernels' own plan, which the dense
/// bench rows and the sweep time against the FP32 peak.
inline Tuning direct_kernels_tuning() {
  Tuning t;
  t.fft.allowed = false;
  return t;
}

}  // namespace ndconv::cuda_backend
