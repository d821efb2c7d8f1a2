// The adaptive filter (ndconv/adaptive.h): filter design (directions, dual tensors, designed
// responses), each stage of the engine's pipeline against the float64 reference of
// adaptive_reference.h fed with the engine's previous stage (relative L2 <= 1e-5), the whole
// pipeline against the reference chain, and a quality test on a speckled ellipsoidal shell.
// Fresh random data (the seed is printed on failure), outputs poisoned with NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "adaptive_reference.h"
#include "block_scales.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

Index small_volume(int dims) {
  switch (dims) {
    case 2:
      return {23, 19, 1, 1};
    case 3:
      return {13, 11, 9, 1};
    default:
      return {8, 7, 6, 5};
  }
}

std::complex<double> response(const DesignedFilter& f, int dims, const std::array<double, 4>& u) {
  std::complex<double> h = 0;
  int64_t taps = static_cast<int64_t>(f.real.size());
  for (int64_t t = 0; t < taps; ++t) {
    int64_t r = t;
    double phase = 0;
    for (int a = 0; a < dims; ++a) {
      phase += u[a] * static_cast<double>(r % f.extent[a] - f.extent[a] / 2);
      r /= f.extent[a];
    }
    const std::complex<double> tap(f.real[t], f.imag.empty() ? 0.0 : f.imag[t]);
    h += tap * std::exp(std::complex<double>(0, -phase));
  }
  return h;
}

std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

class AdaptiveDesign : public ::testing::TestWithParam<int> {};

TEST_P(AdaptiveDesign, DirectionsAndDualTensors) {
  const int dims = GetParam();
  const auto q = quadrature_directions(dims);
  const size_t expected[] = {0, 0, 3, 6, 12};
  ASSERT_EQ(q.size(), expected[dims]);
  const auto r = reconstruction_directions(dims);
  ASSERT_EQ(r.size(), static_cast<size_t>(dims * (dims + 1) / 2));
  const double kk = static_cast<double>(q.size());
  const double a = dims * (dims + 2) / (2 * kk), b = dims / (2 * kk);
  const auto m = dual_tensors(dims, q);
  for (size_t k = 0; k < q.size(); ++k)
    for (int i = 0; i < dims; ++i)
      for (int j = 0; j < dims; ++j)
        EXPECT_NEAR(m[k][i * dims + j], a * q[k][i] * q[k][j] - (i == j ? b : 0.0), 1e-12);
  // sum_k <n_k n_k^T, X> M_k = X for a random symmetric X, for both sets.
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> uni(-1, 1);
  for (const auto& dirs : {q, r}) {
    const auto duals = dual_tensors(dims, dirs);
    Matrix x{};
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j)
        x[i * dims + j] = x[j * dims + i] = uni(rng);
    Matrix back{};
    for (size_t k = 0; k < dirs.size(); ++k) {
      double c = 0;
      for (int i = 0; i < dims; ++i)
        for (int j = 0; j < dims; ++j)
          c += dirs[k][i] * dirs[k][j] * x[i * dims + j];
      for (int e = 0; e < dims * dims; ++e)
        back[e] += c * duals[k][e];
    }
    for (int e = 0; e < dims * dims; ++e)
      EXPECT_NEAR(back[e], x[e], 1e-12);
  }
}

TEST_P(AdaptiveDesign, QuadratureFiltersMatchTheirIdealResponse) {
  const int dims = GetParam();
  const QuadratureDesign design;
  const auto filters = design_quadrature_filters(dims, design);
  for (const DesignedFilter& f : filters) {
    EXPECT_LT(f.dc_response, 1e-3);
    EXPECT_LT(f.relative_error, 0.10);
    // Along its direction at the centre frequency: the ideal response is 1; opposite: 0.
    std::array<double, 4> u{}, v{};
    for (int a = 0; a < dims; ++a) {
      u[a] = design.centre_frequency * f.direction[a];
      v[a] = -u[a];
    }
    EXPECT_NEAR(std::abs(response(f, dims, u)), 1.0, 0.1);
    EXPECT_LT(std::abs(response(f, dims, v)), 0.08);
    // Quadrature: even real part, odd imaginary part.
    const size_t n = f.real.size();
    for (size_t t = 0; t < n; ++t) {
      EXPECT_NEAR(f.real[t], f.real[n - 1 - t], 1e-6);
      EXPECT_NEAR(f.imag[t], -f.imag[n - 1 - t], 1e-6);
    }
  }
}

