// The adaptive filter's CPU stages in slabs (engine/adaptive/slab_stages.h) against the same
// stages on whole volumes (structure_tensor, relax_tensor, control_tensor, reconstruct): bit for
// bit, with slabs forced down to one or a few planes, in 2D, 3D and true 4D, for each boundary
// that the slabs take, into a dense output (which then holds a tensor component until the
// reconstruction) and into a strided one; and adaptive_filter's memory estimate against the slab
// plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/adaptive/slab_stages.h"
#include "ndconv/adaptive.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

// Bytes of the float values that differ bit for bit (so -0 against +0 or two NaNs count).
int64_t differing_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return -1;
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i)
    n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

struct SlabCase {
  int dims;
  Index extent;
  Boundary boundary;
  double relaxation;
  double blend;
};

std::string case_name(const ::testing::TestParamInfo<SlabCase>& info) {
  const SlabCase& c = info.param;
  static const char* names[] = {"Zero", "Replicate", "Mirror", "Periodic", "Reflect", "Constant"};
  return std::to_string(c.dims) + "D_" + names[static_cast<int>(c.boundary)] + "_relax" +
         std::to_string(static_cast<int>(c.relaxation * 10)) + "_blend" +
         std::to_string(static_cast<int>(c.blend * 100)) + "_" + std::to_string(info.index);
}

class AdaptiveSlabs : public ::testing::TestWithParam<SlabCase> {};

TEST_P(AdaptiveSlabs, SlabsGiveTheWholeImageStagesBitForBit) {
  const SlabCase& sc = GetParam();
  const int dims = sc.dims;
  const Index n = sc.extent;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  int64_t voxels = 1;
  for (int a = 0; a < dims; ++a)
    voxels *= n[a];
  // Speckle-like 8-bit values on a bright block, so that structure varies along every axis.
  std::vector<float> values = random_values(voxels, seed);
  for (int64_t v = 0; v < voxels; ++v) {
    int64_t rest = v;
    bool inside = true;
    for (int a = 0; a < dims; ++a) {
      const int64_t i = rest % n[a];
      rest /= n[a];
      inside = inside && i > n[a] / 4 && i < 3 * n[a] / 4;
    }
    values[v] = std::floor((values[v] + 1.0f) * (inside ? 100.0f : 30.0f));
  }
  const ConstVolumeView input = as_const(make_view(values.data(), dims, n));

  AdaptiveParameters parameters = adaptive_preset(AdaptivePreset::Echo);
  parameters.quadrature.size = dims == 4 ? 5 : 7;
  parameters.reconstruction.size = dims == 4 ? 5 : 7;
  parameters.relaxation_sigma = sc.relaxation;
  parameters.blend = sc.blend;
  Options options;
  options.backend = Backend::Cpu;
  options.boundary = sc.boundary;
  options.threads = 2;
  const auto quadrature = design_quadrature_filters(dims, parameters.quadrature);
  const auto reconstruction = design_reconstruction_filters(dims, parameters.reconstruction);

  // The whole-image stages.
  std::vector<std::vector<float>> tensor = structure_tensor(input, quadrature, options);
  relax_tensor(tensor, dims, n, parameters.relaxation_sigma, options);
  control_tensor(tensor, dims, parameters, options.threads);
  std::vector<float> whole(static_cast<size_t>(voxels));
  reconstruct(input, tensor, reconstruction, parameters.blend, make_view(whole.data(), dims, n),
              options);

  // Slabs of one plane, of a few planes, and the default (one slab for a volume this small).
  const int axis = dims == 2 ? 1 : 2;
  int64_t plane_bytes = 4;
  for (int a = 0; a < dims; ++a)
    plane_bytes *= a == axis ? 1 : n[a];
  for (const double slab_bytes : {1.0, 60.0 * plane_bytes, 0.0}) {
    SCOPED_TRACE("slab bytes " + std::to_string(slab_bytes));
    const detail::CpuSlabPlan plan = detail::cpu_slab_plan(dims, n, parameters, slab_bytes);
    if (slab_bytes == 1.0) {
      EXPECT_EQ(plan.quadrature, 1);
      EXPECT_EQ(plan.reconstruction, 1);
      EXPECT_EQ(plan.relaxation, std::max<int64_t>(1, std::min(plan.halo, n[axis])));
    }
    for (const bool strided : {false, true}) {
      SCOPED_TRACE(strided ? "strided output" : "dense output (holds a tensor component)");
      std::vector<float> dense(static_cast<size_t>(voxels), std::nanf(""));
      StridedBuffer gapped(dims, n, 2);
      const VolumeView out = strided ? gapped.view : make_view(dense.data(), dims, n);
      AdaptiveReport report;
      detail::filter_volume_cpu_slabs(input, out, parameters, options, quadrature, reconstruction,
                                      {0.25, 0.25, 0.25, 0.25}, report, slab_bytes);
      const std::vector<float> got = strided ? gapped.values() : dense;
      EXPECT_EQ(differing_bits(got, whole), 0);
      if (strided) {
        EXPECT_EQ(gapped.touched_gaps(), 0);
      }
      EXPECT_EQ(report.stage_seconds.size(), 4u);
    }
  }

  // The output may not overlap the input (the reconstruction reads around each slab it writes),
  // and the input is left as it was.
  {
    const std::vector<float> before = values;
    EXPECT_THROW(adaptive_filter(input, make_view(values.data(), dims, n), parameters, options),
                 InvalidArgument);
    EXPECT_EQ(differing_bits(values, before), 0);
  }

  // adaptive_filter takes the slabs on the CPU.
  std::vector<float> filtered(static_cast<size_t>(voxels));
  adaptive_filter(input, make_view(filtered.data(), dims, n), parameters, options);
  EXPECT_EQ(differing_bits(filtered, whole), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AdaptiveSlabs,
    ::testing::Values(SlabCase{2, {23, 19, 1, 1}, Boundary::Replicate, 1.0, 0.0},
                      SlabCase{2, {23, 19, 1, 1}, Boundary::Mirror, 2.0, 0.3},
                      SlabCase{3, {14, 12, 17, 1}, Boundary::Replicate, 2.0, 0.0},
                      SlabCase{3, {14, 12, 17, 1}, Boundary::Zero, 1.0, 0.25},
                      SlabCase{3, {14, 12, 17, 1}, Boundary::Reflect, 0.0, 0.0},
                      SlabCase{4, {9, 8, 13, 5}, Boundary::Replicate, 2.0, 0.0},
                      SlabCase{4, {9, 8, 13, 5}, Boundary::Mirror, 1.0, 0.0},
                      SlabCase{4, {9, 8, 13, 5}, Boundary::Reflect, 1.0, 0.5},
                      SlabCase{4, {9, 8, 13, 5}, Boundary::Zero, 0.6, 0.0}),
    case_name);

// The largest magnitude found from the bounds is the first pass's largest x, bit for bit: on
// tensors of every kind (positive, indefinite, zero, one NaN voxel), both normalisations.
TEST(AdaptiveSlabs, TheLargestMagnitudeSkipsOnlyVoxelsThatCannotChangeIt) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  for (int dims = 2; dims <= 4; ++dims) {
    for (TensorNormalisation norm :
         {TensorNormalisation::LargestEigenvalue, TensorNormalisation::Norm}) {
      AdaptiveParameters parameters;
      parameters.normalisation = norm;
      const detail::ControlMapping mapping = detail::control_mapping(dims, parameters);
      const int m = dims * (dims + 1) / 2;
      const int64_t voxels = 5000;
      std::vector<std::vector<float>> t(m);
      for (int c = 0; c < m; ++c) {
        t[c] = random_values(voxels, seed + 7 * c + dims);
        for (int64_t v = 0; v < voxels; ++v) {
          // Diagonal components mostly positive; a few strong voxels; zeros.
          const bool diagonal =
              c == 0 || (dims >= 2 && c == dims) || c == m - 1 || (dims == 4 && c == 7);
          t[c][v] = (diagonal ? 1.5f + t[c][v] : t[c][v]) * (v % 997 == 3 ? 20.0f : 1.0f);
          if (v % 101 == 0)
            t[c][v] = 0;
        }
      }
      t[0][17] = std::nanf("");
      std::vector<std::vector<float>> copy = t, again = t;
      std::vector<float*> a, b;
      for (int c = 0; c < m; ++c) {
        a.push_back(t[c].data());
        b.push_back(copy[c].data());
      }
      std::vector<float> scratch(voxels), magnitude(voxels);
      const double all =
          detail::control_shape_pass(mapping, a.data(), magnitude.data(), voxels, 2, {}, 0.0, 1.0);
      const double bounded =
          detail::control_largest_magnitude(mapping, b.data(), scratch.data(), voxels, 0.0, 2);
      EXPECT_GT(all, 0.0);
      EXPECT_EQ(std::memcmp(&all, &bounded, sizeof(double)), 0)
          << dims << "D: " << all << " against " << bounded;
      // A larger value found before is kept.
      std::vector<float*> c_ptrs;
      for (auto& c : again)
        c_ptrs.push_back(c.data());
      EXPECT_EQ(detail::control_largest_magnitude(mapping, c_ptrs.data(), scratch.data(), voxels,
                                                  2 * all, 2),
                2 * all);
    }
  }
}

