#include "perf/context.h"

#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace ndconv::perf {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

Json device_json(const gpu::DeviceFacts& f) {
  return {{"index", f.index},
          {"name", f.name},
          {"compute_capability", std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor)},
          {"multiprocessors", f.multiprocessors},
          {"l2_bytes", f.l2_bytes},
          {"memory_bytes", f.total_memory},
          {"registers_per_sm", f.registers_per_sm},
          {"cuda_runtime", cuda_version_text(f.runtime_version)},
          {"cuda_driver_api", cuda_version_text(f.driver_version)}};
}

Json ceilings_json(const gpu::Ceilings& c) {
  return {{"fma_peak_gflops", c.fma_flops * 1e-9},
          {"fma_kernel_ms", c.fma_ms},
          {"copy_bandwidth_gbs", c.copy_bytes_per_s * 1e-9},
          {"copy_bytes", c.copy_bytes},
          {"copy_ms", c.copy_ms},
          {"h2d_pageable_gbs", c.h2d_pageable_bytes_per_s * 1e-9},
          {"d2h_pageable_gbs", c.d2h_pageable_bytes_per_s * 1e-9},
          {"h2d_pinned_gbs", c.h2d_pinned_bytes_per_s * 1e-9},
          {"d2h_pinned_gbs", c.d2h_pinned_bytes_per_s * 1e-9},
          {"duplex_pinned_gbs", c.duplex_pinned_bytes_per_s * 1e-9},
          {"host_copy_bytes", c.host_copy_bytes},
          {"how",
           "measured at the start of this run: FP32 FMA microkernel (2 flops per FMA); "
           "cudaMemcpy device to device counting bytes read + written; host <-> device: host "
           "clock around one synchronous cudaMemcpy from or to pageable (std::vector) and pinned "
           "(cudaHostAlloc) memory, counting the bytes once; duplex: an upload and a download of "
           "pinned "
           "memory at once on two streams, the rate of each"}};
}

Json cpu_json(int threads) {
  std::string model = "unknown";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return {{"model", model},
          {"hardware_threads", hardware},
          {"threads_used", threads > 0 ? threads : hardware}};
}

Progress::Progress(std::ostream* out, int total)
    : out_(out),
      total_(total),
      tty_(out == &std::cerr && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()) {}

void Progress::step(const std::string& label) {
  ++done_;
  if (!out_)
    return;
  const int width = 30;
  const int filled = total_ > 0 ? done_ * width / total_ : width;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar(filled, '#');
  bar.resize(width, '.');
  char head[96];
  std::snprintf(head, sizeof head, "[%s] %d/%d %5.1fs ", bar.c_str(), done_, total_, s);
  if (tty_)
    *out_ << '\r' << head << label << "\033[K" << std::flush;
  else
    *out_ << head << label << '\n' << std::flush;
}

void Progress::finish() {
  if (out_ && tty_)
    *out_ << '\n' << std::flush;
}

}  // namespace ndconv::perf
