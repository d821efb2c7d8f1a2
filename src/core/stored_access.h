// Typed access to a StoredVolumeView (ndconv/stored.h) for the CPU conversion and the GPU
// backend's host staging: the scalar type as a C++ type, and rows along the last axis gathered
// into contiguous memory in their stored type.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/view_copy.h"
#include "ndconv/stored.h"

namespace ndconv::detail {

/// Calls f(T{}) with the C++ type of `type`.
template <typename F>
decltype(auto) visit_scalar_type(ScalarType type, F f) {
  switch (type) {
    case ScalarType::UInt8:
      return f(uint8_t{});
    case ScalarType::Int8:
      return f(int8_t{});
    case ScalarType::UInt16:
      return f(uint16_t{});
    case ScalarType::Int16:
      return f(int16_t{});
    case ScalarType::UInt32:
      return f(uint32_t{});
    case ScalarType::Int32:
      return f(int32_t{});
    case ScalarType::Float32:
      return f(float{});
    case ScalarType::Float64:
      break;
  }
  return f(double{});
}

/// The stored view as a view of T (T must be its type).
template <typename T>
BasicVolumeView<const T> typed_view(const StoredVolumeView& v) {
  BasicVolumeView<const T> t;
  t.dims = v.dims;
  t.extent = v.extent;
  t.stride = v.stride;
  t.spacing = v.spacing;
  t.data = reinterpret_cast<const T*>(v.data);
  return t;
}

/// Rows [first, first + rows) along the last axis into `dst`, contiguous, in the stored type.
inline void gather_stored_rows(const StoredVolumeView& v, int64_t first, int64_t rows, void* dst) {
  visit_scalar_type(v.type, [&](auto zero) {
    using T = decltype(zero);
    const BasicVolumeView<const T> rows_view = last_axis_rows(typed_view<T>(v), first, rows);
    T* out = static_cast<T*>(dst);
    for_each_voxel(rows_view, [&](int64_t off, int64_t i) { out[i] = rows_view.data[off]; });
  });
}

}  // namespace ndconv::detail
