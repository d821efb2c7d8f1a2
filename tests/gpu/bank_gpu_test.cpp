// The GPU filter bank (src/cuda/bank/) against the CPU backend's bank and the float64 reference,
// and the whole adaptive filter on the GPU against the CPU: 2D, 3D and 4D, every boundary,
// filter counts that need one and several passes, each KO request, plain outputs and the
// weighted sum; the adaptive filter's stages on the device and through host memory (under a
// device memory cap). Skips with the reason without a usable GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "block_scales.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "scoped_env.h"
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
    for (Boundary boundary : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                              Boundary::Periodic, Boundary::Reflect})
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

// The adaptive filter on the CPU and on the GPU with the same parameters and options, on
// positive values (an echo-like intensity, so that the control tensor's normalisation is well
// conditioned) of volume(dims): the relative L2 error of the GPU's output; `gpu_report` receives
// the GPU's report.
double adaptive_gpu_against_cpu(int dims, uint64_t seed, const AdaptiveParameters& parameters,
                                Options options, AdaptiveReport& gpu_report) {
  const Index n = volume(dims);
  const int64_t voxels = count_of(dims, n);
  std::vector<float> values = random_values(voxels, seed);
  for (float& v : values)
    v = 2.0f + v;
  std::vector<float> cpu(voxels), gpu(voxels);
  poison(gpu);
  options.backend = Backend::Cpu;
  adaptive_filter(as_const(make_view(values.data(), dims, n)), make_view(cpu.data(), dims, n),
                  parameters, options);
  options.backend = Backend::Cuda;
  gpu_report = adaptive_filter(as_const(make_view(values.data(), dims, n)),
                               make_view(gpu.data(), dims, n), parameters, options);
  return relative_l2_error(gpu, std::vector<double>(cpu.begin(), cpu.end()));
}

// Default parameters, but 5^4 filters in 4D (true 4D): seconds, not minutes, of CPU time.
AdaptiveParameters adaptive_parameters(int dims) {
  AdaptiveParameters parameters;
  if (dims == 4) {
    parameters.quadrature.size = 5;
    parameters.reconstruction.size = 5;
  }
  return parameters;
}

bool has_note(const RunReport& report, const std::string& text) {
  for (const std::string& note : report.notes)
    if (note.find(text) != std::string::npos)
      return true;
  return false;
}

// Filters of 7 x 7 taps across the last axis's planes (3D 7^3, 4D 7 x 7 x 1 x 7) with KO 2 take the
// ring kernel where the device holds 3 of its blocks per SM (the note says which kernel ran; on
// compute capability 9 it must be the ring), against the float64 reference: plain outputs and
// the weighted sum, one and several passes (the last one partial), a last unit of one output, a
// column of one unit, partial tiles along x and axis 1, several positions along axis 2 (4D), and
// more units than resident blocks, so that a block's run crosses columns. KO 1 takes the plane
// kernel on the same problems.
TEST(GpuBank, SevenTapFiltersWalkTheLastAxisInARing) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const bool ring_expected = cuda_status().devices.at(0).compute_capability_major == 9;
  struct Case {
    int dims;
    Index n, k;
    int count;
    Boundary boundary;
  };
  const Case cases[] = {{3, {45, 37, 29, 1}, {7, 7, 7, 1}, 6, Boundary::Zero},
                        {3, {40, 35, 2, 1}, {7, 7, 7, 1}, 4, Boundary::Periodic},
                        {3, {40, 40, 300, 1}, {7, 7, 7, 1}, 6, Boundary::Mirror},
                        {3, {33, 20, 9, 1}, {7, 7, 5, 1}, 13, Boundary::Replicate},
                        {4, {37, 33, 3, 11}, {7, 7, 1, 7}, 5, Boundary::Mirror}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.dims) + "D " + std::to_string(c.n[0]) + " x " +
                 std::to_string(c.n[1]) + " x " + std::to_string(c.n[2]) + " x " +
                 std::to_string(c.n[3]) + ", " + std::to_string(c.count) + " filters");
    const int64_t voxels = count_of(c.dims, c.n);
    const std::vector<float> values = random_values(voxels, seed + c.n[2]);
    const ConstVolumeView input = make_view(values.data(), c.dims, c.n);
    FilterBank bank{c.dims, c.k, c.count, nullptr};
    std::vector<float> taps = random_values(bank.tap_count() * c.count, seed ^ c.n[0]);
    for (float& t : taps)
      t = 1.0f + 0.75f * t;
    bank.taps = taps.data();
    std::vector<std::vector<double>> refs;
    for (int f = 0; f < c.count; ++f)
      refs.push_back(reference_dense(
          input, DenseFilter{c.dims, bank.extent, taps.data() + f * bank.tap_count()},
          Operation::Convolution, c.boundary, OutputRegion::Same));
    const std::vector<float> weight_values = random_values(voxels * c.count, seed ^ 0x99);
    std::vector<ConstVolumeView> weights;
    std::vector<double> weighted_ref(voxels, 0.0);
    for (int f = 0; f < c.count; ++f) {
      weights.push_back(make_view(weight_values.data() + f * voxels, c.dims, c.n));
      for (int64_t i = 0; i < voxels; ++i)
        weighted_ref[i] += weight_values[f * voxels + i] * refs[f][i];
    }
    Options options;
    options.backend = Backend::Cuda;
    options.boundary = c.boundary;
    for (int ko : {0, 1}) {
      SCOPED_TRACE("KO request " + std::to_string(ko));
      options.expert.outputs_per_thread = ko;
      const bool ring = ring_expected && ko == 0;
      std::vector<std::vector<float>> outs(c.count, std::vector<float>(voxels));
      std::vector<VolumeView> views;
      for (auto& o : outs) {
        poison(o);
        views.push_back(make_view(o.data(), c.dims, c.n));
      }
      const RunReport report = filter_bank(input, bank, views, options);
      EXPECT_EQ(has_note(report, "as a ring"), ring);
      for (int f = 0; f < c.count; ++f)
        EXPECT_LT(relative_l2_error(outs[f], refs[f]), 1e-5) << "filter " << f;
      std::vector<float> sum(voxels);
      poison(sum);
      const RunReport weighted = filter_bank_weighted_sum(
          input, bank, weights, make_view(sum.data(), c.dims, c.n), options);
      EXPECT_EQ(has_note(weighted, "as a ring"), ring);
      EXPECT_LT(relative_l2_error(sum, weighted_ref), 1e-5) << "weighted sum";
      if (HasFailure())
        return;
    }
  }
}

