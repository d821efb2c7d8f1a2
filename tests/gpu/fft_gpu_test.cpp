// The dense filters' FFT path (src/cuda/fft/) on the GPU: forced (DenseKernel::Fft) through the
// backend's host call for every boundary, correlation and convolution, `same` and `valid`, 2D and
// 3D, against the float64 reference with NaN-poisoned outputs on fresh random data; the accuracy
// test per voxel (max |error| / sum |w||x| against float64) on uniform and on dark data, no worse
// than the direct FP32 kernels on the same data; NaN and Inf inputs reaching exactly the outputs
// whose footprint holds them; the automatic choice and what the report says; the device entry
// point; the plans and spectra kept and released; a 4D volume refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "cuda/launch.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/memory.h"
#include "ndconv/plan.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

// The suite needs the CUDA runtime's headers (device buffers, the family's caches): without CUDA
// it has no test, as the other device-memory suites.
#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/fft/fft_launch.h"

namespace ndconv::test {
namespace {

using cuda_backend::DenseKernel;

constexpr double kTolerance = 1e-5;
// The FFT rounds its float64 result to float once: its per-voxel error may reach one rounding even
// where the direct kernels' is smaller.
constexpr double kOneRounding = 1.0 / (1 << 23);

std::string notes_of(const RunReport& r) {
  std::string notes;
  for (const std::string& n : r.notes)
    notes += n + "\n";
  return notes;
}

// The backend's host call on `p` with the kernel family and tuning given.
RunReport run_backend(const detail::CorrelationProblem& p, const Options& o, DenseKernel kernel,
                      const cuda_backend::Tuning& tuning = cuda_backend::Tuning{}) {
  cuda_backend::DenseKernelRequest request;
  request.kernel = kernel;
  RunReport r;
  r.backend = Backend::Cuda;
  cuda_backend::run_dense(p, o, r, request, tuning);
  return r;
}

// The direct FP32 kernels' result (checked against float64 by the dense suites): the reference of
// the tests whose filters are too large for the host's float64 reference to be quick.
std::vector<double> direct_result(const ConstVolumeView& in, const DenseFilter& f, Operation op,
                                  Boundary b) {
  std::vector<float> out(static_cast<size_t>(in.voxel_count()));
  poison(out);
  std::vector<float> flipped;
  const auto p = make_problem(in, make_view(out.data(), in.dims, in.extent), f, op,
                              OutputRegion::Same, b, flipped);
  run_backend(p, cuda_options(op, b, OutputRegion::Same), DenseKernel::Auto,
              cuda_backend::direct_kernels_tuning());
  return std::vector<double>(out.begin(), out.end());
}

TEST(CudaFft, ForcedFftMatchesTheReferenceForEveryRequest) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase shapes[] = {
      {2, {37, 23, 1, 1}, {3, 2, 1, 1}},    {2, {13, 9, 1, 1}, {17, 15, 1, 1}},
      {2, {100, 40, 1, 1}, {9, 7, 1, 1}},   {3, {19, 11, 13, 1}, {3, 3, 3, 1}},
      {3, {9, 7, 5, 1}, {11, 3, 9, 1}},     {3, {7, 1, 9, 1}, {1, 2, 4, 1}},
      {3, {24, 20, 16, 1}, {15, 13, 11, 1}}};
  for (const ShapeCase& s : shapes) {
    for_each_request(s, [&](Boundary b, Operation op, OutputRegion region) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
      const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
      const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
      const DenseFilter f{s.dims, s.filter, taps.data()};
      const Index out_extent = reference_output_extent(in_view, s.filter, region);
      std::vector<float> out(static_cast<size_t>(voxels(s.dims, out_extent)));
      poison(out);
      std::vector<float> flipped;
      const auto p = make_problem(in_view, make_view(out.data(), s.dims, out_extent), f, op, region,
                                  b, flipped);
      const RunReport r = run_backend(p, cuda_options(op, b, region), DenseKernel::Fft);
      const auto ref = reference_dense(in_view, f, op, b, region);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << s << " " << to_string(b) << " " << to_string(op) << " " << to_string(region)
          << " seed=" << seed;
      EXPECT_NE(notes_of(r).find("dense plan: fft "), std::string::npos) << notes_of(r);
    });
  }
}

