// Host-side staging of the CUDA backend, free of CUDA so that CI tests it: strided views to and
// from contiguous buffers, rows along the last axis, and the memory cap setting (chunk_plan.h
// plans the slabs, which the pipeline stages run by run).
//
// Slabbing: a volume too large for the device is cut along its last axis L into slabs of output
// rows [o0, o0 + rows). The slab's input holds input rows o0 + offset_L + r for r < rows + k_L - 1,
// each mapped by boundary_index (a zero-boundary row outside the volume is zeros), so the slab is
// an ordinary problem with offset 0 along L whose reads never leave it: the kernel's boundary
// handling along L is not needed, and the result equals one pass.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/problem.h"
#include "core/view_copy.h"
#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// Bytes from "1073741824", "512K", "64M", "2G" (binary multiples). Throws InvalidArgument.
inline std::size_t parse_memory_size(const std::string& text, const char* what) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(s, &end, 10);
  std::size_t multiplier = 1;
  if (end != s && *end != '\0' && end[1] == '\0') {
    switch (std::toupper(static_cast<unsigned char>(*end))) {
      case 'K':
        multiplier = 1ull << 10;
        ++end;
        break;
      case 'M':
        multiplier = 1ull << 20;
        ++end;
        break;
      case 'G':
        multiplier = 1ull << 30;
        ++end;
        break;
    }
  }
  if (end == s || *end != '\0' || errno != 0 || text[0] == '-' || value == 0) {
    throw InvalidArgument(std::string(what) + " '" + text +
                          "' is not a positive size in bytes (optionally with K, M or G)");
  }
  return static_cast<std::size_t>(value) * multiplier;
}

/// The device memory cap in bytes: Options::device_memory_cap, else NDCONV_DEVICE_MEMORY_CAP,
/// else 0 (no cap).
inline std::size_t memory_cap(const Options& options) {
  if (options.device_memory_cap > 0)
    return options.device_memory_cap;
  const char* env = std::getenv("NDCONV_DEVICE_MEMORY_CAP");
  if (env == nullptr || *env == '\0')
    return 0;
  return parse_memory_size(env, "NDCONV_DEVICE_MEMORY_CAP");
}

// The view copies (core/view_copy.h) under the names the backend's staging code uses.
using detail::for_each_voxel;
using detail::gather;
using detail::last_axis_rows;
using detail::scatter;

}  // namespace ndconv::cuda_backend
