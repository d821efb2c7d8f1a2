// The FFT path's plan for a dense correlation on the GPU, as pure host functions so that CI checks
// them without a GPU and the engine's public plan says what a launch will do: the padded box
// (the output's footprint, boundary resolved), the transform's extents (cuFFT-friendly sizes at
// least the box: a circular correlation over them equals the linear one on every output), its
// memory, and the choice between the direct kernels and the FFT by a cost model whose per-device
// constants are one struct (FftPolicy, a member of cuda_backend::Tuning), measured by the bench's
// fft rows (`ndconv-perf bench --workload fft3d_11,fft3d_15,fft3d_21`).
//
// The problem is the backends' contract (core/problem.h): out[o] = sum_j w[j] in_b[o + offset + j].
// The box P holds in_b over [offset, offset + m + k - 1) per axis (m outputs, k taps), so
// out[o] = sum_j w[j] P[o + j]; zero-padded to N >= m + k - 1 per axis, the circular correlation
// IFFT(FFT(P) conj(FFT(w))) / N never wraps for o < m, since o + j <= m + k - 2 < N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/problem.h"
#include "cuda/fft/kernels/fft_box.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// The cost model's per-device constants and the FFT path's limits. Defaults: the H200
/// (docs/performance.md, the fft rows); the lead sets them from a bench run on other devices.
struct FftPolicy {
  /// false: Auto never takes the FFT (the direct kernels only); DenseKernel::Fft still forces it.
  bool allowed = true;
  /// The direct kernels' useful multiply-adds per second: the lowest of the fft rows' direct
  /// times on the H200 (21.4e12 for 21³, 23.4e12 for 11³ and 23.9e12 for 15³ on 256³; run 18).
  double direct_fmas_per_second = 21.4e12;
  /// The FFT path's seconds per point of its transform (pad, forward D2Z, spectrum product,
  /// inverse Z2D, crop, in float64) with the filter's spectrum and the plans kept on the device:
  /// above the highest of the H200's at the sizes the rule takes (5.44e-11 at 270³, 5.39e-11 at
  /// 288³ beyond fixed_seconds; the fft rows' breakdowns, run 18).
  double seconds_per_point = 5.6e-11;
  /// The filter's own transform (taps padded, D2Z), paid when its spectrum is not kept: 2.99e-11
  /// at 270³, 3.06e-11 at 288³, 3.30e-11 at 280³ (the breakdowns' first calls, run 18).
  double filter_seconds_per_point = 3.3e-11;
  /// Launches and host work of one FFT launch (the breakdown's choose and prepare: 16-33 us).
  double fixed_seconds = 30e-6;
  /// cuFFT's plans for a transform shape not yet planned on the device (a pair is kept per shape
  /// afterwards): a first call pays it, so a single call of a large filter may keep the kernels.
  /// 1.0-2.0 ms for the fft rows' shapes on the H200 in a process that has used cuFFT's kernels
  /// for the size (runs 18, 19); a process's first use of cuFFT at a size took 118-257 ms (the
  /// library and its kernels loaded), which the model leaves out.
  double plan_seconds = 2.0e-3;
  /// The FFT runs only where the model gives it at least this speed-up over the direct kernels
  /// (the model's error near the crossover, and the direct path's exact footprint semantics).
  double min_speedup = 1.25;
  /// A transform extent's prime factors: at most largest_prime, and at most factors_above_3 of
  /// them above 3 (with multiplicity). cuFFT's float64 pairs on the H200 (dev/fft_sizes.cu, run
  /// 18; ns per point): 2^8 0.028, 270 = 2 3^3 5 0.035, 288 = 2^5 3^2 0.036, 324 = 2^2 3^4 0.035,
  /// 320 = 2^6 5 0.038, but 300 = 2^2 3 5^2 0.049, 280 = 2^3 5 7 0.046, 294 = 2 3 7^2 0.076:
  /// one 5 costs little, a 7 or a second 5 much more.
  int largest_prime = 5;
  int factors_above_3 = 1;
};

/// The FFT path's geometry of one problem: dims 2 or 3 (the transform's rank).
struct FftShape {
  int dims = 0;
  Index box{1, 1, 1, 1};        ///< m + k - 1 per axis: the boundary-resolved input box
  Index transform{1, 1, 1, 1};  ///< N per axis, >= box, each a product of primes <= 7
  /// Doubles per transform row in the in-place layout: 2 (N0 / 2 + 1).
  int64_t row_pitch = 0;
  int64_t points = 0;          ///< product of N: the real transform's points
  int64_t complex_points = 0;  ///< (N0 / 2 + 1) N1 N2: the half spectrum
  /// The in-place transform buffer (complex_points complex doubles) and a cached filter spectrum
  /// of the same size, in bytes; the cuFFT work area comes on top (fft_launch.h asks cuFFT).
  std::size_t buffer_bytes = 0;
  std::size_t spectrum_bytes = 0;
};

/// The smallest n' >= n whose prime factors are all <= largest_prime with at most
/// factors_above_3 of them above 3, and even when `even` (the real transform's x axis); n >= 1.
int64_t fft_friendly_extent(int64_t n, bool even, int largest_prime = 7, int factors_above_3 = 64);

/// The transform's extent for a box of n along one axis under `policy`, at least 2.
int64_t fft_transform_extent(int64_t n, bool even, const FftPolicy& policy);

/// The shape for `dims` axes with `output` extents and `filter` extents (dims 2 or 3).
FftShape fft_shape(int dims, const Index& output, const Index& filter, const FftPolicy& policy);

/// What the device already holds for a launch: plans for its transform shape, its filter's
/// spectrum; and whether this process asked for the same shape and filter before (`repeated`: a
/// batch, the frames of a sequence), so that the plans and the spectrum are made once for the
/// calls that follow and the model leaves their cost out.
struct FftCached {
  bool plans = false;
  bool spectrum = false;
  bool repeated = false;
};

/// The two paths' modelled times for the shape.
double direct_seconds(int dims, const Index& output, const Index& filter, const FftPolicy& policy);
double fft_seconds(const FftShape& shape, FftCached cached, const FftPolicy& policy);

/// Direct or FFT for a dense problem, and why, in one line.
struct DenseMethodChoice {
  bool fft = false;
  std::string reason;
  FftShape shape;  ///< set where the FFT could run (dims 2 or 3)
  double direct_seconds = 0;
  double fft_seconds = 0;
};

/// The choice for `dims` axes, output and filter extents. `free_bytes` < 0: memory not known (the
/// plan before a device is asked); else the FFT needs its buffer, a spectrum unless cached and
/// `work_bytes` (cuFFT's work area) within it. `taps_finite`: every tap is finite (a NaN or
/// infinite tap would reach every output of a transform, not the direct path's footprints).
/// `cached`: what the device holds already (the public plan assumes nothing: a first call).
DenseMethodChoice choose_dense_method(int dims, const Index& output, const Index& filter,
                                      const FftPolicy& policy, bool taps_finite = true,
                                      double free_bytes = -1, double work_bytes = 0,
                                      FftCached cached = FftCached{});

/// `policy` as a forced FFT (DenseKernel::Fft) uses it: allowed, and any FFT that can run beats
/// the model's direct path.
FftPolicy forced_fft_policy(FftPolicy policy);

/// The kernels' view of problem `p` (dims 2 or 3) transformed with `shape`.
FftBox make_fft_box(const detail::CorrelationProblem& p, const FftShape& shape);

/// "270x270x270".
std::string extent_text(int dims, const Index& extent);

}  // namespace ndconv::cuda_backend
