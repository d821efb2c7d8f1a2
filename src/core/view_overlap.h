// Whether volume views share memory. The front ends refuse an output that overlaps an input (or,
// for a filter bank, another output): the backends read and write in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ndconv/types.h"

namespace ndconv::detail {

using ByteSpan = std::pair<const char*, const char*>;

/// The memory `v` spans, from its first voxel to the end of its last, for voxels of `element`
/// bytes (a stored view's voxels are wider than its byte pointer).
template <typename T>
ByteSpan byte_span(const BasicVolumeView<T>& v, std::size_t element = sizeof(T)) {
  int64_t last = 0;
  for (int a = 0; a < v.dims; ++a)
    last += (v.extent[a] - 1) * v.stride[a];
  const char* begin = reinterpret_cast<const char*>(v.data);
  return {begin, begin + (last + 1) * static_cast<int64_t>(element)};
}

inline bool spans_overlap(const ByteSpan& a, const ByteSpan& b) {
  return a.first < b.second && b.first < a.second;
}

/// Whether the memory that `a` and `b` span intersects.
template <typename A, typename B>
bool views_overlap(const BasicVolumeView<A>& a, const BasicVolumeView<B>& b) {
  return spans_overlap(byte_span(a), byte_span(b));
}

}  // namespace ndconv::detail
