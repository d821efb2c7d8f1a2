#include "io/memory_check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "io/header_check.h"
#include "io/image.h"
#include "io/parallel_deflate.h"

namespace ndconv::io {

namespace {

// The program itself (ITK, the C++ runtime, thread stacks touched): the peak RSS of
// `ndconv info` on a small file is about 12 MiB; the rest is margin for the allocator and for
// per-thread buffers on machines with more cores.
constexpr double kBaselineBytes = 17.0 * (1 << 20);
// What a compressing thread holds besides the chunks waiting for the file (see peak_bytes).
constexpr double kCompressorThreadBytes = 0.5 * (1 << 20);

double cgroup_limit() {
  std::ifstream f("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(f >> text) || text == "max")
    return -1;
  try {
    return std::stod(text);
  } catch (...) {
    return -1;
  }
}

}  // namespace

std::string human_bytes(double bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

double usable_memory_bytes() {
  double limit = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                 static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit r;
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      limit = std::min(limit, static_cast<double>(r.rlim_cur));
  }
  const double cgroup = cgroup_limit();
  if (cgroup > 0)
    limit = std::min(limit, cgroup);
  return limit;
}

// The bytes per value of each stage were measured as the peak RSS of the CPU path on random
// volumes (tests/cli/cli_hostile_test.cpp keeps the estimate within 20% above the measurement).
double peak_bytes(const MemoryPlan& p) {
  const double in_native = p.input_values * p.input_bytes;
  const double in_planes = 4.0 * p.input_values;
  // Reading: the reader's own buffer and the one it fills, while the float32 planes are made;
  // ITK's NIfTI reader holds a float32 copy besides.
  const double read = 2.0 * in_native + in_planes * (p.input_nifti ? 2.0 : 1.0);
  if (p.output_values <= 0)
    return kBaselineBytes + read;
  const double out_planes = 4.0 * p.output_values;
  // Filtering: the input and output planes, the filter's own float32 copies, and what the run
  // holds besides (part of the stored input's buffer, per-thread rows and chunk staging): fitted
  // to peak RSS measured on the CPU path (CliHostile.MemoryEstimateIsWithinTwentyPercentAbove...).
  const double besides = p.input_local_metaimage ? 3.0 : 3.25 + 0.5 * p.input_bytes;
  const double filter =
      in_planes + out_planes + 4.0 * p.filter_copies * p.output_values + besides * p.input_values;
  // Writing: both sets of planes (the preview needs the input), the output in its own type, and
  // the parallel compressor's buffers: the chunks it holds while they wait for the file and, per
  // thread at work, its compressor and scratch, fitted to the peak RSS on 16 cores (the same
  // test).
  const double out_native = p.output_values * p.output_bytes;
  const double pieces = std::ceil(out_native / double(kDeflateChunkBytes));
  const double threads = std::max(p.compress_threads, 1);
  const double compressing =
      p.output_compressed
          ? double(kDeflateChunkBytes) * double(chunks_in_flight(static_cast<size_t>(threads),
                                                                 static_cast<size_t>(pieces))) +
                kCompressorThreadBytes * std::min(threads, pieces)
          : 0.0;
  const double write = in_planes + out_planes + out_native + compressing;
  return kBaselineBytes + std::max({read, filter, write});
}

void check_plan_fits(const std::string& path, const MemoryPlan& plan) {
  const double needed = peak_bytes(plan);
  const double usable = usable_memory_bytes();
  if (needed > usable) {
    throw IoError(path + ": needs about " + human_bytes(needed) +
                  " of memory to read, filter and write, but only " + human_bytes(usable) +
                  " can be used here (the least of physical memory, ulimit and cgroup limits)");
  }
}

void check_memory(const std::string& path, double values, int bytes_per_value) {
  // A corrupt header can claim absurd sizes. No format ndconv reads expands its data more than
  // deflate's limit of about 1032:1 (gzip, zlib, PNG; JPEG, TIFF and BMP codecs of real images
  // stay far below it), so a header describing more than that many bytes per byte on disk is
  // refused at once: otherwise a damaged 1 kB file could make ndconv allocate, read and filter
  // gigabytes.
  const double stored = values * bytes_per_value;
  const double on_disk = check_header(path).data_bytes;
  if (on_disk >= 0 && stored > 1100.0 * on_disk + (1 << 20)) {
    char text[200];
    std::snprintf(text, sizeof text,
                  ": the header describes %.4g values (%.3g MB) but the file holds only %.0f bytes "
                  "(corrupt header or truncated file?)",
                  values, stored / 1e6, on_disk);
    throw IoError(path + text);
  }
  // Reading alone must fit (the file's values plus their float32 planes).
  MemoryPlan read;
  read.input_values = values;
  read.input_bytes = bytes_per_value;
  read.input_nifti = true;  // the larger of the readers' costs: the format is not known here
  const double needed = peak_bytes(read);
  const double usable = usable_memory_bytes();
  if (needed > usable) {
    char text[200];
    std::snprintf(text, sizeof text,
                  ": reading its %.4g values needs about %s of memory, more than the %s usable "
                  "here (the least of physical memory, ulimit and cgroup limits)",
                  values, human_bytes(needed).c_str(), human_bytes(usable).c_str());
    throw IoError(path + text);
  }
}

}  // namespace ndconv::io