// The whole filter with its stages kept on the device (the note says so), 2D, 3D and true 4D,
// every boundary.
TEST(GpuBank, AdaptiveFilterMatchesTheCpu) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4})
    for (Boundary boundary : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                              Boundary::Periodic, Boundary::Reflect}) {
      SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary));
      Options options;
      options.boundary = boundary;
      AdaptiveReport report;
      EXPECT_LT(
          adaptive_gpu_against_cpu(dims, seed + dims, adaptive_parameters(dims), options, report),
          1e-5);
      EXPECT_EQ(report.bank.backend, Backend::Cuda);
      EXPECT_EQ(report.quadrature_bank.backend, Backend::Cuda);
      EXPECT_TRUE(has_note(report.bank, "device-resident stages")) << "the stages left the device";
      ASSERT_EQ(report.stage_seconds.size(), 6u);  // the design and five stages
      EXPECT_EQ(report.stage_seconds[2].first, "quadrature bank and structure tensor");
      EXPECT_GT(report.quadrature_bank.seconds_compute, 0.0);
      EXPECT_GT(report.bank.seconds_compute, 0.0);
      if (HasFailure())
        return;
    }
}

// Without relaxation (the tensor stays in the slots the structure tensor wrote), with a blend
// with the input, and 4D frame by frame in 3D, on the device.
TEST(GpuBank, AdaptiveFilterWithoutRelaxationWithBlendFrameByFrame) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {3, 4}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    AdaptiveParameters parameters = adaptive_parameters(dims);
    parameters.relaxation_sigma = 0;
    parameters.blend = 0.3;
    parameters.time_as_axis = false;  // 4D: frame by frame
    Options options;
    options.boundary = Boundary::Mirror;
    AdaptiveReport report;
    EXPECT_LT(adaptive_gpu_against_cpu(dims, seed + dims, parameters, options, report), 1e-5);
    EXPECT_TRUE(has_note(report.bank, "device-resident stages"));
  }
}

// A device memory cap that holds the device-resident stages but not the quadrature bank's
// responses for the whole volume at once: the structure tensor in slabs along the last axis,
// each slab's tensor written into the whole tensor on the device (3D, 37 x 19 x 23: the input
// and 7 tensor slots take 8 volumes, a slab of 9 of the 23 planes 6.5 more: 3 slabs).
TEST(GpuBank, AdaptiveFilterOnTheDeviceInSlabs) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Options options;
  options.boundary = Boundary::Periodic;
  options.device_memory_cap = static_cast<size_t>(count_of(3, volume(3))) * sizeof(float) * 15;
  AdaptiveReport report;
  EXPECT_LT(adaptive_gpu_against_cpu(3, seed, adaptive_parameters(3), options, report), 1e-5);
  EXPECT_TRUE(has_note(report.bank, "device-resident stages"));
  EXPECT_GT(report.quadrature_bank.slabs, 1);
}

