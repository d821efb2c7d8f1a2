// The reflect and constant boundaries (scipy.ndimage's 'reflect' and 'constant' with cval) on the
// CPU: the index map, results published in scipy.ndimage's documentation, the separable passes
// padding each their own input with the value (scipy's sobel), stored inputs, strided views, and
// the filters that refuse a value other than 0. The full matrix (every dimension, shape, filter
// extent, instruction set and layout) is in cpu_dense_test and cpu_separable_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/boundary_index.h"
#include "core/problem.h"
#include "cpu_cases.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "ndconv/stored.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

Options cpu_options(Operation operation, Boundary boundary, float value = 0.0f) {
  Options o;
  o.backend = Backend::Cpu;
  o.operation = operation;
  o.boundary = boundary;
  o.boundary_value = value;
  return o;
}

template <typename T>
std::vector<double> as_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

TEST(BoundaryModes, ReflectIndexRepeatsTheEdge) {
  // [a b c] extended: c b a | a b c | c b a | a b c ..., at every distance.
  const int64_t expected[] = {0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2};
  for (int64_t i = -7; i <= 9; ++i) {
    EXPECT_EQ(detail::boundary_index(i, 3, Boundary::Reflect), expected[i + 7]) << i;
    EXPECT_EQ(detail::boundary_index_hd(i, 3, detail::kReflect), expected[i + 7]) << i;
  }
  for (int64_t i = -5; i <= 5; ++i)
    EXPECT_EQ(detail::boundary_index(i, 1, Boundary::Reflect), 0) << i;
  EXPECT_EQ(detail::boundary_index(-2, 3, Boundary::Constant), -1);
  EXPECT_EQ(detail::boundary_index(1, 3, Boundary::Constant), 1);
}

