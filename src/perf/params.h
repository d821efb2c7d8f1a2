// Parsing of the sweep's and the bench's parameters: integer lists and ranges ("3:15:2",
// "1,2,4,8,16", "3,5,9:13:2") and volume extents ("256x256x256", "128x128x128x16").
// Bad text becomes ndconv::InvalidArgument with a one-line message naming the option, so that
// both front ends (ndconv and ndconv-perf) print the same error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndconv/types.h"

namespace ndconv::perf {

/// A volume or filter shape: dimension and extents (axes >= dims are 1).
struct Shape {
  int dims = 0;
  Index extent{1, 1, 1, 1};

  int64_t count() const {
    int64_t n = 1;
    for (int a = 0; a < dims; ++a)
      n *= extent[a];
    return n;
  }
  bool operator==(const Shape& o) const { return dims == o.dims && extent == o.extent; }
};

/// One integer in [min_value, max_value]; `what` names the option in error messages.
int64_t parse_int(const std::string& text, const std::string& what, int64_t min_value,
                  int64_t max_value);

/// One finite floating-point number, e.g. "2e9".
double parse_number(const std::string& text, const std::string& what);

/// Comma-separated items, each a number or a range first:last[:step] (last included, step > 0).
/// `what` names the option in error messages. Values must lie in [min_value, max_value].
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what,
                                    int64_t min_value = 1, int64_t max_value = 1 << 30);

/// "256x256x256": 2 to 4 positive extents, x first.
Shape parse_shape(const std::string& text, const std::string& what);

/// Comma-separated shapes: "4096x4096,256x256x256".
std::vector<Shape> parse_shape_list(const std::string& text, const std::string& what);

/// "256x256x256" (inverse of parse_shape).
std::string format_shape(const Shape& s);

/// A cube of extent k along each of `dims` axes.
Shape cube(int dims, int64_t k);

}  // namespace ndconv::perf
