#include "io/memory_check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

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

// A number from the first word of a file; -1 when absent or "max".
double number_in(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  if (!(f >> text) || text == "max")
    return -1;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && v >= 0 ? v : -1;
}

// The value of `key` in a "key value" file (memory.stat), -1 when absent.
double stat_value(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  double v = 0;
  while (f >> k >> v)
    if (k == key)
      return v;
  return -1;
}

// Bytes of a "Key:   N kB" line of /proc/self/status, -1 when absent.
double status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size() + 1, key + ":") == 0)
      return std::strtod(line.c_str() + key.size() + 1, nullptr) * 1024.0;
  }
  return -1;
}

// What this process's memory cgroups (v2 and v1; the process's own group and those above it)
// still let it reach: per group, the limit minus what the group holds that cannot be reclaimed
// (its charge less page cache) other than this process's own memory. -1 when no limit applies.
double cgroup_room(double own_anon) {
  double room = -1;
  auto consider = [&](double limit, double usage, double file) {
    if (limit <= 0 || limit >= 9.0e18 || usage < 0)
      return;
    const double others = std::max(0.0, usage - std::max(file, 0.0) - own_anon);
    const double r = std::max(0.0, limit - others);
    room = room < 0 ? r : std::min(room, r);
  };
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line)) {
    // "0::/path" (v2) or "N:memory:/path" (v1)
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::string group = line.substr(second + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos)
      continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    // The group itself and each group above it (inside a container's namespace, its root).
    for (int depth = 0; depth < 64; ++depth) {
      const std::string dir = root + (group == "/" ? "" : group);
      if (v2)
        consider(number_in(dir + "/memory.max"), number_in(dir + "/memory.current"),
                 stat_value(dir + "/memory.stat", "file"));
      else
        consider(number_in(dir + "/memory.limit_in_bytes"),
                 number_in(dir + "/memory.usage_in_bytes"),
                 stat_value(dir + "/memory.stat", "total_cache"));
      if (group.empty() || group == "/")
        break;
      const auto slash = group.rfind('/');
      group = slash == 0 || slash == std::string::npos ? "/" : group.substr(0, slash);
    }
  }
  return room;
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
  // The estimates count resident bytes. Under an address-space limit, what the process has
  // mapped but not touched (its libraries, reserved heaps) is spent already, and each thread the
  // work starts maps a stack and, when it allocates, a heap of its own (glibc reserves 64 MiB of
  // address space per arena): so the room is the limit less the mappings that are not resident,
  // less a stack and an arena per hardware thread. RLIMIT_DATA counts the private writable
  // mappings alike.
  const double resident = std::max(status_bytes("VmRSS"), 0.0);
  const double anon = std::max(status_bytes("RssAnon"), 0.0);
  struct rlimit stack;
  const double stack_bytes =
      ::getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY
          ? static_cast<double>(stack.rlim_cur)
          : 8.0 * (1 << 20);
  constexpr double kArenaBytes = 64.0 * (1 << 20);
  const double thread_stacks =
      (stack_bytes + kArenaBytes) * std::max(1u, std::thread::hardware_concurrency());
  const struct {
    int resource;
    double mapped, resident;
  } limits[] = {{RLIMIT_AS, status_bytes("VmSize"), resident},
                {RLIMIT_DATA, status_bytes("VmData"), anon}};
  for (const auto& l : limits) {
    struct rlimit r;
    if (::getrlimit(l.resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
      continue;
    const double not_resident = std::max(0.0, l.mapped - l.resident);
    limit = std::min(limit,
                     std::max(0.0, static_cast<double>(r.rlim_cur) - not_resident - thread_stacks));
  }
  const double cgroup = cgroup_room(anon);
  if (cgroup >= 0)
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
