// Summary statistics of timed repetitions (host code shared by the GPU and CPU modes).
#include <algorithm>
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

}  // namespace ndconv::perf