TEST_P(AdaptiveDesign, ReconstructionFiltersPassTheSignalForTheIdentity) {
  const int dims = GetParam();
  ReconstructionDesign design;
  design.size = dims == 4 ? 7 : 11;
  const auto filters = design_reconstruction_filters(dims, design);
  ASSERT_EQ(filters.size(), static_cast<size_t>(dims * (dims + 1) / 2 + 1));
  EXPECT_NEAR(filters[0].dc_response, 1.0, 1e-3);
  EXPECT_LT(filters[0].relative_error, 0.01);
  std::vector<std::array<double, kMaxDims>> dirs;
  for (size_t k = 1; k < filters.size(); ++k) {
    EXPECT_LT(filters[k].dc_response, 1e-3);
    EXPECT_LT(filters[k].relative_error, 0.2);
    dirs.push_back(filters[k].direction);
  }
  // C = I: LP + sum_k tr(M_k) HP_k is all-pass at frequencies inside the unit ball of radius pi.
  const auto duals = dual_tensors(dims, dirs);
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> uni(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::array<double, 4> u{};
    double norm = 0;
    for (int a = 0; a < dims; ++a) {
      u[a] = uni(rng);
      norm += u[a] * u[a];
    }
    const double rho = 0.8 * kPi * std::abs(uni(rng));
    for (int a = 0; a < dims; ++a)
      u[a] *= rho / std::sqrt(norm);
    std::complex<double> h = response(filters[0], dims, u);
    for (size_t k = 1; k < filters.size(); ++k) {
      double trace = 0;
      for (int i = 0; i < dims; ++i)
        trace += duals[k - 1][i * dims + i];
      h += trace * response(filters[k], dims, u);
    }
    worst = std::max(worst, std::abs(h - 1.0));
  }
  EXPECT_LT(worst, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Dims, AdaptiveDesign, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "D"; });

struct StageCase {
  int dims;
  Boundary boundary;
};

class AdaptiveStages : public ::testing::TestWithParam<std::tuple<int, Boundary>> {};

