// The reflect and constant boundaries on the GPU through the engine's host calls (the CPU suite's
// cases, tests/engine/boundary_modes_test.cpp, for the GPU families): dense (tiled, blocked, the
// padded input and the border kernel) and separable passes, 2D to 4D, filters larger than the
// volume, both operations and regions, the separable passes in several orders with taps that do
// not sum to 1, stored uint8 inputs, strided views, every output poisoned with NaN, against the
// float64 reference. The device entry points are in pipeline_gpu_test. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"
#include "ndconv/engine.h"
#include "ndconv/stored.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

Options cuda_options(Boundary b, float value, Operation op, OutputRegion region) {
  Options o;
  o.backend = Backend::Cuda;
  o.boundary = b;
  o.boundary_value = value;
  o.operation = op;
  o.region = region;
  return o;
}

// Shapes that reach the GPU families: the tiled kernel with bulk copies and a padded input or the
// border kernel (x 256), the 2D tiled shape, the blocked kernel (a 4D filter), filters wider than
// the volume along every axis.
const ShapeCase kShapes[] = {{3, {256, 70, 9, 1}, {9, 5, 3, 1}},
                             {2, {300, 90, 1, 1}, {17, 9, 1, 1}},
                             {3, {64, 40, 20, 1}, {7, 5, 3, 1}},
                             {4, {20, 12, 9, 6}, {3, 5, 3, 5}},
                             {3, {5, 4, 6, 1}, {9, 7, 3, 1}}};

bool fits(const ShapeCase& s) {
  for (int a = 0; a < s.dims; ++a) {
    if (s.filter[a] > s.volume[a])
      return false;
  }
  return true;
}

// Calls check(options, out_extent, out, what) for every boundary (the constant one with a value
// from `seed`), operation and region (`valid` where the filter fits), `out` poisoned with NaN.
template <typename Check>
void for_every_request(const ShapeCase& s, uint64_t seed, Check check) {
  const std::vector<float> unused(static_cast<size_t>(voxels(s.dims, s.volume)));
  const ConstVolumeView geometry = make_view(unused.data(), s.dims, s.volume);
  for (Boundary b : kEveryBoundary) {
    const float value = test_boundary_value(b, seed);
    for (Operation op : {Operation::Correlation, Operation::Convolution}) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        if (region == OutputRegion::Valid && !fits(s))
          continue;
        const Index out_extent = reference_output_extent(geometry, s.filter, region);
        std::vector<float> out(static_cast<size_t>(voxels(s.dims, out_extent)));
        poison(out);
        std::ostringstream what;
        what << s << " " << to_string(b) << " " << value << " " << to_string(op) << " "
             << to_string(region) << " seed=" << seed;
        check(cuda_options(b, value, op, region), out_extent, out, what.str());
      }
    }
  }
}

TEST(GpuBoundaryModes, DenseMatchesReference) {
  NDCONV_REQUIRE_GPU();
  for (const ShapeCase& s : kShapes) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
    for_every_request(
        s, seed,
        [&](const Options& o, const Index& out_extent, std::vector<float>& out,
            const std::string& what) {
          filter_dense(in_view, f, make_view(out.data(), s.dims, out_extent), o);
          EXPECT_LT(relative_l2_error(out, reference_dense(in_view, f, o.operation, o.boundary,
                                                           o.region, o.boundary_value)),
                    kTolerance)
              << what;
        });
  }
}