// max over outputs of |got - ref| / sum |w||x|, ref and the sum in float64 (zero boundary, same).
double max_weighted_error(const std::vector<float>& got, const std::vector<float>& in,
                          const std::vector<float>& taps, const ShapeCase& s) {
  const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
  std::vector<float> abs_in(in.size()), abs_taps(taps.size());
  std::transform(in.begin(), in.end(), abs_in.begin(), [](float v) { return std::fabs(v); });
  std::transform(taps.begin(), taps.end(), abs_taps.begin(), [](float v) { return std::fabs(v); });
  const auto ref = reference_dense(in_view, {s.dims, s.filter, taps.data()}, Operation::Correlation,
                                   Boundary::Zero, OutputRegion::Same);
  const auto magnitude = reference_dense(
      make_view<const float>(abs_in.data(), s.dims, s.volume), {s.dims, s.filter, abs_taps.data()},
      Operation::Correlation, Boundary::Zero, OutputRegion::Same);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(got[i] - ref[i]) / magnitude[i]);
  }
  return worst;
}

// Nine voxels in ten below 1e-4, the rest up to 1, none exactly 0: an FP32 transform's error,
// global (about eps max|x| sum|w|), is far above these voxels' own sum |w||x|.
std::vector<float> dark_values(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) {
    const bool bright = u(rng) < 0.1f;
    do {
      x = u(rng) * (bright ? 1.0f : 1e-4f);
    } while (x == 0.0f);
  }
  return v;
}

TEST(CudaFft, PerVoxelAccuracyOnUniformAndDarkDataIsTheDirectKernels) {
  NDCONV_REQUIRE_GPU();
  // Small volumes: the float64 reference of a 21^3 filter costs the host 9261 taps per output.
  const ShapeCase shapes[] = {{3, {24, 22, 20, 1}, {15, 15, 15, 1}},
                              {3, {22, 20, 18, 1}, {21, 21, 21, 1}},
                              {2, {120, 100, 1, 1}, {31, 31, 1, 1}}};
  for (const ShapeCase& s : shapes) {
    for (bool dark : {false, true}) {
      const uint64_t seed = fresh_seed();
      const int64_t n = voxels(s.dims, s.volume);
      const std::vector<float> in = dark ? dark_values(n, seed) : random_values(n, seed);
      const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
      const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
      const DenseFilter f{s.dims, s.filter, taps.data()};
      double errors[2] = {0, 0};
      const DenseKernel kernels[2] = {DenseKernel::Auto, DenseKernel::Fft};
      for (int k = 0; k < 2; ++k) {
        std::vector<float> out(in.size());
        poison(out);
        std::vector<float> flipped;
        const auto p =
            make_problem(in_view, make_view(out.data(), s.dims, s.volume), f,
                         Operation::Correlation, OutputRegion::Same, Boundary::Zero, flipped);
        const RunReport r =
            run_backend(p, cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same),
                        kernels[k], cuda_backend::direct_kernels_tuning());
        EXPECT_EQ(notes_of(r).find("dense plan: fft ") != std::string::npos, k == 1) << notes_of(r);
        errors[k] = max_weighted_error(out, in, taps, s);
      }
      EXPECT_LE(errors[1], std::max(errors[0], kOneRounding))
          << s << (dark ? " dark" : " uniform") << " direct " << errors[0] << " seed=" << seed;
      EXPECT_LT(errors[0], 1e-5) << s << " seed=" << seed;
    }
  }
}

TEST(CudaFft, NanAndInfReachExactlyTheOutputsWhoseFootprintHoldsThem) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {40, 30, 20, 1}, {7, 5, 3, 1}};
  for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
    const uint64_t seed = fresh_seed();
    std::vector<float> in = random_values(voxels(3, s.volume), seed);
    in[(5 * 30 + 4) * 40 + 1] = std::numeric_limits<float>::quiet_NaN();
    in[(12 * 30 + 20) * 40 + 30] = std::numeric_limits<float>::infinity();
    in[(12 * 30 + 22) * 40 + 31] = -std::numeric_limits<float>::infinity();
    in[(19 * 30 + 29) * 40 + 39] = std::numeric_limits<float>::infinity();
    const std::vector<float> taps = random_values(voxels(3, s.filter), seed + 1);
    const ConstVolumeView in_view = make_view<const float>(in.data(), 3, s.volume);
    const DenseFilter f{3, s.filter, taps.data()};
    std::vector<float> out(in.size());
    poison(out);
    std::vector<float> flipped;
    const auto p = make_problem(in_view, make_view(out.data(), 3, s.volume), f,
                                Operation::Convolution, OutputRegion::Same, b, flipped);
    run_backend(p, cuda_options(Operation::Convolution, b, OutputRegion::Same), DenseKernel::Fft);
    const auto ref = reference_dense(in_view, f, Operation::Convolution, b, OutputRegion::Same);
    int64_t class_mismatches = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const bool same_class = std::isnan(ref[i])   ? std::isnan(out[i])
                              : std::isinf(ref[i]) ? out[i] == static_cast<float>(ref[i])
                                                   : std::isfinite(out[i]);
      class_mismatches += same_class ? 0 : 1;
    }
    EXPECT_EQ(class_mismatches, 0) << to_string(b) << " seed=" << seed;
    EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0) << to_string(b) << " seed=" << seed;
  }
}

