// Type conversion is the one place where every component type appears; a small template over the
// C++ type keeps it to one loop each way, with no ITK templates involved.
#include "io/pixel_convert.h"

#include "core/first_touch.h"
#include "io/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ndconv::io {

namespace {

// Voxels per unit of parallel work: large enough that a thread's start-up is noise.
constexpr int64_t kBlockVoxels = int64_t(1) << 18;

// Calls body(begin, end, block) for consecutive voxel blocks on all cores.
template <typename Body>
void for_blocks(int64_t voxels, int threads, const Body& body) {
  const size_t blocks = static_cast<size_t>((voxels + kBlockVoxels - 1) / kBlockVoxels);
  run_parallel(blocks, worker_threads(threads), [&](size_t b) {
    const int64_t begin = static_cast<int64_t>(b) * kBlockVoxels;
    body(begin, std::min(voxels, begin + kBlockVoxels), b);
  });
}

template <typename T>
void to_planes(const T* in, int components, int64_t voxels, std::vector<std::vector<float>>& planes,
               int threads) {
  planes.assign(components, std::vector<float>());
  for (auto& p : planes)
    ndconv::detail::assign_touched(p, static_cast<size_t>(voxels), 0.0f, threads);
  for_blocks(voxels, threads, [&](int64_t begin, int64_t end, size_t) {
    for (int c = 0; c < components; ++c) {
      float* out = planes[c].data();
      for (int64_t v = begin; v < end; ++v)
        out[v] = static_cast<float>(in[v * components + c]);
    }
  });
}

// Rounds and clamps one value into T; counts what had to change.
template <typename T>
T store(float x, WriteReport& r) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(x);
  } else {
    if (std::isnan(x)) {
      ++r.nan_zeroed;
      return T(0);
    }
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    const double v = std::round(static_cast<double>(x));
    if (v < lo) {
      ++r.clamped;
      return std::numeric_limits<T>::lowest();
    }
    // The largest 64-bit integers are not exact in double (they round up to 2^64 or 2^63), so
    // for those types a value equal to `hi` is already out of range.
    if (sizeof(T) == 8 ? v >= hi : v > hi) {
      ++r.clamped;
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(v);
  }
}

// The finite range of one block of voxels, into `r`; `any` says whether there was one.
void scan_range(const std::vector<std::vector<float>>& planes, int64_t begin, int64_t end,
                WriteReport& r, bool& any) {
  for (const auto& p : planes) {
    for (int64_t v = begin; v < end; ++v) {
      const float x = p[v];
      if (!std::isfinite(x))
        continue;
      if (!any || x < r.min)
        r.min = x;
      if (!any || x > r.max)
        r.max = x;
      any = true;
    }
  }
}

// One block of voxels: the finite range, then the conversion, counted in `r`.
template <typename T>
void from_planes(const std::vector<std::vector<float>>& planes, int64_t begin, int64_t end, T* out,
                 WriteReport& r, bool& any) {
  if constexpr (std::is_integral_v<T>)  // the range says what was clamped; floats keep it all
    scan_range(planes, begin, end, r, any);
  const int components = static_cast<int>(planes.size());
  for (int c = 0; c < components; ++c) {
    const float* in = planes[c].data();
    for (int64_t v = begin; v < end; ++v)
      out[v * components + c] = store<T>(in[v], r);
  }
}

// Per-block reports merged in block order, so that the result does not depend on the threads.
void merge_reports(const std::vector<WriteReport>& parts, const std::vector<char>& seen,
                   WriteReport& report) {
  bool any = false;
  for (size_t b = 0; b < parts.size(); ++b) {
    report.clamped += parts[b].clamped;
    report.nan_zeroed += parts[b].nan_zeroed;
    if (!seen[b])
      continue;
    report.min = any ? std::min(report.min, parts[b].min) : parts[b].min;
    report.max = any ? std::max(report.max, parts[b].max) : parts[b].max;
    any = true;
  }
}

// Calls f(T{}) with the C++ type of `type`.
template <typename F>
void with_type(ComponentType type, F&& f) {
  switch (type) {
    case ComponentType::UInt8:
      return f(uint8_t{});
    case ComponentType::Int8:
      return f(int8_t{});
    case ComponentType::UInt16:
      return f(uint16_t{});
    case ComponentType::Int16:
      return f(int16_t{});
    case ComponentType::UInt32:
      return f(uint32_t{});
    case ComponentType::Int32:
      return f(int32_t{});
    case ComponentType::UInt64:
      return f(uint64_t{});
    case ComponentType::Int64:
      return f(int64_t{});
    case ComponentType::Float32:
      return f(float{});
    case ComponentType::Float64:
      return f(double{});
  }
}

}  // namespace

void native_to_planes(const void* buffer, ComponentType type, int components, int64_t voxels,
                      std::vector<std::vector<float>>& planes, int threads) {
  with_type(type, [&](auto tag) {
    using T = decltype(tag);
    to_planes(static_cast<const T*>(buffer), components, voxels, planes, threads);
  });
}

void planes_to_native(const std::vector<std::vector<float>>& planes, ComponentType type,
                      int64_t voxels, std::vector<char>& buffer, WriteReport& report, int threads) {
  report = WriteReport{};
  report.type = type;
  ndconv::detail::assign_touched(
      buffer, static_cast<size_t>(voxels) * planes.size() * component_bytes(type), char{0},
      threads);
  const size_t blocks = static_cast<size_t>((voxels + kBlockVoxels - 1) / kBlockVoxels);
  std::vector<WriteReport> parts(blocks);
  std::vector<char> seen(blocks, 0);
  with_type(type, [&](auto tag) {
    using T = decltype(tag);
    for_blocks(voxels, threads, [&](int64_t begin, int64_t end, size_t b) {
      bool any = false;
      from_planes(planes, begin, end, reinterpret_cast<T*>(buffer.data()), parts[b], any);
      seen[b] = any;
    });
  });
  merge_reports(parts, seen, report);
}

double convert_value(float value, ComponentType type) {
  WriteReport r;
  double out = 0;
  with_type(type, [&](auto tag) {
    using T = decltype(tag);
    out = static_cast<double>(store<T>(value, r));
  });
  return out;
}

}  // namespace ndconv::io