TEST(GpuBoundaryModes, SeparableMatchesReferenceInEveryPassOrder) {
  NDCONV_REQUIRE_GPU();
  for (const ShapeCase& s : kShapes) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
    // Derivative-like taps (summing to 0) along x, smoothing (summing to more than 1) elsewhere.
    SeparableFilter f;
    f.dims = s.dims;
    for (int a = 0; a < s.dims; ++a) {
      f.taps[a] = positive_taps(s.filter[a], seed + 2 + static_cast<uint64_t>(a));
      if (a == 0 && s.filter[0] >= 3) {
        f.taps[0].assign(static_cast<size_t>(s.filter[0]), 0.0f);
        f.taps[0].front() = -1.0f;
        f.taps[0].back() = 1.0f;
      }
    }
    for (const bool reversed : {false, true}) {
      for (int i = 0; i < s.dims; ++i)
        f.pass_order[i] = reversed ? s.dims - 1 - i : i;
      for_every_request(s, seed + reversed,
                        [&](const Options& o, const Index& out_extent, std::vector<float>& out,
                            const std::string& what) {
                          filter_separable(in_view, f, make_view(out.data(), s.dims, out_extent),
                                           o);
                          // The dense reference's outer product would take minutes for the first
                          // shape.
                          const std::vector<double> ref =
                              o.region == OutputRegion::Same
                                  ? reference_separable_passes(in_view, f, o.operation, o.boundary,
                                                               o.boundary_value)
                                  : reference_separable(in_view, f, o.operation, o.boundary,
                                                        o.region, o.boundary_value);
                          EXPECT_LT(relative_l2_error(out, ref), kTolerance)
                              << what << (reversed ? " last axis first" : "");
                        });
    }
  }
}

TEST(GpuBoundaryModes, StoredInputsAndStridedViews) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {64, 40, 20, 1}, {7, 5, 3, 1}};
  const uint64_t seed = fresh_seed();
  const int64_t n = voxels(s.dims, s.volume);
  const std::vector<float> noise = random_values(n, seed);
  std::vector<uint8_t> stored(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    stored[i] = static_cast<uint8_t>(127.5f + 127.5f * noise[i]);
  const std::vector<float> values(stored.begin(), stored.end());
  const ConstVolumeView in_view = make_view(values.data(), s.dims, s.volume);
  const StoredVolumeView in8 = make_stored_view(stored.data(), ScalarType::UInt8, 3, s.volume);
  const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
  const DenseFilter f{s.dims, s.filter, taps.data()};
  SeparableFilter sf;
  sf.dims = 3;
  for (int a = 0; a < 3; ++a)
    sf.taps[a] = positive_taps(s.filter[a], seed + 2 + static_cast<uint64_t>(a));
  sf.pass_order = {2, 0, 1, 3};
  // A strided input: every voxel of a volume twice as long along x.
  Index wide = s.volume;
  wide[0] *= 2;
  std::vector<float> wide_values(static_cast<size_t>(voxels(3, wide)), 7.0f);
  for (int64_t i = 0; i < n; ++i)
    wide_values[2 * i] = values[i];
  ConstVolumeView strided = make_view<const float>(wide_values.data(), 3, s.volume);
  for (int a = 0; a < 3; ++a)
    strided.stride[a] = 2 * in_view.stride[a];
  for (Boundary b : kEveryBoundary) {
    const float value = test_boundary_value(b, seed);
    const Options o = cuda_options(b, value, Operation::Convolution, OutputRegion::Same);
    const std::vector<double> dense_ref =
        reference_dense(in_view, f, Operation::Convolution, b, OutputRegion::Same, value);
    const std::vector<double> separable_ref =
        reference_separable_passes(in_view, sf, Operation::Convolution, b, value);
    std::vector<float> out(static_cast<size_t>(n));
    const VolumeView out_view = make_view(out.data(), 3, s.volume);
    const std::pair<const char*, std::function<void()>> calls[] = {
        {"dense uint8", [&] { filter_dense_stored(in8, f, out_view, o); }},
        {"separable uint8", [&] { filter_separable_stored(in8, sf, out_view, o); }},
        {"dense strided", [&] { filter_dense(strided, f, out_view, o); }},
        {"separable strided", [&] { filter_separable(strided, sf, out_view, o); }}};
    for (const auto& [what, call] : calls) {
      poison(out);
      call();
      const bool dense = std::string(what).rfind("dense", 0) == 0;
      EXPECT_LT(relative_l2_error(out, dense ? dense_ref : separable_ref), kTolerance)
          << to_string(b) << " " << what;
    }
  }
}

}  // namespace
}  // namespace ndconv::test