// Under a device memory cap too small for the device-resident stages they go through host memory
// (the note says so) and still match the CPU: the cap as an option in 3D, as
// NDCONV_DEVICE_MEMORY_CAP in 2D. The coarse orientation estimate also takes that path.
TEST(GpuBank, AdaptiveFilterFallsBackToHostStagesUnderAMemoryCap) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Six volumes: less than the resident stages hold at once (the input and m + 1 tensor slots:
  // 5 volumes in 2D, 8 in 3D, plus a stage's buffers), enough for the relaxation's chunks.
  auto six_volumes = [](int dims) {
    return static_cast<size_t>(count_of(dims, volume(dims))) * sizeof(float) * 6;
  };
  {
    SCOPED_TRACE("3D, Options::device_memory_cap");
    Options options;
    options.device_memory_cap = six_volumes(3);
    AdaptiveReport report;
    EXPECT_LT(adaptive_gpu_against_cpu(3, seed, adaptive_parameters(3), options, report), 1e-5);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    EXPECT_TRUE(has_note(report.bank, "stages through host memory"));
    EXPECT_FALSE(has_note(report.bank, "device-resident stages"));
  }
  {
    SCOPED_TRACE("2D, NDCONV_DEVICE_MEMORY_CAP");
    const ScopedEnv cap("NDCONV_DEVICE_MEMORY_CAP", std::to_string(six_volumes(2)).c_str());
    AdaptiveReport report;
    EXPECT_LT(adaptive_gpu_against_cpu(2, seed + 2, adaptive_parameters(2), Options{}, report),
              1e-5);
    EXPECT_TRUE(has_note(report.bank, "stages through host memory"));
  }
  {
    SCOPED_TRACE("3D, coarse orientation");
    AdaptiveParameters parameters = adaptive_parameters(3);
    parameters.orientation_downsampling = 2;
    AdaptiveReport report;
    EXPECT_LT(adaptive_gpu_against_cpu(3, seed + 3, parameters, Options{}, report), 1e-5);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    EXPECT_FALSE(has_note(report.bank, "device-resident stages"));
  }
}

// The normalising scale on the GPU: the largest over blocks' interiors (each block read with the
// structure tensor's halo) is the whole volume's bit for bit, and the filter given that scale
// gives the whole volume's bits, on the device-resident stages and through host memory (a device
// memory cap: run_control_tensor); a given scale of 0 leaves every gain 0.
TEST(GpuBank, AdaptiveScalesOfBlockInteriorsMakeTheWholeVolumes) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{37, 19, 41, 1};
  const std::vector<float> in = random_values(count_of(3, n), seed);
  const ConstVolumeView in_view = make_view(in.data(), 3, n);
  const int64_t halo = adaptive_reach(AdaptiveParameters{}).structure_tensor;
  for (const size_t cap : {size_t{0}, static_cast<size_t>(count_of(3, n)) * sizeof(float) * 6}) {
    SCOPED_TRACE(cap == 0 ? "device-resident stages" : "stages through host memory");
    Options options;
    options.backend = Backend::Cuda;
    options.device_memory_cap = cap;
    std::vector<float> whole(in.size()), given(in.size());
    poison(whole);
    poison(given);
    const AdaptiveReport report =
        adaptive_filter(in_view, make_view(whole.data(), 3, n), AdaptiveParameters{}, options);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    EXPECT_EQ(has_note(report.bank, "stages through host memory"), cap != 0);
    ASSERT_EQ(report.normalisation_scales.size(), 1u);
    const double scale = report.normalisation_scales[0];
    EXPECT_GT(scale, 0.0);
    EXPECT_EQ(adaptive_normalisation_scales(in_view, AdaptiveParameters{}, options),
              std::vector<double>{scale});
    const auto [largest, smallest] =
        block_scales(in_view, {{0, 14}, {14, 30}, {30, 41}}, halo, false, options);
    EXPECT_EQ(largest, scale);
    EXPECT_LT(smallest, scale);
    AdaptiveParameters with_scale;
    with_scale.normalisation_scale = scale;
    adaptive_filter(in_view, make_view(given.data(), 3, n), with_scale, options);
    EXPECT_EQ(std::memcmp(whole.data(), given.data(), whole.size() * sizeof(float)), 0);
    with_scale.normalisation_scale = smallest;
    adaptive_filter(in_view, make_view(given.data(), 3, n), with_scale, options);
    EXPECT_NE(std::memcmp(whole.data(), given.data(), whole.size() * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace ndconv::test
