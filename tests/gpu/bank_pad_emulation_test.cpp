// Host emulation of the filter bank's device padding (src/cuda/bank/bank_pad.h, the functions
// pad_bank_input_device's kernel runs per row and element): bit for bit the host's
// core::build_padded, which pad_bank_input calls, for every boundary, canonical geometries of 2D
// (one row axis), 3D and 4D inputs, contiguous and strided, with offsets beyond one extent of the
// volume and values whose bits a conversion would change. Runs in CI without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/padding.h"
#include "cuda/bank/bank_pad.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

struct PadGeometryCase {
  const char* name;
  Index in_extent;      // canonical
  int64_t gap[4];       // extra elements per stride step (a strided view), 0: contiguous
  Index offset;         // of padded element 0 in the input
  Index padded_extent;  // [0] unused
  int64_t x_count;
  int64_t row_length;
};

TEST(BankPadEmulation, EqualsTheHostPaddingBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PadGeometryCase cases[] = {
      // 2D: rows on canonical axis 3.
      {"2D", {37, 1, 1, 11}, {0, 0, 0, 0}, {-3, 0, 0, -2}, {0, 1, 1, 15}, 43, 48},
      // 3D with an axis shorter than the filter's reach.
      {"3D", {41, 3, 1, 9}, {0, 0, 0, 0}, {-4, -3, 0, -2}, {0, 9, 1, 13}, 49, 52},
      // 4D, strided along x and axis 2, a slab starting inside the last axis.
      {"4D strided", {19, 6, 2, 8}, {1, 3, 2, 0}, {-1, -2, -3, 2}, {0, 10, 8, 6}, 21, 28},
      // 4D, offsets more than one extent away on every side.
      {"4D far", {5, 2, 3, 4}, {0, 0, 0, 0}, {-7, -5, -6, -9}, {0, 12, 14, 20}, 19, 24},
  };
  for (const PadGeometryCase& c : cases) {
    // Strides with the gaps, x fastest.
    Index stride{1, 1, 1, 1};
    stride[0] = 1 + c.gap[0];
    int64_t span = (c.in_extent[0] - 1) * stride[0] + 1;
    for (int a = 1; a < 4; ++a) {
      stride[a] = span + c.gap[a];
      span = (c.in_extent[a] - 1) * stride[a] + span;
    }
    std::vector<float> values = random_values(span, seed + c.in_extent[0]);
    values[0] = std::numeric_limits<float>::quiet_NaN();
    values[span / 3] = std::numeric_limits<float>::infinity();
    values[span / 2] = -0.0f;
    values[span - 1] = -std::numeric_limits<float>::infinity();
    for (int b = 0; b < 4; ++b) {
      const Boundary boundary = static_cast<Boundary>(b);
      SCOPED_TRACE(std::string(c.name) + ", boundary " + std::to_string(b));
      core::PaddedVolume host;
      core::build_padded(values.data(), c.in_extent, stride, c.offset, c.padded_extent, c.x_count,
                         c.row_length, boundary, 1, {}, host);
      const cuda_bank::BankPadGeometry g = cuda_bank::bank_pad_geometry(
          c.in_extent, stride, c.offset, c.padded_extent, c.x_count, c.row_length, boundary);
      const int64_t rows = g.e1 * g.e2 * g.e3;
      std::vector<float> emulated(static_cast<size_t>(rows * g.row_length));
      poison(emulated);
      for (int64_t r = 0; r < rows; ++r) {  // the kernel's grid-stride walk, one row per block
        const float* src = cuda_bank::bank_pad_source(g, values.data(), r);
        for (int64_t q0 = 0; q0 < g.row_length; ++q0)
          emulated[r * g.row_length + q0] = cuda_bank::bank_pad_element(g, src, q0);
      }
      EXPECT_EQ(std::memcmp(emulated.data(), host.storage.get(), emulated.size() * sizeof(float)),
                0);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
