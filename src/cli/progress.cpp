#include "progress.h"

#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "io/parallel_for.h"
#include "messages.h"
#include "signals.h"

namespace ndconv::cli {

namespace {
// The bar being drawn on the terminal (one at a time: a batch's jobs show none).
std::atomic<Progress*> g_drawing{nullptr};

// Rough rates of the 2-core development machine (160^3 uint8 .nii.gz read in 0.010-0.026 s,
// its float32 result written as .nii.gz at level 1 in 0.08-0.12 s, sequences of 160^3 x 20 in the
// e2e rows at the same rates): bytes of pixels per second.
constexpr double kInflateBytesPerSecond = 250e6;    ///< decompressed bytes, one thread
constexpr double kDeflateBytesPerSecond = 90e6;     ///< level 1, per compressing thread
constexpr double kPlainFileBytesPerSecond = 1.5e9;  ///< uncompressed read or write, conversion
/// A filter without an estimate: about a separable Gaussian's time per voxel on 2 cores.
constexpr double kUnknownFilterSecondsPerVoxel = 10e-9;

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
}  // namespace

std::vector<double> estimate_stage_seconds(const Plan& plan, const std::string& out,
                                           const OutputOptions& output, int threads,
                                           double filter_seconds) {
  const io::ImageInfo& in = plan.input;
  const double values = static_cast<double>(in.geometry.voxel_count()) * in.components;
  const double stored = static_cast<double>(in.native_bytes());
  struct stat st {};
  const bool input_compressed = ::stat(in.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                                static_cast<double>(st.st_size) < 0.9 * stored;
  const double read = (stored + values * 4) / kPlainFileBytesPerSecond +
                      (input_compressed ? stored / kInflateBytesPerSecond : 0.0);
  const double written = values * static_cast<double>(io::component_bytes(plan.output_type));
  const bool output_compressed =
      output.compression > 0 &&
      (ends_with(out, ".gz") || ends_with(out, ".mha") || ends_with(out, ".mhd"));
  const double write =
      (values * 4 + written) / kPlainFileBytesPerSecond +
      (output_compressed ? written / (kDeflateBytesPerSecond * io::worker_threads(threads)) : 0.0);
  const double filter =
      filter_seconds > 0 ? filter_seconds : values * kUnknownFilterSecondsPerVoxel;
  std::vector<double> seconds(kStages);
  seconds[kRead] = read;
  seconds[kFilter] = filter;
  seconds[kWrite] = write;
  return seconds;
}

void end_progress_line() {
  Progress* bar = g_drawing.exchange(nullptr);
  if (bar == nullptr)
    return;
  std::lock_guard<std::mutex> lock(bar->mutex_);
  if (bar->open_) {
    std::fputc('\n', stderr);
    bar->open_ = false;
    bar->last_shown_ = -1;
    bar->last_eta_.clear();
  }
}

Progress::Progress(const CommonOptions& common, std::string label,
                   const std::vector<double>& stage_seconds)
    : enabled_(!common.quiet && jobs_in_flight() == 1),  // a batch's jobs overlap: no bars
      tty_(::isatty(STDERR_FILENO) == 1),
      plain_lines_(common.verbose),
      label_(std::move(label)),
      track_(stage_seconds) {}

Progress::~Progress() {
  // On an error path: end the bar's line, but do not claim 100%.
  Progress* self = this;
  g_drawing.compare_exchange_strong(self, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_)
    std::fputc('\n', stderr);
}

std::function<bool(double)> Progress::stage(Stage stage, int part, int parts) {
  return [this, stage, part, parts](double f) {
    if (enabled_)
      update(stage, (part + std::clamp(f, 0.0, 1.0)) / std::max(parts, 1));
    return !stop_requested();
  };
}

void Progress::update(Stage stage, double stage_fraction) {
  std::lock_guard<std::mutex> lock(mutex_);
  const double fraction = track_.advance(stage, stage_fraction);
  const int percent = static_cast<int>(fraction * 100.0);
  const std::optional<double> left = track_.seconds_left(seconds_since(start_));
  const std::string eta = left ? ", " + duration_text(*left) + " left" : std::string();
  if (tty_) {
    if (percent == last_shown_ && eta == last_eta_)
      return;
    // The padding clears what a longer time-left text of the previous draw left behind.
    const size_t pad = last_eta_.size() > eta.size() ? last_eta_.size() - eta.size() : 0;
    last_shown_ = percent;
    last_eta_ = eta;
    constexpr int kWidth = 30;
    const int filled = percent * kWidth / 100;
    std::fprintf(stderr, "\r%s [%s%s] %3d%%%s%s", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), percent, eta.c_str(),
                 std::string(pad, ' ').c_str());
    std::fflush(stderr);
    open_ = true;
    g_drawing = this;
  } else if (plain_lines_) {
    const int quarter = percent / 25;
    if (quarter <= last_shown_ || quarter == 0)
      return;
    last_shown_ = quarter;
    print_line("%s: %d%%%s", label_.c_str(), quarter * 25, eta.c_str());
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
