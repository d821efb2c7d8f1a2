// What every sweep and bench run records about itself (date, device, measured ceilings), and the
// progress bar both drivers draw on stderr.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

#include "perf/gpu.h"
#include "perf/report.h"

namespace ndconv::perf {

/// "2026-11-21T20:40:00Z".
std::string utc_now();

Json device_json(const gpu::DeviceFacts& f);
Json ceilings_json(const gpu::Ceilings& c);
/// The CPU as the CPU modes see it (model name, hardware threads).
Json cpu_json(int threads);

/// A one-line progress bar redrawn with '\r' on a terminal, one line per step otherwise.
class Progress {
 public:
  Progress(std::ostream* out, int total);
  void step(const std::string& label);
  void finish();

 private:
  std::ostream* out_;
  int total_;
  int done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ndconv::perf
