// Stored-type inputs (ndconv/stored.h) on the CPU, in CI: the conversion of every scalar type with
// and without scale and offset, strided stored views, and filtering a stored volume equal bit for
// bit to filtering its float conversion, and to the float64 reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "core/stored_access.h"
#include "ndconv/engine.h"
#include "ndconv/stored.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr ScalarType kTypes[] = {ScalarType::UInt8,   ScalarType::Int8,   ScalarType::UInt16,
                                 ScalarType::Int16,   ScalarType::UInt32, ScalarType::Int32,
                                 ScalarType::Float32, ScalarType::Float64};

// Random stored values of `type` over its range (integers) or [-1000, 1000) (floats), as bytes.
std::vector<unsigned char> random_stored(ScalarType type, int64_t count, uint64_t seed) {
  std::vector<unsigned char> bytes(static_cast<size_t>(count) * scalar_size(type));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> any(std::numeric_limits<int32_t>::min(),
                                             std::numeric_limits<uint32_t>::max());
  std::uniform_real_distribution<double> real(-1000.0, 1000.0);
  detail::visit_scalar_type(type, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < count; ++i) {
      // Integers over their whole range (wrapped), floats in [-1000, 1000).
      const T v =
          std::is_floating_point<T>::value ? static_cast<T>(real(rng)) : static_cast<T>(any(rng));
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
  });
  return bytes;
}

// The value i of a stored buffer as double.
double stored_value(ScalarType type, const unsigned char* bytes, int64_t i) {
  return detail::visit_scalar_type(type, [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes + i * sizeof(v), sizeof(v));
    return static_cast<double>(v);
  });
}

TEST(StoredTypes, SizesAndNames) {
  EXPECT_EQ(scalar_size(ScalarType::UInt8), 1u);
  EXPECT_EQ(scalar_size(ScalarType::Int16), 2u);
  EXPECT_EQ(scalar_size(ScalarType::UInt32), 4u);
  EXPECT_EQ(scalar_size(ScalarType::Float64), 8u);
  const char* names[] = {"uint8",  "int8",  "uint16",  "int16",
                         "uint32", "int32", "float32", "float64"};
  ASSERT_EQ(std::size(names), kScalarTypeCount);
  for (std::size_t i = 0; i < kScalarTypeCount; ++i)
    EXPECT_STREQ(to_string(static_cast<ScalarType>(i)), names[i]);
  EXPECT_STREQ(to_string(static_cast<ScalarType>(kScalarTypeCount)), "?");
}

TEST(StoredTypes, ConversionOfEveryTypeWithScaleAndOffset) {
  const Index extent{13, 7, 5, 1};
  const int64_t n = 13 * 7 * 5;
  for (ScalarType type : kTypes) {
    for (const auto& [scale, offset] : {std::pair{1.0, 0.0}, std::pair{0.37, -12.5}}) {
      const uint64_t seed = fresh_seed();
      const auto bytes = random_stored(type, n, seed);
      std::vector<float> out(static_cast<size_t>(n));
      poison(out);
      convert_to_float(make_stored_view(bytes.data(), type, 3, extent, scale, offset),
                       make_view(out.data(), 3, extent), 2);
      for (int64_t i = 0; i < n; ++i) {
        const double v = stored_value(type, bytes.data(), i);
        const float expected = scale == 1.0 && offset == 0.0
                                   ? static_cast<float>(v)
                                   : static_cast<float>(v * scale + offset);
        ASSERT_EQ(out[static_cast<size_t>(i)], expected)
            << to_string(type) << " i=" << i << " seed=" << seed;
      }
    }
  }
}

