// The taps' split into 8-bit digits (int8_digits.h).
#include "core/int8_digits.h"

#include <algorithm>
#include <cmath>

#include "ndconv/errors.h"

namespace ndconv::detail {

SplitFilter split_filter(const float* taps, int64_t count, int slices) {
  if (slices < 2 || slices > 4)
    throw InvalidArgument("the weight split takes 2 to 4 slices");
  SplitFilter s;
  s.digits.assign(static_cast<size_t>(count * slices), 0);
  double largest = 0;
  for (int64_t j = 0; j < count; ++j)
    largest = std::max(largest, std::fabs(static_cast<double>(taps[j])));
  if (largest == 0)
    return s;
  s.scale = static_cast<float>(largest / 127.0);
  constexpr double kRadix = 1 << kDigitBits;
  for (int64_t j = 0; j < count; ++j) {
    // Round to nearest at each digit: |w / s| <= 127 (plus the scale's rounding, which still rounds
    // to 127), and each later digit is 128 times a remainder of at most 1/2.
    double rest = static_cast<double>(taps[j]) / s.scale;
    for (int d = 0; d < slices; ++d) {
      const double digit = std::nearbyint(rest);
      s.digits[static_cast<size_t>(d * count + j)] = static_cast<int8_t>(digit);
      rest = (rest - digit) * kRadix;
    }
  }
  return s;
}

double split_error(const float* taps, int64_t count, const SplitFilter& split, int slices) {
  double largest = 0, worst = 0;
  for (int64_t j = 0; j < count; ++j) {
    double w = 0, weight = 1;
    for (int d = 0; d < slices; ++d, weight /= (1 << kDigitBits))
      w += split.digits[static_cast<size_t>(d * count + j)] * weight;
    largest = std::max(largest, std::fabs(static_cast<double>(taps[j])));
    worst = std::max(worst, std::fabs(w * split.scale - taps[j]));
  }
  return largest == 0 ? 0 : worst / largest;
}

}  // namespace ndconv::detail
