#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "batch.h"
#include "messages.h"
#include "signals.h"

namespace ndconv::cli {

namespace {
// The bar being drawn on the terminal (one at a time: a batch's jobs show none).
std::atomic<Progress*> g_drawing{nullptr};
}  // namespace

void end_progress_line() {
  Progress* bar = g_drawing.exchange(nullptr);
  if (bar == nullptr)
    return;
  std::lock_guard<std::mutex> lock(bar->mutex_);
  if (bar->open_) {
    std::fputc('\n', stderr);
    bar->open_ = false;
    bar->last_shown_ = -1;
  }
}

Progress::Progress(const CommonOptions& common, std::string label)
    : enabled_(!common.quiet && jobs_in_flight() == 1),  // a batch's jobs overlap: no bars
      tty_(::isatty(STDERR_FILENO) == 1),
      plain_lines_(common.verbose),
      label_(std::move(label)) {}

Progress::~Progress() {
  // On an error path: end the bar's line, but do not claim 100%.
  Progress* self = this;
  g_drawing.compare_exchange_strong(self, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_)
    std::fputc('\n', stderr);
}

std::function<bool(double)> Progress::callback(int part, int parts) {
  return [this, part, parts](double f) {
    if (enabled_)
      update((part + std::clamp(f, 0.0, 1.0)) / std::max(parts, 1));
    return !stop_requested();
  };
}

std::function<bool(double)> Progress::span(double from, double to) {
  return [this, from, to](double f) {
    if (enabled_)
      update(from + (to - from) * std::clamp(f, 0.0, 1.0));
    return !stop_requested();
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
    g_drawing = this;
  } else if (plain_lines_) {
    const int quarter = percent / 25;
    if (quarter <= last_shown_ || quarter == 0)
      return;
    last_shown_ = quarter;
    print_line("%s: %d%%", label_.c_str(), quarter * 25);
  }
}

void Progress::finish() {
  Progress* self = this;
  g_drawing.compare_exchange_strong(self, nullptr);
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
