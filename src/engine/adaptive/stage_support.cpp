// The adaptive filter's shared stage helpers (stage_support.h): progress split, volume sizes.
#include "engine/adaptive/stage_support.h"

#include <functional>

namespace ndconv::detail {

int component_count(int dims) {
  return dims * (dims + 1) / 2;
}

// Splits Options::progress into consecutive stages.
Options stage_options(const Options& options, double base, double span) {
  Options o = options;
  if (options.progress) {
    const std::function<bool(double)> outer = options.progress;
    o.progress = [outer, base, span](double f) { return outer(base + span * f); };
  }
  return o;
}

bool report_progress(const Options& options, double fraction) {
  if (options.progress && !options.progress(fraction))
    throw Aborted();
  return true;
}

// Voxels of one index along the last axis.
int64_t plane_voxels(int dims, const Index& extent) {
  int64_t n = 1;
  for (int a = 0; a + 1 < dims; ++a)
    n *= extent[a];
  return n;
}

}  // namespace ndconv::detail
