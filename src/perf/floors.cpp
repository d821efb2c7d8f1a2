#include "perf/floors.h"

#include <cmath>
#include <limits>

#include "ndconv/errors.h"

namespace ndconv::perf {

CallFloor call_floor(double input_bytes, double output_bytes, double kernel_ms, double h2d,
                     double d2h) {
  if (!(h2d > 0) || !(d2h > 0))
    throw InvalidArgument("call_floor: the transfer bandwidths must be positive");
  if (!(input_bytes >= 0) || !(output_bytes >= 0) || !(kernel_ms >= 0))
    throw InvalidArgument("call_floor: sizes and times must not be negative");
  CallFloor f;
  f.upload_ms = input_bytes / h2d * 1e3;
  f.download_ms = output_bytes / d2h * 1e3;
  f.kernel_ms = kernel_ms;
  f.floor_ms = f.kernel_ms;
  f.bound = "kernel";
  if (f.upload_ms > f.floor_ms) {
    f.floor_ms = f.upload_ms;
    f.bound = "upload";
  }
  if (f.download_ms > f.floor_ms) {
    f.floor_ms = f.download_ms;
    f.bound = "download";
  }
  return f;
}

double ratio_to_floor(double measured, double floor) {
  return floor > 0 ? measured / floor : std::numeric_limits<double>::quiet_NaN();
}

double throughput_share(double batch_seconds, double floor_seconds) {
  return batch_seconds > 0 ? floor_seconds / batch_seconds
                           : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace ndconv::perf
