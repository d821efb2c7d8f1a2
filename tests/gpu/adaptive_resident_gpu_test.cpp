// The adaptive filter's device-resident GPU stages (src/cuda/bank/resident.cu): the device padding
// against the host's bit for bit, the device-level separable smoothing against the CPU, the
// whole filter against the CPU pipeline in 2D, 3D and true 4D for every boundary, and the
// fallback through host memory under a device memory cap (the option and
// NDCONV_DEVICE_MEMORY_CAP) or with the coarse orientation estimate. Skips with the reason
// without a usable GPU; built with the CUDA backend only.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "require_gpu.h"
#include "scoped_env.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/bank/bank_gpu.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

using cuda_backend::DeviceBuffer;

constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic};

int64_t count_of(int dims, const Index& n) {
  return make_view(static_cast<float*>(nullptr), dims, n).voxel_count();
}

DeviceBuffer to_device(const std::vector<float>& host) {
  DeviceBuffer d(host.size());
  NDCONV_CUDA_CHECK(
      cudaMemcpy(d.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> to_host(const DeviceBuffer& d, size_t floats) {
  std::vector<float> host(floats);
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  NDCONV_CUDA_CHECK(
      cudaMemcpy(host.data(), d.get(), floats * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

bool has_note(const RunReport& report, const std::string& text) {
  for (const std::string& note : report.notes)
    if (note.find(text) != std::string::npos)
      return true;
  return false;
}

// Volumes with an axis shorter than the filter (the boundary maps indices more than one extent
// away) and a filter extent per axis; 4D with a slab of the last axis.
struct PadCase {
  int dims;
  Index volume;
  Index filter;
};

TEST(GpuAdaptiveResident, DevicePaddingEqualsTheHostPaddingBitForBit) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PadCase cases[] = {{2, {37, 11, 1, 1}, {7, 5, 1, 1}},
                           {3, {41, 3, 9, 1}, {9, 7, 5, 1}},
                           {4, {19, 6, 2, 8}, {3, 5, 7, 5}}};
  for (const PadCase& c : cases) {
    const int64_t voxels = count_of(c.dims, c.volume);
    std::vector<float> values = random_values(voxels, seed + c.dims);
    // Values whose bits a conversion would change: a NaN, infinities, a negative zero.
    values[0] = std::numeric_limits<float>::quiet_NaN();
    values[1] = std::numeric_limits<float>::infinity();
    values[voxels / 2] = -std::numeric_limits<float>::infinity();
    values[voxels - 1] = -0.0f;
    const DeviceBuffer d_values = to_device(values);
    const int last = c.dims - 1;
    // The whole output, and a slab of it along the last axis (the quadrature stage's slabs).
    for (int64_t first : {int64_t{0}, c.volume[last] / 2})
      for (Boundary boundary : kBoundaries) {
        SCOPED_TRACE(std::to_string(c.dims) + "D, " + to_string(boundary) + ", first plane " +
                     std::to_string(first));
        detail::BankProblem p;
        p.input = make_view<const float>(values.data(), c.dims, c.volume);
        p.filter_extent = c.filter;
        p.count = 5;
        p.boundary = boundary;
        p.output_extent = c.volume;
        p.output_extent[last] = c.volume[last] - first;
        for (int a = 0; a < c.dims; ++a)
          p.offset[a] = -(c.filter[a] / 2) + (a == last ? first : 0);
        const cuda_bank::BankLaunch l = cuda_bank::plan_bank(p, 0);
        cpu::PaddedVolume host;
        cuda_bank::pad_bank_input(p, l, 1, {}, host);

        const size_t floats = static_cast<size_t>(l.padded_count());
        DeviceBuffer d_padded(floats);
        NDCONV_CUDA_CHECK(cudaMemset(d_padded.get(), 0xff, floats * sizeof(float)));  // NaNs
        detail::BankProblem on_device = p;
        on_device.input = make_view<const float>(d_values.get(), c.dims, c.volume);
        cuda_bank::pad_bank_input_device(on_device, l, d_padded.get(), nullptr);
        const std::vector<float> device = to_host(d_padded, floats);
        EXPECT_EQ(std::memcmp(device.data(), host.storage.get(), floats * sizeof(float)), 0);
        if (HasFailure())
          return;
      }
  }
}

// The device-level separable smoothing (launch_same_separable_device) against the CPU's
// filter_separable with the same Gaussian, on one stream, every boundary.
TEST(GpuAdaptiveResident, DeviceSeparableSmoothingMatchesTheCpu) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4}) {
    const Index n =
        dims == 2 ? Index{53, 29, 1, 1} : (dims == 3 ? Index{31, 17, 12, 1} : Index{18, 11, 9, 7});
    const int64_t voxels = count_of(dims, n);
    const std::vector<float> values = random_values(voxels, seed + dims);
    std::array<double, kMaxDims> sigmas{0, 0, 0, 0};
    for (int a = 0; a < dims; ++a)
      sigmas[a] = 1.0 + 0.25 * a;
    const SeparableFilter gaussian = gaussian_filter(dims, sigmas, 3.0);
    const DeviceBuffer d_in = to_device(values);
    DeviceBuffer d_out(static_cast<size_t>(voxels));
    for (Boundary boundary : kBoundaries) {
      SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary));
      Options cpu;
      cpu.backend = Backend::Cpu;
      cpu.boundary = boundary;
      std::vector<float> expected(voxels);
      filter_separable(make_view(values.data(), dims, n), gaussian,
                       make_view(expected.data(), dims, n), cpu);
      const detail::SeparableProblem problem =
          cuda_backend::same_region_separable(make_view<const float>(d_in.get(), dims, n),
                                              make_view(d_out.get(), dims, n), gaussian, boundary);
      DeviceBuffer scratch(cuda_backend::separable_scratch_floats(problem));
      NDCONV_CUDA_CHECK(cudaMemset(d_out.get(), 0xff, voxels * sizeof(float)));  // NaNs
      cuda_backend::Stream stream;
      cuda_backend::launch_same_separable_device(make_view<const float>(d_in.get(), dims, n),
                                                 make_view(d_out.get(), dims, n), gaussian,
                                                 boundary, scratch.get(), 0, stream.get());
      stream.synchronize();
      const std::vector<float> got = to_host(d_out, static_cast<size_t>(voxels));
      EXPECT_LT(relative_l2_error(got, std::vector<double>(expected.begin(), expected.end())),
                1e-5);
    }
  }
}

