// Problems the sweep and the bench run, and their validation against the CPU backend.
//
// Every point is checked before it is timed: the GPU result is compared, by relative L2 error,
// with the CPU backend's result. Computing the CPU result for a whole 4D volume with a 9^4 filter
// would take minutes, so the check covers "windows": boxes of the output at the first and the last
// corner of the volume (both boundaries of every axis), shrunk along the slow axes until the CPU
// work fits a budget. The CPU backend computes a window from the whole input through the backend
// contract (output view of the box, offset = box start - anchor), so boundary handling in the
// window is exact. Each row reports which fraction of the output its check covered.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.h"
#include "ndconv/types.h"
#include "perf/params.h"

namespace ndconv::perf {

/// Uniform values in [-1, 1) without exact zeros, from `seed`.
std::vector<float> random_volume(int64_t count, uint64_t seed);

/// A seed from the clock and a counter (different on every call and every run).
uint64_t fresh_seed();

/// What every case holds: a random input volume (random_volume of `seed`) and the boundary.
struct RandomInput {
  Shape volume;
  Boundary boundary = Boundary::Zero;
  std::vector<float> input;
  uint64_t seed = 0;
};
RandomInput make_random_input(const Shape& volume, Boundary boundary, uint64_t seed);

/// The engine's options for a run of a case: `backend`, `operation`, `boundary`, `threads` (CPU;
/// 0 = all), everything else at its default (`same` region).
Options run_options(Backend backend, Operation operation, Boundary boundary, int threads = 0);

/// A correlation with `same` output region: what the sweep and the dense bench rows run.
struct DenseCase : RandomInput {
  Shape filter;
  std::vector<float> taps;

  double fmas() const { return static_cast<double>(volume.count()) * filter.count(); }
};
DenseCase make_dense_case(const Shape& volume, const Shape& filter, Boundary boundary,
                          uint64_t seed);

/// The backend problem of `c` over the given input and output (host or device pointers; both
/// contiguous volumes of c.volume's extents).
detail::CorrelationProblem dense_problem(const DenseCase& c, const float* input, float* output);

/// The engine's dense filter of `c` (its taps borrowed from c).
DenseFilter dense_filter(const DenseCase& c);

/// `c` through the engine's front end (ndconv::filter_dense, `options` as given) on host buffers:
/// c.input into `output`, which must hold c.volume.count() values.
RunReport filter_dense_case(const DenseCase& c, std::vector<float>& output, const Options& options);

/// A separable correlation (`same`), e.g. a Gaussian.
struct SeparableCase : RandomInput {
  std::array<std::vector<float>, kMaxDims> taps;

  double fmas() const;
};
SeparableCase make_separable_case(const Shape& volume,
                                  const std::array<std::vector<float>, kMaxDims>& taps,
                                  Boundary boundary, uint64_t seed);
detail::SeparableProblem separable_problem(const SeparableCase& c, const float* input,
                                           float* output);

/// Part of the output computed by the CPU backend for comparison.
struct CheckWindow {
  Shape box;                ///< extents of the window
  Index start{0, 0, 0, 0};  ///< first output voxel of the window
  std::vector<float> expected;
};

struct CheckPlan {
  std::vector<CheckWindow> windows;
  double covered_fraction = 0;  ///< output voxels checked / output voxels
};

/// Chooses the window boxes for an output `volume` when each output voxel costs `fmas_per_voxel`
/// and the CPU may spend about `budget_fmas` per window; `shrinkable[a]` false keeps axis a whole.
/// Pure (no computation), exposed for the tests.
std::vector<CheckWindow> choose_windows(const Shape& volume, double fmas_per_voxel,
                                        double budget_fmas,
                                        const std::array<bool, kMaxDims>& shrinkable);

/// Computes the windows' expected values with the CPU backend (all cores).
CheckPlan cpu_check(const DenseCase& c, double budget_fmas);
CheckPlan cpu_check(const SeparableCase& c, double budget_fmas);

/// Relative L2 error of `output` (the whole volume of extents `volume`) against the windows;
/// +Inf when `output` holds a NaN or Inf in a window.
double window_error(const CheckPlan& plan, const Shape& volume, const std::vector<float>& output);
/// The same for an output of volume.count() values at `output`.
double window_error(const CheckPlan& plan, const Shape& volume, const float* output);

}  // namespace ndconv::perf
