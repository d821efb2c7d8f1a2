// Progress on stderr: a bar redrawn in place when stderr is a terminal (its line ended when the
// run ends or a message is printed), nothing with --quiet; when stderr is not a terminal (logs,
// pipes), a plain line every quarter with --verbose only, so that a run says one line on success.
// The stages (read, filter, write) hold shares of the bar in proportion to their estimated seconds
// (progress_track.h); each reports the fraction of its own work as it goes, and a run longer than
// kEtaAfterSeconds shows the time left. Thread-safe: the engine may report from its worker threads.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "batch.h"
#include "preflight.h"
#include "progress_track.h"

namespace ndconv::cli {

struct CommonOptions;
struct OutputOptions;

/// The estimated seconds of a run's stages (indexed by Stage): reading `plan`'s input, filtering
/// (`filter_seconds`, the engine's estimate; 0 or less: unknown, estimated from the voxel count)
/// and writing `out` with `output`'s type and compression on `threads` threads (0: all cores).
/// Rough rates of this development machine's I/O; only their ratios matter to the bar.
std::vector<double> estimate_stage_seconds(const Plan& plan, const std::string& out,
                                           const OutputOptions& output, int threads,
                                           double filter_seconds);

/// Ends the line of a progress bar being drawn, if any, so that a message starts on its own line
/// (the bar is redrawn on the next line at its next update).
void end_progress_line();

class Progress {
 public:
  /// Shown unless common.quiet or within a batch (its jobs overlap); plain lines (no terminal)
  /// only with common.verbose. `stage_seconds`: estimate_stage_seconds.
  Progress(const CommonOptions& common, std::string label,
           const std::vector<double>& stage_seconds);
  ~Progress();

  /// A callback for ndconv::Options::progress (or io's) covering part `part` of `parts` of stage
  /// `stage`; it returns false (stop) after Ctrl-C or a failed write to the console (signals.h),
  /// also when progress is not shown.
  std::function<bool(double)> stage(Stage stage, int part = 0, int parts = 1);
  /// Ends the bar (newline on a terminal).
  void finish();

 private:
  void update(Stage stage, double fraction);
  friend void end_progress_line();
  bool enabled_, tty_, plain_lines_;
  std::string label_;
  std::mutex mutex_;
  ProgressTrack track_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int last_shown_ = -1;   ///< percent (terminal) or quarter (plain lines) last printed
  std::string last_eta_;  ///< the time left as last drawn on the terminal (", 12 s left")
  bool open_ = false;
};

}  // namespace ndconv::cli