TEST(StoredTypes, FilteringEqualsFilteringTheConvertedVolume) {
  const Index extent{23, 17, 11, 1};
  const int64_t n = 23 * 17 * 11;
  const uint64_t seed = fresh_seed();
  const std::vector<float> taps = random_values(3 * 5 * 3, seed);
  const DenseFilter f{3, {3, 5, 3, 1}, taps.data()};
  SeparableFilter g;
  g.dims = 3;
  g.taps[0] = random_values(5, seed + 1);
  g.taps[2] = random_values(3, seed + 2);
  Options o;
  o.backend = Backend::Cpu;
  o.boundary = Boundary::Mirror;
  for (ScalarType type : kTypes) {
    const auto bytes = random_stored(type, n, seed + 3);
    const StoredVolumeView stored = make_stored_view(bytes.data(), type, 3, extent, 0.01, 3.0);
    std::vector<float> converted(static_cast<size_t>(n));
    convert_to_float(stored, make_view(converted.data(), 3, extent));
    const ConstVolumeView cv = make_view<const float>(converted.data(), 3, extent);

    std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    poison(want);
    poison(got);
    filter_dense(cv, f, make_view(want.data(), 3, extent), o);
    const RunReport r = filter_dense_stored(stored, f, make_view(got.data(), 3, extent), o);
    EXPECT_EQ(r.backend, Backend::Cpu);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << to_string(type);
    const auto ref =
        reference_dense(cv, f, Operation::Convolution, Boundary::Mirror, OutputRegion::Same);
    EXPECT_LT(relative_l2_error(got, ref), 1e-5) << to_string(type);

    poison(want);
    poison(got);
    filter_separable(cv, g, make_view(want.data(), 3, extent), o);
    filter_separable_stored(stored, g, make_view(got.data(), 3, extent), o);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << to_string(type);
  }
}

// Frames of 1.5 M floats run two per slab; the CPU converts each slab as it reaches it. Every other
// frame of a uint16 series, so that the slabs' offsets count the stride and the value's bytes.
TEST(StoredTypes, SeparableSlabsOfAStridedSeriesEqualTheConvertedVolume) {
  const uint64_t seed = fresh_seed();
  const Index all{1100, 700, 2, 6}, extent{1100, 700, 2, 3};
  const auto bytes = random_stored(ScalarType::UInt16, all[0] * all[1] * all[2] * all[3], seed);
  StoredVolumeView stored = make_stored_view(bytes.data(), ScalarType::UInt16, 4, all, 0.5, -100.0);
  stored.extent = extent;
  stored.stride[3] *= 2;
  const int64_t n = extent[0] * extent[1] * extent[2] * extent[3];
  std::vector<float> converted(static_cast<size_t>(n));
  convert_to_float(stored, make_view(converted.data(), 4, extent));
  SeparableFilter g;
  g.dims = 4;
  g.taps[0] = random_values(5, seed + 1);
  g.taps[1] = random_values(3, seed + 2);
  g.taps[2] = random_values(3, seed + 3);
  Options o;
  o.backend = Backend::Cpu;
  o.boundary = Boundary::Replicate;
  std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
  poison(want);
  poison(got);
  filter_separable(make_view<const float>(converted.data(), 4, extent), g,
                   make_view(want.data(), 4, extent), o);
  const RunReport r = filter_separable_stored(stored, g, make_view(got.data(), 4, extent), o);
  EXPECT_EQ(r.backend, Backend::Cpu);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0);
  EXPECT_TRUE(std::none_of(got.begin(), got.end(), [](float v) { return std::isnan(v); }));
}

TEST(StoredTypes, StridedViewsAndBadInput) {
  // Every other x of a uint16 volume.
  const uint64_t seed = fresh_seed();
  const auto bytes = random_stored(ScalarType::UInt16, 2 * 9 * 8, seed);
  StoredVolumeView v = make_stored_view(bytes.data(), ScalarType::UInt16, 2, {18, 8});
  v.extent[0] = 9;
  v.stride[0] = 2;
  v.stride[1] = 18;
  std::vector<float> out(9 * 8);
  convert_to_float(v, make_view(out.data(), 2, {9, 8}));
  for (int64_t y = 0; y < 8; ++y)
    for (int64_t x = 0; x < 9; ++x)
      ASSERT_EQ(out[static_cast<size_t>(y * 9 + x)],
                static_cast<float>(stored_value(ScalarType::UInt16, bytes.data(), y * 18 + 2 * x)));
  const float tap = 1.0f;
  const DenseFilter f{2, {1, 1, 1, 1}, &tap};
  v.scale = std::numeric_limits<double>::infinity();
  EXPECT_THROW(filter_dense_stored(v, f, make_view(out.data(), 2, {9, 8})), InvalidArgument);
  v.scale = 1.0;
  v.data = nullptr;
  EXPECT_THROW(filter_dense_stored(v, f, make_view(out.data(), 2, {9, 8})), InvalidArgument);
  EXPECT_THROW(convert_to_float(make_stored_view(bytes.data(), ScalarType::UInt8, 2, {9, 8}),
                                make_view(out.data(), 2, {8, 9})),
               InvalidArgument);
}

}  // namespace
}  // namespace ndconv::test
