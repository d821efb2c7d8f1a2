// Progress on stderr: a bar redrawn in place when stderr is a terminal (its line ended when the
// run ends or a message is printed), nothing with --quiet; when stderr is not a terminal (logs,
// pipes), a plain line every quarter with --verbose only, so that a run says one line on success.
// Thread-safe: the engine may report from its worker threads.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace ndconv::cli {

struct CommonOptions;

/// Ends the line of a progress bar being drawn, if any, so that a message starts on its own line
/// (the bar is redrawn on the next line at its next update).
void end_progress_line();

class Progress {
 public:
  /// Shown unless common.quiet or within a batch (its jobs overlap); plain lines (no terminal)
  /// only with common.verbose.
  Progress(const CommonOptions& common, std::string label);
  ~Progress();

  /// A callback for ndconv::Options::progress covering part `part` of `parts` of the work; it
  /// returns false (stop) after Ctrl-C or a failed write to the console (signals.h), also when
  /// progress is not shown.
  std::function<bool(double)> callback(int part, int parts);
  /// The same for the fraction [from, to] of the whole bar (reading, filtering and writing each
  /// have their share).
  std::function<bool(double)> span(double from, double to);
  /// Ends the bar (newline on a terminal).
  void finish();

 private:
  void update(double fraction);
  friend void end_progress_line();
  bool enabled_, tty_, plain_lines_;
  std::string label_;
  std::mutex mutex_;
  int last_shown_ = -1;  ///< percent (terminal) or quarter (plain lines) last printed
  bool open_ = false;
};

}  // namespace ndconv::cli