TEST(CudaFft, AutoTakesTheFftForALargeFilterAndTheReportSaysWhy) {
  NDCONV_REQUIRE_GPU();
  // 31^3 on 48^3: an 80^3 transform against 29791 taps per output.
  const ShapeCase s{3, {48, 48, 48, 1}, {31, 31, 31, 1}};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(3, s.volume), seed);
  const std::vector<float> taps = random_values(voxels(3, s.filter), seed + 1);
  const ConstVolumeView in_view = make_view(in.data(), 3, s.volume);
  const DenseFilter f{3, s.filter, taps.data()};
  const std::vector<double> ref =
      direct_result(in_view, f, Operation::Convolution, Boundary::Reflect);
  // A first call: making the plans costs more than the FFT saves on 48^3 (the model's
  // plan_seconds), so the kernels run and say so; the public plan says the same before the call.
  release_cached_memory();
  const Options o = cuda_options(Operation::Convolution, Boundary::Reflect, OutputRegion::Same);
  FilterRequest request;
  request.kind = FilterKind::Dense;
  request.dims = 3;
  request.extent = s.volume;
  request.filter_extent = s.filter;
  request.options = o;
  const Plan first_plan = plan(request);
  EXPECT_NE(first_plan.method.find("with its plans made"), std::string::npos) << first_plan.text();
  std::vector<float> out(in.size());
  poison(out);
  const RunReport first = filter_dense(in_view, f, make_view(out.data(), 3, s.volume), o);
  EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "seed=" << seed;
  EXPECT_NE(notes_of(first).find("with its plans made"), std::string::npos) << notes_of(first);
  EXPECT_EQ(notes_of(first).find("dense plan: fft "), std::string::npos) << notes_of(first);
  // The same shape and filter again (a batch): the model counts the plans and the spectrum once,
  // so the FFT runs, and makes them; a third call finds them kept.
  poison(out);
  const RunReport r = filter_dense(in_view, f, make_view(out.data(), 3, s.volume), o);
  EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "seed=" << seed;
  EXPECT_NE(notes_of(r).find("dense plan: fft "), std::string::npos) << notes_of(r);
  EXPECT_NE(notes_of(r).find("asked before"), std::string::npos) << notes_of(r);
  EXPECT_NE(notes_of(r).find("against direct"), std::string::npos) << notes_of(r);
  poison(out);
  const RunReport third = filter_dense(in_view, f, make_view(out.data(), 3, s.volume), o);
  EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "seed=" << seed;
  EXPECT_NE(notes_of(third).find("dense plan: fft "), std::string::npos) << notes_of(third);
  EXPECT_EQ(notes_of(third).find("asked before"), std::string::npos) << notes_of(third);

  // A forced KO asks for the direct kernels; non-finite taps keep them too.
  Options forced = cuda_options(Operation::Convolution, Boundary::Reflect, OutputRegion::Same);
  forced.expert.outputs_per_thread = 4;
  const RunReport rk = filter_dense(in_view, f, make_view(out.data(), 3, s.volume), forced);
  EXPECT_EQ(notes_of(rk).find("dense plan: fft "), std::string::npos) << notes_of(rk);
  // The engine refuses non-finite taps; the backend's choice keeps them off the transform.
  std::vector<float> nan_taps = taps;
  nan_taps[7] = std::numeric_limits<float>::quiet_NaN();
  poison(out);
  std::vector<float> nan_flipped;
  const auto p =
      make_problem(in_view, make_view(out.data(), 3, s.volume), {3, s.filter, nan_taps.data()},
                   Operation::Convolution, OutputRegion::Same, Boundary::Reflect, nan_flipped);
  const RunReport rn = run_backend(p, o, DenseKernel::Auto);
  EXPECT_NE(notes_of(rn).find("a tap is not finite"), std::string::npos) << notes_of(rn);
  EXPECT_THROW(run_backend(p, o, DenseKernel::Fft), InvalidArgument);
}

