// Helpers shared by the test suites: fresh random data (never zeros), NaN poisoning and the
// relative L2 error against the float64 reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ndconv::test {

/// A seed that differs on every call and every run, printed by the tests on failure so that a
/// failing case can be replayed with NDCONV_TEST_SEED.
uint64_t fresh_seed();

/// Uniform values in [-1, 1) without exact zeros.
std::vector<float> random_values(int64_t count, uint64_t seed);

/// Fills with quiet NaN so that any voxel a backend fails to write fails the comparison.
inline void poison(std::vector<float>& v) {
  for (float& x : v)
    x = std::numeric_limits<float>::quiet_NaN();
}

/// ||got - ref|| / ||ref||; NaN or Inf anywhere in `got` gives +Inf. The float64 form compares
/// two references.
double relative_l2_error(const std::vector<float>& got, const std::vector<double>& ref);
double relative_l2_error(const std::vector<double>& got, const std::vector<double>& ref);

}  // namespace ndconv::test