TEST_P(AdaptiveStages, EachStageMatchesTheFloat64Reference) {
  const auto [dims, boundary] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Index n = small_volume(dims);
  const int64_t voxels = count_of(dims, n);
  // An oblique wave (structure along every axis, so that T's off-diagonal components are not
  // small differences) plus noise; values never zero.
  std::vector<float> values = random_values(voxels, seed);
  for (int64_t v = 0; v < voxels; ++v) {
    double phase = 0;
    int64_t rest = v;
    for (int a = 0; a < dims; ++a) {
      phase += (0.5 + 0.15 * a) * static_cast<double>(rest % n[a]);
      rest /= n[a];
    }
    values[v] = static_cast<float>(2.0 + std::sin(phase) + 0.5 * values[v]);
  }
  const ConstVolumeView input = as_const(make_view(values.data(), dims, n));
  const std::vector<double> in = to_double(values);

  AdaptiveParameters parameters;
  parameters.reconstruction.size = dims == 4 ? 5 : 7;
  parameters.quadrature.size = dims == 4 ? 5 : 7;
  parameters.relaxation_sigma = 0.8;
  parameters.blend = 0.25;
  Options options;
  options.backend = Backend::Cpu;
  options.boundary = boundary;
  options.threads = 2;

  const auto quadrature = design_quadrature_filters(dims, parameters.quadrature);
  const auto reconstruction = design_reconstruction_filters(dims, parameters.reconstruction);

  // 1. Structure tensor.
  std::vector<std::vector<float>> tensor = structure_tensor(input, quadrature, options);
  const auto t_ref = reference_structure_tensor(in, dims, n, quadrature, boundary);
  ASSERT_EQ(tensor.size(), t_ref.size());
  for (size_t c = 0; c < tensor.size(); ++c)
    EXPECT_LT(relative_l2_error(tensor[c], t_ref[c]), 1e-5) << "structure tensor " << c;

  // 2. Relaxation (the reference's separable filtering, one axis at a time).
  std::vector<std::vector<double>> relaxed_ref;
  std::array<double, kMaxDims> sigmas{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    sigmas[a] = parameters.relaxation_sigma;
  const SeparableFilter gaussian = gaussian_filter(dims, sigmas, 3.0);
  for (auto& c : tensor)
    relaxed_ref.push_back(reference_separable_passes(as_const(make_view(c.data(), dims, n)),
                                                     gaussian, Operation::Correlation, boundary));
  relax_tensor(tensor, dims, n, parameters.relaxation_sigma, options);
  for (size_t c = 0; c < tensor.size(); ++c)
    EXPECT_LT(relative_l2_error(tensor[c], relaxed_ref[c]), 1e-5) << "relaxed " << c;

  // 3. Control tensor, both normalisations.
  for (TensorNormalisation norm :
       {TensorNormalisation::Norm, TensorNormalisation::LargestEigenvalue}) {
    parameters.normalisation = norm;
    std::vector<std::vector<double>> from;
    for (auto& c : tensor)
      from.push_back(to_double(c));
    const auto c_ref = reference_control_tensor(from, dims, parameters);
    std::vector<std::vector<float>> control = tensor;
    control_tensor(control, dims, parameters, 2);
    for (size_t c = 0; c < control.size(); ++c)
      EXPECT_LT(relative_l2_error(control[c], c_ref[c]), 1e-5) << "control " << c;
    if (norm == TensorNormalisation::LargestEigenvalue)
      tensor = control;
  }

  // 4. Reconstruction.
  std::vector<std::vector<double>> control_d;
  for (auto& c : tensor)
    control_d.push_back(to_double(c));
  const auto out_ref =
      reference_reconstruct(in, dims, n, control_d, reconstruction, parameters.blend, boundary);
  std::vector<float> out(voxels);
  poison(out);
  reconstruct(input, tensor, reconstruction, parameters.blend, make_view(out.data(), dims, n),
              options);
  EXPECT_LT(relative_l2_error(out, out_ref), 1e-5) << "reconstruction";

  // The whole pipeline against the reference chain from the input.
  auto chain = reference_structure_tensor(in, dims, n, quadrature, boundary);
  for (auto& c : chain) {
    std::vector<float> f(c.begin(), c.end());
    c = reference_separable_passes(as_const(make_view(f.data(), dims, n)), gaussian,
                                   Operation::Correlation, boundary);
  }
  chain = reference_control_tensor(chain, dims, parameters);
  const auto whole_ref =
      reference_reconstruct(in, dims, n, chain, reconstruction, parameters.blend, boundary);
  std::vector<float> whole(voxels);
  poison(whole);
  const AdaptiveReport report =
      adaptive_filter(input, make_view(whole.data(), dims, n), parameters, options);
  EXPECT_LT(relative_l2_error(whole, whole_ref), 1e-4) << "whole pipeline";
  EXPECT_EQ(report.stage_seconds.size(), 6u);

  // With the orientation estimated on the lowpass input subsampled by 2.
  if (dims == 4)
    return;  // 4 x 4 x 3 voxels leave too little for 5-tap orientation filters
  parameters.orientation_downsampling = 2;
  std::array<double, kMaxDims> one{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    one[a] = 1.0;
  const std::vector<double> lowpass = reference_separable_passes(
      input, gaussian_filter(dims, one, 3.0), Operation::Correlation, boundary);
  Index coarse{};
  const std::vector<double> sub = reference_subsample(lowpass, dims, n, coarse);
  auto coarse_chain = reference_structure_tensor(sub, dims, coarse, quadrature, boundary);
  std::array<double, kMaxDims> half{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    half[a] = parameters.relaxation_sigma / 2;
  for (auto& c : coarse_chain) {
    std::vector<float> f(c.begin(), c.end());
    c = reference_separable_passes(as_const(make_view(f.data(), dims, coarse)),
                                   gaussian_filter(dims, half, 3.0), Operation::Correlation,
                                   boundary);
  }
  coarse_chain = reference_control_tensor(coarse_chain, dims, parameters);
  for (auto& c : coarse_chain)
    c = reference_upsample(c, dims, coarse, n);
  const auto down_ref =
      reference_reconstruct(in, dims, n, coarse_chain, reconstruction, parameters.blend, boundary);
  poison(whole);
  adaptive_filter(input, make_view(whole.data(), dims, n), parameters, options);
  EXPECT_LT(relative_l2_error(whole, down_ref), 1e-4) << "whole pipeline, downsampled orientation";
}

INSTANTIATE_TEST_SUITE_P(AllCases, AdaptiveStages,
                         ::testing::Combine(::testing::Values(2, 3, 4),
                                            ::testing::Values(Boundary::Zero, Boundary::Replicate,
                                                              Boundary::Mirror, Boundary::Periodic,
                                                              Boundary::Reflect)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Boundary>>& info) {
                           return std::to_string(std::get<0>(info.param)) + "D_" +
                                  to_string(std::get<1>(info.param));
                         });

}  // namespace
TEST(AdaptivePresets, EchoAndDefaultByNameAndTheRangesRefuseBadValues) {
  EXPECT_EQ(parse_adaptive_preset("echo"), AdaptivePreset::Echo);
  EXPECT_EQ(parse_adaptive_preset("default"), AdaptivePreset::Default);
  EXPECT_THROW(parse_adaptive_preset("Echo"), InvalidArgument);
  const AdaptiveParameters echo = adaptive_preset(AdaptivePreset::Echo);
  EXPECT_EQ(echo.reconstruction.lowpass_sigma, 2.0);
  EXPECT_EQ(echo.reconstruction.size, 9);
  EXPECT_NO_THROW(validate_adaptive_parameters(echo));
  EXPECT_NO_THROW(validate_adaptive_parameters(adaptive_preset(AdaptivePreset::Default)));
  const auto refused = [](auto change) {
    AdaptiveParameters p;
    change(p);
    return [&] {
      try {
        validate_adaptive_parameters(p);
      } catch (const InvalidArgument&) {
        return true;
      }
      return false;
    }();
  };
  EXPECT_TRUE(
      refused([](AdaptiveParameters& p) { p.reconstruction.lowpass_sigma = std::nan(""); }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.relaxation_sigma = 11; }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.magnitude_sigma = 0; }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.eigen_alpha = 1; }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.blend = -0.1; }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.quadrature.size = 8; }));
  EXPECT_TRUE(refused([](AdaptiveParameters& p) { p.reconstruction.size = 17; }));
  EXPECT_FALSE(refused([](AdaptiveParameters& p) { p.relaxation_sigma = 0; }));
  // The whole filter refuses them before any work.
  std::vector<float> in(8 * 8 * 8, 1.0f), out(in.size(), std::nanf(""));
  AdaptiveParameters bad;
  bad.blend = 2;
  EXPECT_THROW(adaptive_filter(as_const(make_view(in.data(), 3, {8, 8, 8, 1})),
                               make_view(out.data(), 3, {8, 8, 8, 1}), bad, Options{}),
               InvalidArgument);
  EXPECT_TRUE(std::isnan(out[0]));
}

