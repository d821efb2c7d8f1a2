// Elapsed wall time for the reports' timings (RunReport::seconds_*, the adaptive filter's stage
// times): one reading of the steady clock, shared by the engine and both backends.
#pragma once

#include <chrono>

namespace ndconv::detail {

/// Seconds from `t0` to now on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ndconv::detail
