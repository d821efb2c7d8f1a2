#include "cpu/median.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel_for.h"
#include "core/problem.h"

namespace ndconv::cpu {

namespace {

// NaN above every number, so that a window's NaNs never change the order of its numbers.
bool less_nan_last(float a, float b) {
  return a < b || (!std::isnan(a) && std::isnan(b));
}

}  // namespace

void median(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
            Boundary boundary, int threads, const std::function<bool(double)>& progress) {
  const Index& n = input.extent;
  // Input x index of each window position x + dx, x in [0, n0), dx in [-r0, r0]; -1: a zero.
  const int64_t r0 = radius[0];
  std::vector<int64_t> x_source(static_cast<size_t>(n[0] + 2 * r0));
  for (int64_t i = 0; i < n[0] + 2 * r0; ++i)
    x_source[i] = detail::boundary_index(i - r0, n[0], boundary);
  const int64_t window =
      (2 * radius[0] + 1) * (2 * radius[1] + 1) * (2 * radius[2] + 1) * (2 * radius[3] + 1);
  const int64_t rows = n[1] * n[2] * n[3];
  const int workers = core::resolve_thread_count(threads);
  std::vector<std::vector<float>> windows(workers, std::vector<float>(window));
  // Row starts of the window's rows for one output row; nullptr: a row of zeros.
  std::vector<std::vector<const float*>> row_starts(workers);
  core::ProgressSpan span;
  span.callback = &progress;
  core::parallel_for(
      workers, rows,
      [&](int64_t begin, int64_t end, int worker) {
        std::vector<float>& values = windows[worker];
        std::vector<const float*>& starts = row_starts[worker];
        for (int64_t row = begin; row < end; ++row) {
          const Index at{0, row % n[1], row / n[1] % n[2], row / (n[1] * n[2])};
          starts.clear();
          for (int64_t dt = -radius[3]; dt <= radius[3]; ++dt) {
            const int64_t t = detail::boundary_index(at[3] + dt, n[3], boundary);
            for (int64_t dz = -radius[2]; dz <= radius[2]; ++dz) {
              const int64_t z = detail::boundary_index(at[2] + dz, n[2], boundary);
              for (int64_t dy = -radius[1]; dy <= radius[1]; ++dy) {
                const int64_t y = detail::boundary_index(at[1] + dy, n[1], boundary);
                starts.push_back(t < 0 || z < 0 || y < 0
                                     ? nullptr
                                     : input.data + t * input.stride[3] + z * input.stride[2] +
                                           y * input.stride[1]);
              }
            }
          }
          float* out = output.data + at[1] * output.stride[1] + at[2] * output.stride[2] +
                       at[3] * output.stride[3];
          for (int64_t x = 0; x < n[0]; ++x) {
            size_t k = 0;
            for (const float* start : starts) {
              for (int64_t dx = 0; dx <= 2 * r0; ++dx) {
                const int64_t source = x_source[x + dx];
                values[k++] =
                    start == nullptr || source < 0 ? 0.0f : start[source * input.stride[0]];
              }
            }
            const auto middle = values.begin() + window / 2;
            std::nth_element(values.begin(), middle, values.end(), less_nan_last);
            out[x * output.stride[0]] = *middle;
          }
        }
      },
      span);
}

}  // namespace ndconv::cpu
