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
  /// returns false (stop) after Ctrl-C, also when progress is not shown.
  std::function<bool(double)> callback(int part, int parts);
  /// Ends the bar (newline on a terminal).
  void finish();

  /// Ctrl-C and SIGTERM end ndconv at once (exit 130, one line on stderr) while nothing of the
  /// output exists yet: checks, header and pixel reading, which may sit in ITK code that never
  /// returns to ndconv (a looping decoder's sandboxed child is killed with it). Inside a
  /// CooperativeInterrupts scope (filtering and writing) they set a flag instead, so that the
  /// filter stops at its next progress report and the staging folder of a write is removed;
  /// interrupted() then says so. Installed once by main().
  static void install_interrupt_handler();
  /// While alive, a signal only sets the flag (see install_interrupt_handler).
  class CooperativeInterrupts {
   public:
    CooperativeInterrupts();
    ~CooperativeInterrupts();
    CooperativeInterrupts(const CooperativeInterrupts&) = delete;
    CooperativeInterrupts& operator=(const CooperativeInterrupts&) = delete;
  };
  static bool interrupted();
  /// Throws ndconv::Aborted when interrupted.
  static void check_interrupted();

 private:
  void update(double fraction);
  bool enabled_, tty_;
  std::string label_;
  std::mutex mutex_;
  int last_shown_ = -1;  ///< percent (terminal) or quarter (plain lines) last printed
  bool open_ = false;
};

}  // namespace ndconv::cli
