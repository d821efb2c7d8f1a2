// Row by row, with an integer OR of "x - x is not 0" (true exactly for NaN and Inf): no
// floating-point sum to reassociate, so the compiler may vectorise the contiguous case.
#include "cpu/finite_scan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/parallel_for.h"
#include "core/stored_access.h"

namespace ndconv::cpu {

bool has_non_finite(const ConstVolumeView& v, int threads) {
  const int64_t rows = v.voxel_count() / v.extent[0];
  const int64_t nx = v.extent[0], sx = v.stride[0];
  std::atomic<bool> found{false};
  core::parallel_for(
      threads, rows,
      [&](int64_t begin, int64_t end, int) {
        int bad = 0;
        for (int64_t r = begin; r < end && !bad; ++r) {
          Index i{0, 0, 0, 0};
          int64_t rest = r;
          for (int a = 1; a < v.dims; ++a) {
            i[a] = rest % v.extent[a];
            rest /= v.extent[a];
          }
          const float* row = &v.at(i);
          if (sx == 1) {
            for (int64_t x = 0; x < nx; ++x)
              bad |= !(row[x] - row[x] == 0.0f);
          } else {
            for (int64_t x = 0; x < nx; ++x)
              bad |= !(row[x * sx] - row[x * sx] == 0.0f);
          }
        }
        if (bad)
          found = true;
      },
      core::ProgressSpan{});
  return found;
}

bool may_be_non_finite(const StoredVolumeView& v) {
  return detail::visit_scalar_type(v.type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      return true;
    } else {
      const double largest = std::max(-static_cast<double>(std::numeric_limits<T>::lowest()),
                                      static_cast<double>(std::numeric_limits<T>::max()));
      return std::abs(v.scale) * largest + std::abs(v.offset) >= std::numeric_limits<float>::max();
    }
  });
}

}  // namespace ndconv::cpu