Index adaptive_volume(int dims) {
  switch (dims) {
    case 2:
      return {67, 41, 1, 1};
    case 3:
      return {37, 19, 23, 1};
    default:
      return {21, 9, 7, 13};
  }
}

// Positive values (an echo-like intensity), so that the control tensor's normalisation is well
// conditioned.
std::vector<float> adaptive_input(int dims, uint64_t seed) {
  std::vector<float> values = random_values(count_of(dims, adaptive_volume(dims)), seed);
  for (float& v : values)
    v = 2.0f + v;
  return values;
}

// The filter on the CPU and on the GPU with the same parameters and boundary: the relative L2
// error of the GPU's output; `gpu_report` receives the GPU's report.
double gpu_against_cpu(int dims, const std::vector<float>& values,
                       const AdaptiveParameters& parameters, Options options,
                       AdaptiveReport& gpu_report) {
  const Index n = adaptive_volume(dims);
  const int64_t voxels = count_of(dims, n);
  std::vector<float> cpu(voxels), gpu(voxels);
  poison(gpu);
  options.backend = Backend::Cpu;
  adaptive_filter(make_view(values.data(), dims, n), make_view(cpu.data(), dims, n), parameters,
                  options);
  options.backend = Backend::Cuda;
  gpu_report = adaptive_filter(make_view(values.data(), dims, n), make_view(gpu.data(), dims, n),
                               parameters, options);
  return relative_l2_error(gpu, std::vector<double>(cpu.begin(), cpu.end()));
}

AdaptiveParameters small_filters(int dims) {
  AdaptiveParameters parameters;
  if (dims == 4) {  // true 4D with 5^4 filters: seconds, not minutes, of CPU time
    parameters.quadrature.size = 5;
    parameters.reconstruction.size = 5;
  }
  return parameters;
}

