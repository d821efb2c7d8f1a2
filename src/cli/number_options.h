// The one check of every floating-point option: a finite number ("nan", "inf" and values beyond
// the range, such as 1e39, refused) within the option's documented range, so that the results
// stay finite. Exit code 2 before any work, through CLI11's validators or UsageError.
#pragma once

#include <limits>
#include <string>

namespace CLI {
class Validator;
}

namespace ndconv::cli {

/// The largest finite float32: a value stored in an image must fit it.
inline constexpr double kMaxFloatValue = std::numeric_limits<float>::max();

struct NumberRange {
  double min = -kMaxFloatValue, max = kMaxFloatValue;
  bool min_excluded = false;  ///< (min, max] instead of [min, max]
};

/// "" when `text` is a finite number within `range`; else what is wrong, naming the range.
std::string number_error(const std::string& text, const NumberRange& range);

/// number_error as a CLI11 check (its description shows the range in --help).
CLI::Validator number_in(const NumberRange& range);

/// Parses `text` as a number within `range`; UsageError "OPTION TEXT: ..." otherwise.
double parse_number_in(const std::string& text, const NumberRange& range,
                       const std::string& option);

}  // namespace ndconv::cli
