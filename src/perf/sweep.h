// The register-blocking sweep: dimension x volume extents x filter extents x kernel
// instantiation (family, KO, block shape: points.h) on the GPU, plus the automatic plan as a point
// of its own; or the CPU backend's blocking factor with --device cpu. Every point is validated
// against the CPU backend (check.h) before it is timed (gpu.h: warm-up, events, repetitions, L2
// flushed), and reported against the ceilings measured at the start of the run. Each row records
// the kernel that actually ran and its resources (from the launch plan); a point whose kernel
// cannot implement the problem is recorded as not implementable, never run on another kernel.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "perf/params.h"
#include "perf/report.h"

namespace ndconv::perf {

struct SweepConfig {
  bool cpu = false;  ///< --device cpu: sweep the CPU backend's blocking factor
  int cuda_device = 0;
  int threads = 0;             ///< CPU mode: worker threads (0 = all)
  std::vector<Shape> volumes;  ///< each with its own dimension
  /// Cube filter extents per dimension (index 2, 3, 4); empty = the study's defaults.
  std::array<std::vector<int64_t>, 5> filters;
  std::vector<int64_t> kos;  ///< empty = every compiled instantiation (or CPU blocking factor)
  /// GPU: also every other compiled block shape of the tiled kernel (points.h).
  bool block_shapes = false;
  int warmup = 2;
  int repetitions = 7;
  bool flush_l2 = true;
  double check_budget_fmas = 2e9;  ///< CPU work allowed per validation window
  double tolerance = 1e-4;         ///< relative L2 error above which a point fails
  uint64_t seed = 0;               ///< 0 = fresh
  std::string command_line;        ///< recorded in the JSON summary
  /// Called with all rows so far after each problem (e.g. to keep a partial CSV of a long run).
  std::function<void(const std::vector<Json>& rows)> on_problem_done;
};

/// The study's grid: 2D 4096^2 with 3..17, 3D 256^3 with 3..15, 4D 128^3x16 and
/// 160^3x20 with 3..9 (odd sizes).
SweepConfig study_config();
/// A grid that runs in well under a minute on an H100 (and in seconds on the CPU).
SweepConfig quick_config();
/// The study's default filter sizes for a dimension.
std::vector<int64_t> default_filters(int dims, bool quick);

/// The seed method's factor of fewer loads along the blocked axis: k*KO/(k+KO-1).
double theoretical_load_factor(int64_t k, int ko);

struct SweepResult {
  std::vector<Json> rows;  ///< one flat object per point (the CSV's rows)
  /// The JSON document: tool, mode, date, command; device and ceilings (GPU) or cpu; config;
  /// points (the rows); overall; problems (each problem's outcome).
  Json summary;
  int failures = 0;  ///< points whose validation failed
};

/// Runs the sweep; `progress` (may be null) receives a progress bar. Throws GpuUnavailable in GPU
/// mode without a usable GPU.
SweepResult run_sweep(const SweepConfig& config, std::ostream* progress);

/// A short human-readable table of `result` (one line per point).
void print_sweep_table(std::ostream& out, const SweepResult& result);

}  // namespace ndconv::perf
