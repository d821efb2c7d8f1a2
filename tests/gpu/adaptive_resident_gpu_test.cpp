// The parts of the adaptive filter's device-resident GPU stages (src/cuda/bank/resident.cu): the
// device padding against the host's bit for bit and the device-level separable smoothing against
// the CPU (the whole filter: bank_gpu_test.cpp). Skips with the reason without a usable GPU;
// built with the CUDA backend only.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "require_gpu.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/bank/bank_gpu.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "device_copies.h"
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

using cuda_backend::DeviceBuffer;

constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic, Boundary::Reflect};

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
    const int64_t voxels = c.volume[0] * c.volume[1] * c.volume[2] * c.volume[3];
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
        core::PaddedVolume host;
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
    const int64_t voxels = n[0] * n[1] * n[2] * n[3];
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

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
