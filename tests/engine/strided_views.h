// Test helpers: volumes embedded in larger, NaN-poisoned buffers with non-unit strides, so that a
// backend that ignores strides reads or writes the wrong elements and a write outside the view
// shows up as a changed gap element.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ndconv/types.h"
#include "test_data.h"

namespace ndconv::test {

/// A buffer holding a view of `extent` with a gap of `gap_x - 1` elements between neighbours
/// along x and one extra element at the end of every line along the other axes.
struct StridedBuffer {
  std::vector<float> storage;
  VolumeView view;

  StridedBuffer(int dims, const Index& extent, int64_t gap_x) {
    view.dims = dims;
    int64_t s = gap_x;
    for (int a = 0; a < kMaxDims; ++a) {
      view.extent[a] = a < dims ? extent[a] : 1;
      view.stride[a] = s;
      s = s * view.extent[a] + 1;
    }
    storage.assign(s, std::nanf(""));
    view.data = storage.data();
  }
  /// Copies contiguous values (x fastest) into the view.
  void fill(const std::vector<float>& values) {
    int64_t n = 0;
    for_each([&](float& v) { v = values[n++]; });
  }
  /// The view's values, contiguous, x fastest.
  std::vector<float> values() const {
    std::vector<float> out;
    const_cast<StridedBuffer*>(this)->for_each([&](float& v) { out.push_back(v); });
    return out;
  }
  /// Number of storage elements outside the view that are no longer NaN.
  int64_t touched_gaps() const {
    std::vector<char> in_view(storage.size(), 0);
    const float* base = storage.data();
    const_cast<StridedBuffer*>(this)->for_each([&](float& v) { in_view[&v - base] = 1; });
    int64_t touched = 0;
    for (size_t i = 0; i < storage.size(); ++i)
      touched += !in_view[i] && !std::isnan(storage[i]);
    return touched;
  }

 private:
  template <typename F>
  void for_each(F f) {
    Index i{0, 0, 0, 0};
    for (i[3] = 0; i[3] < view.extent[3]; ++i[3])
      for (i[2] = 0; i[2] < view.extent[2]; ++i[2])
        for (i[1] = 0; i[1] < view.extent[1]; ++i[1])
          for (i[0] = 0; i[0] < view.extent[0]; ++i[0])
            f(view.at(i));
  }
};

inline int64_t count_of(int dims, const Index& extent) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

}  // namespace ndconv::test
