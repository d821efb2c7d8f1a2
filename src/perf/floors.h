// What the end-to-end and API rows are measured against, as plain arithmetic so that it is tested
// on its own: a whole command against the same I/O without the filter, a batch's throughput
// against its I/O-only pass, and a host-buffer engine call against the longest of its three
// stages (upload, kernel, download) at the bandwidth measured in the same run.
#pragma once

#include <string>

namespace ndconv::perf {

/// The floor of a call on host buffers: the stages could at best overlap completely.
struct CallFloor {
  double upload_ms = 0;    ///< input bytes at the host-to-device bandwidth
  double download_ms = 0;  ///< output bytes at the device-to-host bandwidth
  double kernel_ms = 0;
  double floor_ms = 0;  ///< the largest of the three
  std::string bound;    ///< "upload", "download" or "kernel": which one sets the floor
};

/// Throws InvalidArgument when a bandwidth is not positive or a size or time is negative.
CallFloor call_floor(double input_bytes, double output_bytes, double kernel_ms,
                     double host_to_device_bytes_per_s, double device_to_host_bytes_per_s);

/// `measured` / `floor` (both times): 1 at the floor, larger when slower; NaN when `floor` is not
/// positive.
double ratio_to_floor(double measured, double floor);

/// The whole commands' and the API rows' target: at most 1.5x the floor.
inline constexpr double kMaxRatioToFloor = 1.5;
/// The batch row's target: at least 90% of the I/O-only pass's throughput.
inline constexpr double kMinBatchThroughputShare = 0.9;

/// A batch's throughput as a share of its I/O-only pass's, for the same number of volumes:
/// floor_seconds / batch_seconds (1 = as fast as the I/O alone).
double throughput_share(double batch_seconds, double floor_seconds);

}  // namespace ndconv::perf