// The memory estimate counts the kept tensor less the component in the output, plus the slab
// buffers; with a periodic boundary (no slabs) the whole tensor and the relaxation's volumes.
TEST(AdaptiveSlabs, TheMemoryEstimateFollowsTheSlabPlan) {
  const AdaptiveParameters echo = adaptive_preset(AdaptivePreset::Echo);
  const Index extent{160, 160, 160, 10};
  const double volume_bytes = 4.0 * 160 * 160 * 160 * 10;
  const double volumes = adaptive_working_volumes(4, extent, echo);
  EXPECT_DOUBLE_EQ(volumes, detail::cpu_working_bytes(4, extent, echo, true) / volume_bytes);
  // Nine components and at most 160 MiB of buffers and filters.
  EXPECT_GT(volumes, 9.0);
  EXPECT_LT(volumes, 9.0 + 160.0 * (1 << 20) / volume_bytes);
  const double periodic = adaptive_working_volumes(4, extent, echo, false, Boundary::Periodic);
  EXPECT_GT(periodic, 13.0);
  EXPECT_LT(periodic, 13.5);
  // One 160^3 frame's share: five components and the slab buffers of a frame, over 10 frames.
  AdaptiveParameters frames = echo;
  frames.time_as_axis = false;
  const double frame = adaptive_working_volumes(4, extent, frames);
  EXPECT_GT(frame, 0.5);
  EXPECT_LT(frame, 1.5);
  EXPECT_DOUBLE_EQ(adaptive_working_volumes(4, extent, echo, true), 1.0);
}

}  // namespace
}  // namespace ndconv::test
