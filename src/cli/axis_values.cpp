#include "axis_values.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "cli_common.h"

namespace ndconv::cli {

AxisValues parse_axis_values(const std::string& text, const std::string& option) {
  AxisValues result;
  std::string numbers = text;
  // The unit is the trailing run of letters other than 'x' (the separator), e.g. "1x2vox".
  size_t unit_start = numbers.size();
  while (unit_start > 0 && std::isalpha(static_cast<unsigned char>(numbers[unit_start - 1])))
    --unit_start;
  std::string unit = numbers.substr(unit_start);
  // "2x" would leave "x" as unit: treat a lone trailing x as a missing value below.
  if (unit.size() > 0 && unit.front() == 'x' && unit != "x") {
    unit_start += 1;
    unit = unit.substr(1);
  }
  numbers = numbers.substr(0, unit_start);
  if (numbers.empty())
    throw UsageError(option + " " + text + ": expected a number, e.g. 1.5, 1x1x2 or 2vox");
  result.unit_given = !unit.empty();
  if (unit.empty() || unit == "mm") {
    result.unit = LengthUnit::Millimetre;
  } else if (unit == "vox" || unit == "voxel" || unit == "voxels") {
    result.unit = LengthUnit::Voxel;
  } else if (unit == "x") {
    throw UsageError(option + " " + text + ": a value is missing after 'x'");
  } else {
    throw UsageError(option + " " + text + ": unknown unit '" + unit + "'; use mm or vox");
  }
  size_t pos = 0;
  while (true) {
    const size_t x = numbers.find('x', pos);
    const std::string part = numbers.substr(pos, x == std::string::npos ? x : x - pos);
    double v = 0;
    if (!parse_number(part, v)) {
      throw UsageError(option + " " + text + ": '" + part +
                       "' is not a number (expected e.g. 1.5, 1x1x2 or 2vox)");
    }
    if (v < 0)
      throw UsageError(option + " " + text + ": values must not be negative");
    result.values.push_back(v);
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  bool any_positive = false;
  for (double v : result.values)
    any_positive = any_positive || v > 0;
  if (!any_positive) {
    throw UsageError(option + " " + text + ": must be greater than 0" +
                     (result.values.size() > 1 ? " along at least one axis" : ""));
  }
  return result;
}

std::vector<double> expand_to_axes(const AxisValues& v, int axes, const std::string& option,
                                   const std::string& input) {
  if (v.values.size() == 1)
    return std::vector<double>(axes, v.values[0]);
  if (static_cast<int>(v.values.size()) != axes) {
    throw UsageError(option + ": " + std::to_string(v.values.size()) + " values given, but " +
                     input + " has " + std::to_string(axes) + " spatial axes; give one value or " +
                     std::to_string(axes));
  }
  return v.values;
}

TimeValue parse_time_value(const std::string& text, const std::string& option) {
  TimeValue t;
  std::string number = text;
  if (!number.empty() && number.back() == 's') {
    t.seconds = true;
    number.pop_back();
  }
  if (!parse_number(number, t.value)) {
    throw UsageError(option + " " + text +
                     ": expected a number of frames (e.g. 2) or seconds (e.g. 0.5s)");
  }
  if (!(t.value > 0))
    throw UsageError(option + " " + text + ": must be greater than 0");
  return t;
}

}  // namespace ndconv::cli
