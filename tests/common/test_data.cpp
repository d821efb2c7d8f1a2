#include "test_data.h"

#include <chrono>
#include <cstdlib>
#include <string>

namespace ndconv::test {

uint64_t fresh_seed() {
  static uint64_t base = []() -> uint64_t {
    if (const char* s = std::getenv("NDCONV_TEST_SEED"))
      return std::stoull(s);
    return static_cast<uint64_t>(
               std::chrono::high_resolution_clock::now().time_since_epoch().count()) ^
           static_cast<uint64_t>(std::random_device{}());
  }();
  static uint64_t counter = 0;
  return base + 0x9E3779B97F4A7C15ull * ++counter;
}

std::vector<float> random_values(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) {
    do {
      x = dist(rng);
    } while (x == 0.0f);
  }
  return v;
}

namespace {

template <typename T>
double relative_l2(const std::vector<T>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size())
    return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (den == 0)
    return num == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

}  // namespace

double relative_l2_error(const std::vector<float>& got, const std::vector<double>& ref) {
  return relative_l2(got, ref);
}

double relative_l2_error(const std::vector<double>& got, const std::vector<double>& ref) {
  return relative_l2(got, ref);
}

}  // namespace ndconv::test
