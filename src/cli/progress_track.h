// The arithmetic of the progress bar, apart from its drawing (progress.h) so that tests hold it:
// the run's stages (reading, filtering, writing) each get a share of the bar in proportion to
// their estimated seconds, each stage reports the fraction of its own work done, and the time
// left is extrapolated from the time so far once a run has lasted a few seconds.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ndconv::cli {

/// A run longer than this shows the time left (shorter runs end before an estimate helps).
inline constexpr double kEtaAfterSeconds = 3.0;

class ProgressTrack {
 public:
  /// `estimated_seconds[s]`: the estimated time of stage s; only the ratios matter. A stage
  /// estimated at zero (or less) still gets a sliver of the bar, so that its end shows.
  explicit ProgressTrack(const std::vector<double>& estimated_seconds);

  /// Stage `stage` is `fraction` (clamped to [0, 1]) done; the earlier stages count as done.
  /// Returns the whole run's fraction, which never goes back (a stage reporting less than before,
  /// or an earlier stage reporting late, leaves it where it was).
  double advance(int stage, double fraction);
  double fraction() const { return done_; }
  /// The share of the bar stage `stage` holds.
  double share(int stage) const { return share_.at(static_cast<size_t>(stage)); }

  /// The seconds left at `elapsed` seconds into the run, extrapolated at the pace so far: none
  /// before kEtaAfterSeconds or before any work is done, and none once the run is done.
  std::optional<double> seconds_left(double elapsed) const;

 private:
  std::vector<double> start_, share_;
  double done_ = 0;
};

/// "7 s", "2 min 05 s", "1 h 03 min": a duration as the progress line shows it.
std::string duration_text(double seconds);

}  // namespace ndconv::cli