// The normalising scale (CPU): adaptive_normalisation_scales is the scale the filter used; the
// largest over blocks' interiors, each block read with the structure tensor's halo, is the whole
// volume's bit for bit, and the filter given it is the whole volume's, in slabs (replicate) and
// stage by stage on the whole volume (periodic); frame by frame, one scale per frame; bad boxes and
// scales are refused.
TEST(AdaptiveScale, BlockInteriorsMakeTheWholeVolumesScale) {
  const Index n{23, 17, 29, 1};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(23 * 17 * 29, seed);
  const ConstVolumeView in_view = make_view(in.data(), 3, n);
  const int64_t halo = adaptive_reach(AdaptiveParameters{}).structure_tensor;
  EXPECT_EQ(halo, 6);  // 7-tap quadrature filters (3) + the relaxation's sigma 1 at 3 sigma (3)
  for (Boundary b : {Boundary::Replicate, Boundary::Periodic}) {
    SCOPED_TRACE(std::string(to_string(b)) + " seed " + std::to_string(seed));
    Options o;
    o.backend = Backend::Cpu;
    o.boundary = b;
    std::vector<float> whole(in.size()), given(in.size());
    const AdaptiveReport report =
        adaptive_filter(in_view, make_view(whole.data(), 3, n), AdaptiveParameters{}, o);
    ASSERT_EQ(report.normalisation_scales.size(), 1u);
    const double scale = report.normalisation_scales[0];
    EXPECT_EQ(adaptive_normalisation_scales(in_view, AdaptiveParameters{}, o),
              std::vector<double>{scale});
    // Periodic: the whole volume with the box; else the block with its halo.
    const auto [largest, smallest] =
        block_scales(in_view, {{0, 9}, {9, 20}, {20, 29}}, halo, b == Boundary::Periodic, o);
    EXPECT_EQ(largest, scale);
    EXPECT_LT(smallest, scale);
    AdaptiveParameters with_scale;
    with_scale.normalisation_scale = scale;
    const AdaptiveReport again =
        adaptive_filter(in_view, make_view(given.data(), 3, n), with_scale, o);
    EXPECT_EQ(again.normalisation_scales, std::vector<double>{scale});
    EXPECT_EQ(std::memcmp(whole.data(), given.data(), whole.size() * sizeof(float)), 0);
    with_scale.normalisation_scale = 0.0;  // no structure anywhere: every gain 0
    adaptive_filter(in_view, make_view(given.data(), 3, n), with_scale, o);
    EXPECT_NE(std::memcmp(whole.data(), given.data(), whole.size() * sizeof(float)), 0);
  }
  // Frame by frame: one scale per frame, each the frame's own.
  const Index frames{11, 9, 8, 3};
  const std::vector<float> series = random_values(11 * 9 * 8 * 3, seed + 1);
  AdaptiveParameters by_frame;
  by_frame.time_as_axis = false;
  Options cpu;
  cpu.backend = Backend::Cpu;
  const std::vector<double> scales =
      adaptive_normalisation_scales(make_view(series.data(), 4, frames), by_frame, cpu);
  ASSERT_EQ(scales.size(), 3u);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(adaptive_normalisation_scales(
                  make_view(series.data() + t * 11 * 9 * 8, 3, Index{11, 9, 8, 1}), {}, cpu),
              std::vector<double>{scales[t]});
  }
  // Refused: a box outside the volume, an empty one, one with the coarse orientation; a negative
  // or infinite scale.
  AdaptiveParameters bad;
  bad.normalisation_start = {0, 0, 25, 0};
  bad.normalisation_extent = {0, 0, 5, 0};
  EXPECT_THROW(adaptive_normalisation_scales(in_view, bad, cpu), InvalidArgument);
  bad.normalisation_start = {0, 0, 29, 0};
  bad.normalisation_extent = {0, 0, 0, 0};
  EXPECT_THROW(adaptive_normalisation_scales(in_view, bad, cpu), InvalidArgument);
  bad = AdaptiveParameters{};
  bad.normalisation_extent = {0, 0, 5, 0};
  bad.orientation_downsampling = 2;
  EXPECT_THROW(adaptive_normalisation_scales(in_view, bad, cpu), InvalidArgument);
  std::vector<float> out(in.size());
  for (double scale : {-1.0, std::numeric_limits<double>::infinity()}) {
    AdaptiveParameters p;
    p.normalisation_scale = scale;
    EXPECT_THROW(adaptive_filter(in_view, make_view(out.data(), 3, n), p, cpu), InvalidArgument);
  }
}

}  // namespace ndconv::test
