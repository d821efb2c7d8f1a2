// Progress on stderr: a bar redrawn in place when stderr is a terminal, a few plain lines (every
// quarter) when it is not (logs, pipes), nothing with --quiet. Thread-safe: the engine may report
// from its worker threads.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace ndconv::cli {

class Progress {
 public:
  Progress(bool enabled, std::string label);
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
  bool enabled_, tty_;
  std::string label_;
  std::mutex mutex_;
  int last_shown_ = -1;  ///< percent (terminal) or quarter (plain lines) last printed
  bool open_ = false;
};

}  // namespace ndconv::cli
