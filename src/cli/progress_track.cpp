#include "progress_track.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace ndconv::cli {

ProgressTrack::ProgressTrack(const std::vector<double>& estimated_seconds) {
  const double total = std::accumulate(estimated_seconds.begin(), estimated_seconds.end(), 0.0,
                                       [](double sum, double s) { return sum + std::max(s, 0.0); });
  // A stage without an estimate (or estimated at nothing) keeps 0.5% of the bar.
  constexpr double kSliver = 0.005;
  std::vector<double> weights;
  for (double s : estimated_seconds)
    weights.push_back(total > 0 ? std::max(std::max(s, 0.0) / total, kSliver) : 1.0);
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  double start = 0;
  for (double w : weights) {
    start_.push_back(start);
    share_.push_back(w / sum);
    start += w / sum;
  }
}

double ProgressTrack::advance(int stage, double fraction) {
  if (stage < 0 || static_cast<size_t>(stage) >= share_.size())
    return done_;
  const double f = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  const double whole = std::min(1.0, start_[stage] + share_[stage] * f);
  done_ = std::max(done_, whole);
  return done_;
}

std::optional<double> ProgressTrack::seconds_left(double elapsed) const {
  // Below 1% the pace is mostly start-up: no extrapolation yet.
  if (elapsed < kEtaAfterSeconds || done_ < 0.01 || done_ >= 1.0)
    return std::nullopt;
  return elapsed * (1.0 - done_) / done_;
}

std::string duration_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char text[48];
  if (s < 60)
    std::snprintf(text, sizeof text, "%ld s", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%ld min %02ld s", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld h %02ld min", s / 3600, s % 3600 / 60);
  return text;
}

}  // namespace ndconv::cli
