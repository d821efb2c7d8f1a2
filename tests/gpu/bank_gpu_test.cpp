// The GPU filter bank (src/cuda/bank/) against the CPU backend's bank and the float64 reference,
// and the whole adaptive filter on the GPU against the CPU: 2D, 3D and 4D, every boundary,
// filter counts that need one and several passes, each KO request, plain outputs and the
// weighted sum. Skips with the reason without a usable GPU.
#include <gtest/gtest.h>

#include <string>

#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

Index volume(int dims) {
  switch (dims) {
    case 2:
      return {67, 41, 1, 1};
    case 3:
      return {37, 19, 23, 1};
    default:
      return {21, 9, 7, 13};
  }
}

Index filter(int dims) {
  switch (dims) {
    case 2:
      return {7, 5, 1, 1};
    case 3:
      return {5, 3, 7, 1};
    default:
      return {3, 5, 3, 5};
  }
}

int64_t count_of(int dims, const Index& n) {
  return make_view(static_cast<float*>(nullptr), dims, n).voxel_count();
}

TEST(GpuBank, MatchesTheFloat64ReferenceAndTheCpuBank) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4})
    for (Boundary boundary :
         {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic})
      for (int count : {3, 13}) {
        SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary) + ", " +
                     std::to_string(count) + " filters");
        const Index n = volume(dims);
        const int64_t voxels = count_of(dims, n);
        const std::vector<float> values = random_values(voxels, seed + dims);
        const ConstVolumeView input = make_view(values.data(), dims, n);
        FilterBank bank{dims, filter(dims), count, nullptr};
        std::vector<float> taps = random_values(bank.tap_count() * count, seed ^ 0x5eed);
        for (float& t : taps)
          t = 1.0f + 0.75f * t;  // positive taps: well conditioned sums (cpu_cases.h says why)
        bank.taps = taps.data();
        std::vector<std::vector<double>> refs;
        for (int f = 0; f < count; ++f)
          refs.push_back(reference_dense(
              input, DenseFilter{dims, bank.extent, taps.data() + f * bank.tap_count()},
              Operation::Convolution, boundary, OutputRegion::Same));
        const std::vector<float> weight_values = random_values(voxels * count, seed ^ 0x77);
        std::vector<ConstVolumeView> weights;
        std::vector<double> weighted_ref(voxels, 0.0);
        for (int f = 0; f < count; ++f) {
          weights.push_back(make_view(weight_values.data() + f * voxels, dims, n));
          for (int64_t i = 0; i < voxels; ++i)
            weighted_ref[i] += weight_values[f * voxels + i] * refs[f][i];
        }
        Options options;
        options.backend = Backend::Cuda;
        options.boundary = boundary;
        for (int ko : {0, 1, 2}) {
          SCOPED_TRACE("KO request " + std::to_string(ko));
          options.expert.outputs_per_thread = ko;
          std::vector<std::vector<float>> outs(count, std::vector<float>(voxels));
          std::vector<VolumeView> views;
          for (auto& o : outs) {
            poison(o);
            views.push_back(make_view(o.data(), dims, n));
          }
          const RunReport report = filter_bank(input, bank, views, options);
          EXPECT_EQ(report.backend, Backend::Cuda);
          for (int f = 0; f < count; ++f)
            EXPECT_LT(relative_l2_error(outs[f], refs[f]), 1e-5) << "filter " << f;
          std::vector<float> sum(voxels);
          poison(sum);
          filter_bank_weighted_sum(input, bank, weights, make_view(sum.data(), dims, n), options);
          EXPECT_LT(relative_l2_error(sum, weighted_ref), 1e-5) << "weighted sum";
          if (HasFailure())
            return;
        }
      }
}

// Every compiled width along x, on a volume of several tiles along x and axis 1 and an odd count
// of outputs along the last axis (a last tile of one output), with a last pass of one filter.
TEST(GpuBank, EveryWidthOnSeveralTiles) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{70, 45, 9, 1};
  const int64_t voxels = n[0] * n[1] * n[2];
  const std::vector<float> values = random_values(voxels, seed);
  const ConstVolumeView input = make_view(values.data(), 3, n);
  for (int width : {3, 5, 7, 9, 11, 13, 15}) {
    SCOPED_TRACE("width " + std::to_string(width));
    const int count = 5;
    FilterBank bank{3, {width, 3, 5, 1}, count, nullptr};
    std::vector<float> taps = random_values(bank.tap_count() * count, seed ^ width);
    for (float& t : taps)
      t = 1.0f + 0.75f * t;
    bank.taps = taps.data();
    std::vector<std::vector<float>> outs(count, std::vector<float>(voxels));
    std::vector<VolumeView> views;
    for (auto& o : outs) {
      poison(o);
      views.push_back(make_view(o.data(), 3, n));
    }
    Options options;
    options.backend = Backend::Cuda;
    options.boundary = Boundary::Mirror;
    EXPECT_EQ(filter_bank(input, bank, views, options).backend, Backend::Cuda);
    for (int f = 0; f < count; ++f)
      EXPECT_LT(
          relative_l2_error(
              outs[f], reference_dense(
                           input, DenseFilter{3, bank.extent, taps.data() + f * bank.tap_count()},
                           Operation::Convolution, Boundary::Mirror, OutputRegion::Same)),
          1e-5)
          << "filter " << f;
  }
}

// A width the GPU bank has no kernel for: refused where CUDA is required, the CPU under auto.
TEST(GpuBank, OtherWidthsTakeTheCpuUnderAuto) {
  NDCONV_REQUIRE_GPU();
  const Index n{20, 11, 6, 1};
  const std::vector<float> values = random_values(n[0] * n[1] * n[2], fresh_seed());
  std::vector<float> taps(4 * 3 * 3 * 2, 0.5f);
  const FilterBank bank{3, {4, 3, 3, 1}, 2, taps.data()};
  std::vector<float> a(values.size()), b(values.size());
  const std::vector<VolumeView> views{make_view(a.data(), 3, n), make_view(b.data(), 3, n)};
  Options options;
  options.backend = Backend::Cuda;
  EXPECT_THROW(filter_bank(make_view(values.data(), 3, n), bank, views, options), InvalidArgument);
  options.backend = Backend::Auto;
  EXPECT_EQ(filter_bank(make_view(values.data(), 3, n), bank, views, options).backend,
            Backend::Cpu);
}

TEST(GpuBank, AdaptiveFilterMatchesTheCpu) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4}) {
    const Index n = volume(dims);
    const int64_t voxels = count_of(dims, n);
    std::vector<float> values = random_values(voxels, seed + dims);
    for (float& v : values)
      v = 2.0f + v;
    AdaptiveParameters parameters;
    if (dims == 4) {
      parameters.quadrature.size = 5;
      parameters.reconstruction.size = 5;
    }
    std::vector<float> cpu(voxels), gpu(voxels);
    poison(gpu);
    Options options;
    options.backend = Backend::Cpu;
    adaptive_filter(as_const(make_view(values.data(), dims, n)), make_view(cpu.data(), dims, n),
                    parameters, options);
    options.backend = Backend::Cuda;
    const AdaptiveReport report =
        adaptive_filter(as_const(make_view(values.data(), dims, n)), make_view(gpu.data(), dims, n),
                        parameters, options);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    const std::vector<double> cpu_d(cpu.begin(), cpu.end());
    EXPECT_LT(relative_l2_error(gpu, cpu_d), 1e-5) << dims << "D";
  }
}

}  // namespace
}  // namespace ndconv::test
