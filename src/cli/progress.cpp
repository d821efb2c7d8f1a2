#include "progress.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "cli_common.h"
#include "io/output_file.h"
#include "ndconv/errors.h"

namespace ndconv::cli {

namespace {
volatile sig_atomic_t g_interrupted = 0;
// A copy of the original stderr: while ITK reads, fd 2 points at /dev/null (io/itk_image_io.cpp).
int g_stderr_copy = STDERR_FILENO;
// Ends the process at once, in whatever stage (reading, filtering, writing): the staging
// folders of unfinished writes are removed first, so nothing half-written remains (an output
// whose renames had begun is complete: they run with the signals blocked); a sandboxed decoder
// child dies with the process (PR_SET_PDEATHSIG). Only async-signal-safe calls.
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  io::remove_staging_folders_now();
  static const char message[] = "ndconv: error: interrupted; unfinished outputs were removed\n";
  [[maybe_unused]] const ssize_t n = ::write(g_stderr_copy, message, sizeof message - 1);
  ::_exit(130);
}
}  // namespace

void Progress::install_interrupt_handler() {
  const int copy = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (copy >= 0)
    g_stderr_copy = copy;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool Progress::interrupted() {
  return g_interrupted != 0;
}

void Progress::check_interrupted() {
  if (interrupted())
    throw Aborted();
}

Progress::Progress(bool enabled, std::string label)
    : enabled_(enabled), tty_(::isatty(STDERR_FILENO) == 1), label_(std::move(label)) {}

Progress::~Progress() {
  // On an error path: end the bar's line, but do not claim 100%.
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_)
    std::fputc('\n', stderr);
}

std::function<bool(double)> Progress::callback(int part, int parts) {
  return [this, part, parts](double f) {
    if (enabled_)
      update((part + std::clamp(f, 0.0, 1.0)) / std::max(parts, 1));
    return !interrupted();
  };
}

std::function<bool(double)> Progress::span(double from, double to) {
  return [this, from, to](double f) {
    if (enabled_)
      update(from + (to - from) * std::clamp(f, 0.0, 1.0));
    return !interrupted();
  };
}

void Progress::update(double fraction) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int percent = static_cast<int>(fraction * 100.0 + 0.5);
  if (tty_) {
    if (percent == last_shown_)
      return;
    last_shown_ = percent;
    constexpr int kWidth = 30;
    const int filled = percent * kWidth / 100;
    std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), percent);
    std::fflush(stderr);
    open_ = true;
  } else {
    const int quarter = percent / 25;
    if (quarter <= last_shown_ || quarter == 0)
      return;
    last_shown_ = quarter;
    print_line("%s: %d%%", label_.c_str(), quarter * 25);
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) {
    std::fputc('\n', stderr);
    open_ = false;
  } else if (!tty_ && last_shown_ > 0 && last_shown_ < 4) {
    print_line("%s: 100%%", label_.c_str());
    last_shown_ = 4;
  }
}

}  // namespace ndconv::cli
