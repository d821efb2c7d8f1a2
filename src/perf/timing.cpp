// Summary statistics of timed repetitions (host code shared by the GPU and CPU modes).
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "perf/gpu.h"

namespace ndconv::perf {

Timing summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty())
    throw std::invalid_argument("no timing samples");
  Timing t;
  t.samples_ms = samples_ms;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  t.median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  t.min_ms = samples_ms.front();
  return t;
}

Timing time_host(const std::function<void()>& work, int warmup, int repetitions) {
  for (int i = 0; i < warmup; ++i)
    work();
  std::vector<double> samples;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    samples.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(samples);
}

}  // namespace ndconv::perf