TEST(CudaFft, DeviceEntryPointTakesTheFftOnTheCallersStream) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {48, 48, 48, 1}, {31, 31, 31, 1}};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(3, s.volume), seed);
  const std::vector<float> taps = random_values(voxels(3, s.filter), seed + 1);
  const size_t bytes = in.size() * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_out, 0xff, bytes), cudaSuccess);  // NaN
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  Options o;
  o.boundary = Boundary::Replicate;
  const DenseFilter f{3, s.filter, taps.data()};
  // The FFT forced once on this shape and filter (plans and spectrum kept), then the entry point's
  // automatic choice takes it.
  std::vector<float> flipped;
  const auto forced =
      make_problem(make_view<const float>(d_in, 3, s.volume), make_view(d_out, 3, s.volume), f,
                   o.operation, OutputRegion::Same, o.boundary, flipped);
  cuda_backend::DenseKernelRequest request;
  request.kernel = DenseKernel::Fft;
  cuda_backend::launch_dense_device(forced, request, 0, stream);
  const RunReport r = filter_dense_device(make_view<const float>(d_in, 3, s.volume), f,
                                          make_view(d_out, 3, s.volume), o, stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> out(in.size());
  ASSERT_EQ(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaStreamDestroy(stream);
  cudaFree(d_in);
  cudaFree(d_out);
  const std::vector<double> ref = direct_result(make_view<const float>(in.data(), 3, s.volume), f,
                                                Operation::Convolution, Boundary::Replicate);
  EXPECT_LT(relative_l2_error(out, ref), kTolerance) << "seed=" << seed;
  EXPECT_NE(notes_of(r).find("dense plan: fft "), std::string::npos) << notes_of(r);
}

TEST(CudaFft, PlansAndSpectraAreKeptAndReleased) {
  NDCONV_REQUIRE_GPU();
  release_cached_memory();
  EXPECT_EQ(cuda_backend::fft_caches().idle_plans, 0u);
  EXPECT_EQ(cuda_backend::fft_caches().spectra, 0u);
  const ShapeCase s{3, {40, 40, 40, 1}, {9, 9, 9, 1}};
  const std::vector<float> in = random_values(voxels(3, s.volume), fresh_seed());
  std::vector<float> taps = random_values(voxels(3, s.filter), fresh_seed());
  std::vector<float> out(in.size());
  for (int call = 0; call < 3; ++call) {
    if (call == 2)
      taps[0] += 1.0f;  // another filter: a second spectrum
    std::vector<float> flipped;
    const auto p =
        make_problem(make_view(in.data(), 3, s.volume), make_view(out.data(), 3, s.volume),
                     {3, s.filter, taps.data()}, Operation::Correlation, OutputRegion::Same,
                     Boundary::Zero, flipped);
    run_backend(p, cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same),
                DenseKernel::Fft);
    const cuda_backend::FftCaches kept = cuda_backend::fft_caches();
    // The plans the choice made for the shape's work area are the launch's: one pair, one size.
    EXPECT_EQ(kept.idle_plans, 1u);
    EXPECT_EQ(kept.work_areas, 1u);
    EXPECT_EQ(kept.spectra, call == 2 ? 2u : 1u) << call;
    EXPECT_GT(kept.spectrum_bytes, 0u);
  }
  EXPECT_GE(cached_memory().device_bytes, cuda_backend::fft_caches().spectrum_bytes);
  release_cached_memory();
  EXPECT_EQ(cuda_backend::fft_caches().idle_plans, 0u);
  EXPECT_EQ(cuda_backend::fft_caches().spectra, 0u);
  EXPECT_EQ(cuda_backend::fft_caches().work_areas, 0u);
}

TEST(CudaFft, FourDimensionsAreRefusedWhenForcedAndDirectInAuto) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{4, {9, 5, 7, 6}, {3, 3, 3, 3}};
  const std::vector<float> in = random_values(voxels(4, s.volume), fresh_seed());
  const std::vector<float> taps = random_values(voxels(4, s.filter), fresh_seed());
  std::vector<float> out(in.size());
  std::vector<float> flipped;
  const auto p = make_problem(make_view(in.data(), 4, s.volume), make_view(out.data(), 4, s.volume),
                              {4, s.filter, taps.data()}, Operation::Correlation,
                              OutputRegion::Same, Boundary::Zero, flipped);
  const Options o = cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same);
  EXPECT_THROW(run_backend(p, o, DenseKernel::Fft), InvalidArgument);
  const RunReport r = run_backend(p, o, DenseKernel::Auto);
  EXPECT_EQ(notes_of(r).find("dense plan: fft "), std::string::npos) << notes_of(r);
}

}  // namespace
}  // namespace ndconv::test

#endif  // NDCONV_HAVE_CUDA
