#include "cpu/median.h"

#include <string>
#include <vector>

#include "core/median_key.h"
#include "core/parallel_for.h"
#include "core/problem.h"
#include "cpu/isa_dispatch.h"
#include "cpu/median_kernel_set.h"

namespace ndconv::cpu {

namespace {

const MedianKernelSet& median_kernel_set(const std::string& isa) {
#if NDCONV_CPU_X86_KERNELS
  if (isa == "avx512")
    return median_kernels_avx512();
  if (isa == "avx2")
    return median_kernels_avx2();
#endif
  return median_kernels_generic();
}

// The keys of one input row along x, mapped by the boundary rule: key i is input x = i - r0
// (`x_source`: the input index of each, -1 outside), the row's inside part converted at once.
void key_row(const MedianKernelSet& kernels, const float* row, int64_t stride,
             const std::vector<int64_t>& x_source, int64_t r0, int64_t n0, uint32_t outside,
             uint32_t* keys) {
  if (stride == 1) {
    kernels.keys(row, n0, keys + r0);
  } else {
    for (int64_t x = 0; x < n0; ++x)
      keys[r0 + x] = detail::median_key(row[x * stride]);
  }
  for (int64_t i = 0; i < r0; ++i) {
    for (const int64_t at : {i, r0 + n0 + i}) {
      const int64_t source = x_source[at];
      keys[at] = source < 0 ? outside : keys[r0 + source];
    }
  }
}

}  // namespace

void median(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
            Boundary boundary, float outside, int threads,
            const std::function<bool(double)>& progress) {
  const MedianKernelSet& kernels = median_kernel_set(select_kernel_set().isa);
  const Index& n = input.extent;
  const int64_t r0 = radius[0];
  std::vector<int64_t> x_source(static_cast<size_t>(n[0] + 2 * r0));
  for (int64_t i = 0; i < n[0] + 2 * r0; ++i)
    x_source[i] = detail::boundary_index(i - r0, n[0], boundary);
  // Every key row is readable up to round_up(nx, lanes) + span - 1 (the last lanes' windows).
  const int64_t row_length = round_up(n[0], kMaxLanes) + 2 * r0;
  const uint32_t outside_key = detail::median_key(outside);
  const std::vector<uint32_t> outside_row(static_cast<size_t>(row_length), outside_key);
  const int64_t window_rows = (2 * radius[1] + 1) * (2 * radius[2] + 1) * (2 * radius[3] + 1);
  const int64_t rows = n[1] * n[2] * n[3];
  const int workers = core::resolve_thread_count(threads);
  core::ProgressSpan span;
  span.callback = &progress;
  core::parallel_for(
      workers, rows,
      [&](int64_t begin, int64_t end, int) {
        std::vector<uint32_t> keys(static_cast<size_t>(window_rows * row_length), outside_key);
        std::vector<const uint32_t*> starts(static_cast<size_t>(window_rows));
        MedianRow m;
        m.rows = starts.data();
        m.row_count = window_rows;
        m.span = static_cast<int>(2 * r0 + 1);
        m.centre_row = static_cast<int>(window_rows / 2);
        m.nx = n[0];
        m.out_stride = output.stride[0];
        for (int64_t row = begin; row < end; ++row) {
          const Index at{0, row % n[1], row / n[1] % n[2], row / (n[1] * n[2])};
          size_t k = 0;
          for (int64_t dt = -radius[3]; dt <= radius[3]; ++dt) {
            const int64_t t = detail::boundary_index(at[3] + dt, n[3], boundary);
            for (int64_t dz = -radius[2]; dz <= radius[2]; ++dz) {
              const int64_t z = detail::boundary_index(at[2] + dz, n[2], boundary);
              for (int64_t dy = -radius[1]; dy <= radius[1]; ++dy, ++k) {
                const int64_t y = detail::boundary_index(at[1] + dy, n[1], boundary);
                if (t < 0 || z < 0 || y < 0) {
                  starts[k] = outside_row.data();
                  continue;
                }
                uint32_t* to = keys.data() + k * row_length;
                key_row(
                    kernels,
                    input.data + t * input.stride[3] + z * input.stride[2] + y * input.stride[1],
                    input.stride[0], x_source, r0, n[0], outside_key, to);
                starts[k] = to;
              }
            }
          }
          m.out = output.data + at[1] * output.stride[1] + at[2] * output.stride[2] +
                  at[3] * output.stride[3];
          kernels.row(m);
        }
      },
      span);
}

}  // namespace ndconv::cpu
