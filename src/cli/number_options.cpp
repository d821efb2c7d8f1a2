#include "number_options.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "axis_values.h"
#include "cli_common.h"

namespace ndconv::cli {

namespace {

std::string range_text(const NumberRange& r) {
  char text[120];
  std::snprintf(text, sizeof text, "%s%g, %g]", r.min_excluded ? "(" : "[", r.min, r.max);
  return text;
}

}  // namespace

std::string number_error(const std::string& text, const NumberRange& r) {
  double v = 0;
  if (!parse_number(text, v))
    return "expected a finite number in " + range_text(r) + ", got '" + text + "'";
  if (v < r.min || v > r.max || (r.min_excluded && v == r.min))
    return "'" + text + "' is outside " + range_text(r);
  return {};
}

CLI::Validator number_in(const NumberRange& r) {
  return CLI::Validator([r](std::string& s) { return number_error(s, r); },
                        "NUMBER in " + range_text(r));
}

double parse_number_in(const std::string& text, const NumberRange& r, const std::string& option) {
  const std::string error = number_error(text, r);
  if (!error.empty())
    throw UsageError(option + " " + text + ": " + error);
  double v = 0;
  parse_number(text, v);
  return v;
}

}  // namespace ndconv::cli