TEST(GpuAdaptiveResident, MatchesTheCpuPipelineEveryBoundary) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {2, 3, 4}) {
    const std::vector<float> values = adaptive_input(dims, seed + dims);
    for (Boundary boundary : kBoundaries) {
      SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary));
      Options options;
      options.boundary = boundary;
      AdaptiveReport report;
      EXPECT_LT(gpu_against_cpu(dims, values, small_filters(dims), options, report), 1e-5);
      EXPECT_EQ(report.bank.backend, Backend::Cuda);
      EXPECT_EQ(report.quadrature_bank.backend, Backend::Cuda);
      EXPECT_TRUE(has_note(report.bank, "device-resident")) << "the stages left the device";
      ASSERT_EQ(report.stage_seconds.size(), 6u);  // the design and five stages
      EXPECT_EQ(report.stage_seconds[2].first, "quadrature bank and structure tensor");
      EXPECT_GT(report.quadrature_bank.seconds_compute, 0.0);
      EXPECT_GT(report.bank.seconds_compute, 0.0);
      if (HasFailure())
        return;
    }
  }
}

// Without relaxation (the tensor stays in the slots the structure tensor wrote), with a blend
// with the input, and 4D filtered frame by frame in 3D.
TEST(GpuAdaptiveResident, MatchesTheCpuWithoutRelaxationWithBlendAndFrameByFrame) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims : {3, 4}) {
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::vector<float> values = adaptive_input(dims, seed + dims);
    AdaptiveParameters parameters = small_filters(dims);
    parameters.relaxation_sigma = 0;
    parameters.blend = 0.3;
    parameters.time_as_axis = false;  // 4D: frame by frame
    Options options;
    options.boundary = Boundary::Mirror;
    AdaptiveReport report;
    EXPECT_LT(gpu_against_cpu(dims, values, parameters, options, report), 1e-5);
    EXPECT_TRUE(has_note(report.bank, "device-resident"));
  }
}

// Under a device memory cap too small for the resident working set the stages go through host
// memory (the note says so) and still match the CPU: the cap as an option in 3D, as
// NDCONV_DEVICE_MEMORY_CAP in 2D. The coarse orientation estimate also takes that path.
TEST(GpuAdaptiveResident, FallsBackToHostStagesUnderAMemoryCap) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Six volumes: less than the resident stages hold at once (the input and m + 1 tensor slots,
  // 5 volumes in 2D, 8 in 3D, plus a stage's buffers), enough for the separable relaxation's
  // chunks.
  auto six_volumes = [](int dims) {
    return static_cast<size_t>(count_of(dims, adaptive_volume(dims))) * sizeof(float) * 6;
  };
  {
    SCOPED_TRACE("3D, Options::device_memory_cap");
    const std::vector<float> values = adaptive_input(3, seed);
    Options options;
    options.device_memory_cap = six_volumes(3);
    AdaptiveReport report;
    EXPECT_LT(gpu_against_cpu(3, values, small_filters(3), options, report), 1e-5);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    EXPECT_TRUE(has_note(report.bank, "stages through host memory"));
    EXPECT_FALSE(has_note(report.bank, "device-resident"));
  }
  {
    SCOPED_TRACE("2D, NDCONV_DEVICE_MEMORY_CAP");
    const std::vector<float> values = adaptive_input(2, seed + 2);
    const ScopedEnv cap("NDCONV_DEVICE_MEMORY_CAP", std::to_string(six_volumes(2)).c_str());
    AdaptiveReport report;
    EXPECT_LT(gpu_against_cpu(2, values, small_filters(2), Options{}, report), 1e-5);
    EXPECT_TRUE(has_note(report.bank, "stages through host memory"));
  }
  {
    SCOPED_TRACE("3D, coarse orientation");
    const std::vector<float> values = adaptive_input(3, seed + 3);
    AdaptiveParameters parameters = small_filters(3);
    parameters.orientation_downsampling = 2;
    AdaptiveReport report;
    EXPECT_LT(gpu_against_cpu(3, values, parameters, Options{}, report), 1e-5);
    EXPECT_EQ(report.bank.backend, Backend::Cuda);
    EXPECT_FALSE(has_note(report.bank, "device-resident"));
  }
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
