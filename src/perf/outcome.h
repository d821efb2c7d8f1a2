// The sweep's per-problem bookkeeping: which point was fastest, how much the automatic plan lost
// against it, and each kernel family's own KO curve (speedup over its KO 1). Points are keyed on
// the kernel that ran (family, TX, KO, block shape); the automatic plan is a point of its own, so
// it is scored even when it runs a kernel that no forced point runs (a 2D image: tiled KO 1
// against forced blocked KOs). Pure functions on recorded numbers, tested without a GPU.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "perf/report.h"

namespace ndconv::perf {

/// The kernel a point ran, as in the CSV's kernel, tx, ko and block columns.
struct PointKey {
  std::string kernel;  ///< "blocked", "tiled" (GPU) or "cpu"
  int tx = 1;          ///< outputs per thread along x
  int ko = 0;          ///< outputs per thread along the last axis
  std::string block;   ///< threads per block, "4x32x1"
  /// "tiled TX=8 KO=4 4x32x1".
  std::string label() const;
  /// The same kernel family and shape (all but KO): one curve over KO.
  bool same_series(const PointKey& o) const {
    return kernel == o.kernel && tx == o.tx && block == o.block;
  }
};

struct TimedPoint {
  PointKey key;
  bool is_auto = false;
  double ms = std::numeric_limits<double>::quiet_NaN();  ///< NaN: not valid or not implementable
  /// The key's label, as "auto (tiled TX=8 KO=4 4x32x1)" for the auto point.
  std::string label() const { return is_auto ? "auto (" + key.label() + ")" : key.label(); }
};

/// One family and shape's curve over KO (forced points only).
struct SeriesOutcome {
  PointKey series;  ///< ko = 0
  double ko1_ms = std::numeric_limits<double>::quiet_NaN();
  int best_ko = 0;
  double best_ms = 0;
};

struct ProblemOutcome {
  TimedPoint best;                    ///< the fastest valid point, the auto point included
  TimedPoint automatic;               ///< the auto point
  double auto_loss = 0;               ///< automatic.ms / best.ms - 1 (0 when auto is the fastest)
  std::vector<SeriesOutcome> series;  ///< in order of first appearance
};

/// Throws std::invalid_argument when no point is valid, or the auto point is missing or invalid.
ProblemOutcome problem_outcome(const std::vector<TimedPoint>& points);

/// A sweep row's key and timing (columns kernel, tx, ko, block, point, status, median_ms).
TimedPoint timed_point(const Json& row);

/// Fills the per-problem columns of rows [first, end) of one problem (volume `volume`, cube
/// filter of extent `k`, `dims` dimensions): load_factor_theory, speedup_vs_ko1 (over KO 1 of the
/// row's own series), best_point, auto_point, auto_loss_pct. Returns the problem's JSON summary
/// (best and auto points, loss, each series' curve, points not implementable); `fma_flops` is
/// the measured peak (NaN in CPU mode).
Json summarize_problem(std::vector<Json>& rows, std::size_t first, int dims,
                       const std::string& volume, int64_t voxels, int64_t k, double fma_flops);

/// The JSON summary's "overall": points, validation failures, points not implementable,
/// problems scored and how often the auto point was within 5% of the best.
Json overall_outcome(const std::vector<Json>& problems, const std::vector<Json>& rows);

}  // namespace ndconv::perf
