#include "perf/params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "ndconv/errors.h"

namespace ndconv::perf {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return parts;
}

int64_t parse_integer(const std::string& token, const std::string& what, const std::string& text) {
  const auto bad = [&] {
    return InvalidArgument(what + ": '" + text + "' is not a list of integers or ranges " +
                           "first:last[:step] (bad item '" + token + "')");
  };
  if (token.empty() || token.find_first_not_of("0123456789+-") != std::string::npos)
    throw bad();
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0')
    throw bad();
  return static_cast<int64_t>(v);
}

}  // namespace

int64_t parse_int(const std::string& text, const std::string& what, int64_t min_value,
                  int64_t max_value) {
  if (text.empty() || text.find_first_not_of("0123456789+-") != std::string::npos)
    throw InvalidArgument(what + ": '" + text + "' is not an integer");
  const int64_t v = parse_integer(text, what, text);
  if (v < min_value || v > max_value) {
    throw InvalidArgument(what + ": " + text + " is outside [" + std::to_string(min_value) + ", " +
                          std::to_string(max_value) + "]");
  }
  return v;
}

double parse_number(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    throw InvalidArgument(what + ": '" + text + "' is not a number");
  return v;
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what,
                                    int64_t min_value, int64_t max_value) {
  std::vector<int64_t> values;
  if (text.empty())
    throw InvalidArgument(what + ": empty list");
  for (const std::string& item : split(text, ',')) {
    const std::vector<std::string> r = split(item, ':');
    if (r.size() > 3) {
      throw InvalidArgument(what + ": '" + item + "' is not a range first:last[:step]");
    }
    const int64_t first = parse_integer(r[0], what, text);
    const int64_t last = r.size() > 1 ? parse_integer(r[1], what, text) : first;
    const int64_t step = r.size() > 2 ? parse_integer(r[2], what, text) : 1;
    if (step <= 0)
      throw InvalidArgument(what + ": the step of '" + item + "' must be positive");
    if (last < first)
      throw InvalidArgument(what + ": the range '" + item + "' is empty (last < first)");
    if ((last - first) / step >= 100000)
      throw InvalidArgument(what + ": the range '" + item + "' has too many values");
    for (int64_t v = first; v <= last; v += step) {
      if (v < min_value || v > max_value) {
        throw InvalidArgument(what + ": " + std::to_string(v) + " is outside [" +
                              std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
      }
      values.push_back(v);
    }
  }
  return values;
}

Shape parse_shape(const std::string& text, const std::string& what) {
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() < 2 || parts.size() > 4) {
    throw InvalidArgument(what + ": '" + text +
                          "' is not an extent such as 256x256x256 (2 to 4 axes, x first)");
  }
  Shape s;
  s.dims = static_cast<int>(parts.size());
  for (int a = 0; a < s.dims; ++a) {
    const int64_t v = parse_integer(parts[a], what, text);
    if (v < 1 || v > (int64_t{1} << 20))
      throw InvalidArgument(what + ": extent " + parts[a] + " in '" + text + "' is out of range");
    s.extent[a] = v;
  }
  return s;
}

std::vector<Shape> parse_shape_list(const std::string& text, const std::string& what) {
  std::vector<Shape> shapes;
  for (const std::string& item : split(text, ','))
    shapes.push_back(parse_shape(item, what));
  return shapes;
}

std::string format_shape(const Shape& s) {
  std::string out;
  for (int a = 0; a < s.dims; ++a) {
    if (a)
      out += 'x';
    out += std::to_string(s.extent[a]);
  }
  return out;
}

Shape cube(int dims, int64_t k) {
  Shape s;
  s.dims = dims;
  for (int a = 0; a < dims; ++a)
    s.extent[a] = k;
  return s;
}

}  // namespace ndconv::perf