// scipy.ndimage.correlate1d / convolve1d([2, 8, 0, 4, 1, 9, 9, 0], weights=[1, 3]) (mode
// 'reflect', the default), from scipy's documentation: dense and separable, float and uint8.
TEST(BoundaryModes, ReflectMatchesScipyDocumentation) {
  const std::vector<float> x{2, 8, 0, 4, 1, 9, 9, 0};
  const std::vector<uint8_t> stored(x.begin(), x.end());
  const std::vector<float> weights{1, 3};
  const Index extent{8, 1, 1, 1};
  const std::vector<double> correlated{8, 26, 8, 12, 7, 28, 36, 9};
  const std::vector<double> convolved{14, 24, 4, 13, 12, 36, 27, 0};
  DenseFilter dense;
  dense.dims = 2;
  dense.extent = {2, 1, 1, 1};
  dense.taps = weights.data();
  SeparableFilter separable;
  separable.dims = 2;
  separable.taps[0] = weights;
  for (const Operation op : {Operation::Correlation, Operation::Convolution}) {
    const std::vector<double>& expected = op == Operation::Correlation ? correlated : convolved;
    const Options o = cpu_options(op, Boundary::Reflect);
    const ConstVolumeView in = make_view(x.data(), 2, extent);
    const StoredVolumeView in8 = make_stored_view(stored.data(), ScalarType::UInt8, 2, extent);
    std::vector<float> out(8);
    poison(out);
    filter_dense(in, dense, make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << to_string(op) << " dense";
    poison(out);
    filter_separable(in, separable, make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << to_string(op) << " separable";
    poison(out);
    filter_dense_stored(in8, dense, make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << to_string(op) << " dense uint8";
    poison(out);
    filter_separable_stored(in8, separable, make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << to_string(op) << " separable uint8";
  }
}

// scipy.ndimage.convolve(a, k, mode='constant', cval=0.0) and cval=1.0, from scipy's
// documentation (numpy's rows are ndconv's y).
TEST(BoundaryModes, ConstantMatchesScipyDocumentation) {
  const std::vector<float> a{1, 2, 0, 0, 5, 3, 0, 4, 0, 0, 0, 7, 9, 3, 0, 0};
  const std::vector<uint8_t> stored(a.begin(), a.end());
  const std::vector<float> k{1, 1, 1, 1, 1, 0, 1, 0, 0};
  const std::vector<double> cval0{11, 10, 7, 4, 10, 3, 11, 11, 15, 12, 14, 7, 12, 3, 7, 0};
  const std::vector<double> cval1{13, 11, 8, 7, 11, 3, 11, 14, 16, 12, 14, 10, 15, 6, 10, 5};
  DenseFilter filter;
  filter.dims = 2;
  filter.extent = {3, 3, 1, 1};
  filter.taps = k.data();
  const Index extent{4, 4, 1, 1};
  for (const float cval : {0.0f, 1.0f}) {
    const std::vector<double>& expected = cval == 0.0f ? cval0 : cval1;
    const Options o = cpu_options(Operation::Convolution, Boundary::Constant, cval);
    std::vector<float> out(16);
    poison(out);
    filter_dense(make_view(a.data(), 2, extent), filter, make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << "cval " << cval;
    poison(out);
    filter_dense_stored(make_stored_view(stored.data(), ScalarType::UInt8, 2, extent), filter,
                        make_view(out.data(), 2, extent), o);
    EXPECT_EQ(as_double(out), expected) << "cval " << cval << ", uint8";
  }
}

// scipy.ndimage.sobel(img, axis=0, mode='constant', cval=2.5): correlate1d with [-1, 0, 1] along
// numpy's axis 0 (ndconv's y) padded with 2.5, then [1, 2, 1] along axis 1 (x) padded with 2.5
// again. Computed by hand from those two definitions; padding the volume once gives another
// answer, since the derivative's taps sum to 0 and the smoothing's to 4.
TEST(BoundaryModes, SobelPadsEachPassWithTheValue) {
  const std::vector<float> img{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9};
  const std::vector<double> expected{15, 9, 9, 9, 6, 13.5, 21, 23, 21, 16.5, -10, -9, -9, -9, -1};
  const Index extent{5, 3, 1, 1};
  SeparableFilter sobel;
  sobel.dims = 2;
  sobel.taps[0] = {1, 2, 1};
  sobel.taps[1] = {-1, 0, 1};
  sobel.pass_order = {1, 0, 2, 3};
  const Options o = cpu_options(Operation::Correlation, Boundary::Constant, 2.5f);
  const ConstVolumeView in = make_view(img.data(), 2, extent);
  std::vector<float> out(15);
  poison(out);
  filter_separable(in, sobel, make_view(out.data(), 2, extent), o);
  EXPECT_EQ(as_double(out), expected);
  EXPECT_EQ(reference_separable(in, sobel, Operation::Correlation, Boundary::Constant,
                                OutputRegion::Same, 2.5),
            expected);

  // Padding the volume once (the dense outer product) differs, and so does the other order.
  const std::vector<float> outer{-1, -2, -1, 0, 0, 0, 1, 2, 1};
  DenseFilter dense;
  dense.dims = 2;
  dense.extent = {3, 3, 1, 1};
  dense.taps = outer.data();
  EXPECT_GT(relative_l2_error(out, reference_dense(in, dense, Operation::Correlation,
                                                   Boundary::Constant, OutputRegion::Same, 2.5)),
            0.1);
  sobel.pass_order = {0, 1, 2, 3};
  const std::vector<double> x_first = reference_separable(
      in, sobel, Operation::Correlation, Boundary::Constant, OutputRegion::Same, 2.5);
  EXPECT_GT(relative_l2_error(out, x_first), 0.1);
  poison(out);
  filter_separable(in, sobel, make_view(out.data(), 2, extent), o);
  EXPECT_LT(relative_l2_error(out, x_first), kTolerance);
}

// Sobel and Prewitt-like filters (taps summing to 0 along the derivative's axis, to 4 or 3 along
// the others) in 2D, 3D and 4D on fresh data, every pass order that puts one axis first, both
// operations and regions, volumes shorter than the filter along an axis, contiguous and strided
// views, float and uint8 inputs, against the per-pass float64 reference.
TEST(BoundaryModes, DerivativeFiltersUnderEveryBoundary) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index shapes[] = {{7, 2, 1, 1}, {6, 5, 2, 1}, {5, 2, 4, 3}};
  for (int dims = 2; dims <= 4; ++dims) {
    const Index extent = shapes[dims - 2];
    const int64_t count = count_of(dims, extent);
    const std::vector<float> values = random_values(count, seed + dims);
    std::vector<uint8_t> stored(count);
    for (int64_t i = 0; i < count; ++i)
      stored[i] = static_cast<uint8_t>(127.5f + 127.5f * values[i]);
    const std::vector<float> stored_values(stored.begin(), stored.end());
    StridedBuffer strided_input(dims, extent, 2);
    strided_input.fill(values);
    for (int axis = 0; axis < dims; ++axis) {
      SeparableFilter f;
      f.dims = dims;
      for (int a = 0; a < dims; ++a)
        f.taps[a] =
            a == axis ? std::vector<float>{-1, 0, 1}
                      : (axis % 2 == 0 ? std::vector<float>{1, 2, 1} : std::vector<float>{1, 1, 1});
      f.pass_order[0] = axis;
      for (int a = 0, i = 1; a < dims; ++a)
        if (a != axis)
          f.pass_order[i++] = a;
      for (int b = 0; b < static_cast<int>(kBoundaryCount); ++b) {
        const Boundary boundary = static_cast<Boundary>(b);
        const float value = test_boundary_value(boundary, seed + axis);
        for (const Operation op : {Operation::Correlation, Operation::Convolution}) {
          for (const OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
            SCOPED_TRACE(std::to_string(dims) + "D, derivative along " + std::to_string(axis) +
                         ", " + to_string(boundary) + " " + std::to_string(value) + ", " +
                         to_string(op) + ", " + to_string(region));
            Options o = cpu_options(op, boundary, value);
            o.region = region;
            const ConstVolumeView in = make_view(values.data(), dims, extent);
            Index k{1, 1, 1, 1};
            for (int a = 0; a < dims; ++a)
              k[a] = 3;
            bool fits = true;
            for (int a = 0; a < dims; ++a)
              fits = fits && extent[a] >= 3;
            if (region == OutputRegion::Valid && !fits)
              continue;
            const Index out_extent = reference_output_extent(in, k, region);
            const std::vector<double> ref = reference_separable(in, f, op, boundary, region, value);
            std::vector<float> out(count_of(dims, out_extent));
            poison(out);
            o.threads = 1;
            filter_separable(in, f, make_view(out.data(), dims, out_extent), o);
            EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "contiguous";
            StridedBuffer strided_output(dims, out_extent, 3);
            o.threads = 3;
            filter_separable(as_const(strided_input.view), f, strided_output.view, o);
            EXPECT_LT(relative_l2_error(strided_output.values(), ref), kTolerance) << "strided";
            EXPECT_EQ(strided_output.touched_gaps(), 0);
            poison(out);
            filter_separable_stored(
                make_stored_view(stored.data(), ScalarType::UInt8, dims, extent), f,
                make_view(out.data(), dims, out_extent), o);
            const std::vector<double> ref8 = reference_separable(
                make_view(stored_values.data(), dims, extent), f, op, boundary, region, value);
            EXPECT_LT(relative_l2_error(out, ref8), kTolerance) << "uint8";
            if (HasFailure())
              return;
          }
        }
      }
    }
  }
}

// Dense filters larger than the volume along some axes, on uint8 inputs, every boundary.
TEST(BoundaryModes, StoredDenseLargerThanTheVolume) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index extent{6, 2, 3, 1};
  const int64_t count = count_of(3, extent);
  const std::vector<float> noise = random_values(count, seed);
  std::vector<uint8_t> stored(count);
  for (int64_t i = 0; i < count; ++i)
    stored[i] = static_cast<uint8_t>(127.5f + 127.5f * noise[i]);
  const std::vector<float> values(stored.begin(), stored.end());
  DenseFilter filter;
  filter.dims = 3;
  filter.extent = {3, 5, 4, 1};
  const std::vector<float> taps = random_values(filter.tap_count(), seed + 1);
  filter.taps = taps.data();
  for (int b = 0; b < static_cast<int>(kBoundaryCount); ++b) {
    const Boundary boundary = static_cast<Boundary>(b);
    const float value = test_boundary_value(boundary, seed);
    SCOPED_TRACE(std::string(to_string(boundary)) + " " + std::to_string(value));
    const Options o = cpu_options(Operation::Convolution, boundary, value);
    std::vector<float> out(count);
    poison(out);
    filter_dense_stored(make_stored_view(stored.data(), ScalarType::UInt8, 3, extent), filter,
                        make_view(out.data(), 3, extent), o);
    EXPECT_LT(relative_l2_error(out, reference_dense(make_view(values.data(), 3, extent), filter,
                                                     Operation::Convolution, boundary,
                                                     OutputRegion::Same, value)),
              kTolerance);
  }
}

TEST(BoundaryModes, ConstantZeroIsZero) {
  const uint64_t seed = fresh_seed();
  const Index extent{9, 7, 5, 1};
  const std::vector<float> values = random_values(count_of(3, extent), seed);
  SeparableFilter f;
  f.dims = 3;
  for (int a = 0; a < 3; ++a)
    f.taps[a] = random_taps(5, seed + a);
  std::vector<float> zero(values.size()), constant(values.size());
  const ConstVolumeView in = make_view(values.data(), 3, extent);
  filter_separable(in, f, make_view(zero.data(), 3, extent),
                   cpu_options(Operation::Convolution, Boundary::Zero));
  filter_separable(in, f, make_view(constant.data(), 3, extent),
                   cpu_options(Operation::Convolution, Boundary::Constant, 0.0f));
  EXPECT_EQ(zero, constant);
}

TEST(BoundaryModes, RefusesWhatItCannotCompute) {
  const Index extent{8, 8, 1, 1};
  std::vector<float> values(64, 1.0f), out(64);
  const ConstVolumeView in = make_view<const float>(values.data(), 2, extent);
  const VolumeView o = make_view(out.data(), 2, extent);
  SeparableFilter f;
  f.dims = 2;
  f.taps[0] = {1, 2, 1};
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    EXPECT_THROW(
        filter_separable(in, f, o, cpu_options(Operation::Correlation, Boundary::Constant, bad)),
        InvalidArgument);
  }
  f.pass_order = {0, 0, 2, 3};
  EXPECT_THROW(filter_separable(in, f, o, cpu_options(Operation::Correlation, Boundary::Zero)),
               InvalidArgument);
  f.pass_order = {1, 2, 0, 3};
  EXPECT_THROW(filter_separable(in, f, o, cpu_options(Operation::Correlation, Boundary::Zero)),
               InvalidArgument);

  // The filter bank, the adaptive filter and the masked convolution take the constant boundary
  // with 0 only, and say so.
  const Options nonzero = cpu_options(Operation::Correlation, Boundary::Constant, 2.0f);
  auto message_of = [](auto&& call) {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<float> bank_taps(9 * 2, 0.5f);
  FilterBank bank;
  bank.dims = 2;
  bank.extent = {3, 3, 1, 1};
  bank.count = 2;
  bank.taps = bank_taps.data();
  std::vector<float> out2(64);
  const std::vector<VolumeView> outputs{o, make_view(out2.data(), 2, extent)};
  EXPECT_NE(message_of([&] { filter_bank(in, bank, outputs, nonzero); }).find("the filter bank"),
            std::string::npos);
  EXPECT_NE(message_of([&] { adaptive_filter(in, o, {}, nonzero); }).find("the adaptive filter"),
            std::string::npos);
  const std::vector<float> mask(64, 1.0f);
  EXPECT_NE(message_of([&] {
              masked_filter_separable(in, make_view(mask.data(), 2, extent), f, o, {}, nonzero);
            }).find("masked"),
            std::string::npos);
  f.pass_order = {0, 1, 2, 3};

  // With 0 they run, as Boundary::Zero.
  const Options constant_zero = cpu_options(Operation::Correlation, Boundary::Constant, 0.0f);
  EXPECT_NO_THROW(filter_bank(in, bank, outputs, constant_zero));
}

}  // namespace
}  // namespace ndconv::test
