// The tensor-core filter bank's two kernels on the GPU, each chosen through the policy
// (TensorCoreBankPolicy::wgmma): Hopper's wgmma kernel (wgmma_kernel.cuh, sm_90a; every compiled
// block shape) where the device runs it, and the mma.sync kernel (tensor_core_kernel.cuh, the
// reference) everywhere: the host emulation's values bit for bit (emulate_tensor_core_bank) on 3D
// and 4D extents that are no multiple of the tiles, one and two passes, outputs poisoned with NaN,
// a repeat run identical; and the product's choice: wgmma exactly where the device has compute
// capability 9.0 (this binary holds the sm_90a code), the notes saying which. Skips with the reason
// without a usable GPU; built with the CUDA backend only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "eight_bit_volumes.h"
#include "ndconv/engine.h"
#include "require_gpu.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/wgmma_bank.h"
#include "cuda/device_memory.h"
#include "device_copies.h"
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

using cuda_backend::DeviceBuffer;
using cuda_backend::TensorCoreBankPolicy;

// Extents (volume axes; 4D where n[3] > 1) and filters of a case.
struct Case {
  Index n;
  int count;
};

int dims_of(const Index& n) {
  return n[3] > 1 ? 4 : 3;
}

TensorCoreBankPolicy policy_of(bool wgmma, int shape = 0) {
  TensorCoreBankPolicy p;
  p.wgmma = wgmma;
  p.wgmma_shape_3d = std::min(shape, cuda_bank::wgmma_shape_count(false) - 1);
  p.wgmma_shape_4d = std::min(shape, cuda_bank::wgmma_shape_count(true) - 1);
  return p;
}

// A 3D bank of the quadrature banks' shape (7 x 7 x 7 canonical taps), what the wgmma kernel runs.
cuda_bank::TensorCoreGeometry quadrature_geometry() {
  cuda_bank::TensorCoreGeometry g;
  g.filter = {7, 7, 1, 7};
  g.count = 12;
  return g;
}

// Every compiled wgmma block shape (wgmma.cu), 3D and 4D alike.
int wgmma_shapes() {
  return std::max(cuda_bank::wgmma_shape_count(false), cuda_bank::wgmma_shape_count(true));
}

// Each case on the kernel `policy` takes: uniform 8-bit data, spread taps, the outputs poisoned
// with NaN; bit for bit the host emulation, a repeat run bit-identical.
void check_cases(const std::vector<Case>& cases, const TensorCoreBankPolicy& policy,
                 uint64_t seed) {
  NDCONV_CUDA_CHECK(cudaSetDevice(0));
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" +
                 std::to_string(c.n[2]) + "x" + std::to_string(c.n[3]) + ", " +
                 std::to_string(c.count) + " filters");
    const int dims = dims_of(c.n);
    const std::vector<float> input = eight_bit_volume(EightBitKind::Uniform, c.n, seed + c.n[0]);
    const std::vector<float> taps = spread_taps(c.count, seed ^ 0x9e3779b9, dims);
    const detail::BankProblem problem = seven_cubed_bank(input, c.n, c.count, taps, dims);
    const cuda_bank::BankLaunch launch = cuda_bank::plan_bank(problem, 0);
    core::PaddedVolume padded;
    cuda_bank::pad_bank_input(problem, launch, 0, {}, padded);
    const cuda_bank::TensorCoreGeometry g = cuda_bank::tensor_core_geometry(launch);
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(
        cuda_bank::padded_input_image(g, padded.storage.get(), launch.row_length, 1, 1, bytes));
    ASSERT_TRUE(cuda_bank::tensor_core_unfit(launch, taps.data(), 0, policy).empty());
    const cuda_bank::TensorCoreWeights w =
        cuda_bank::tensor_core_kernel_weights(g, taps.data(), 0, policy);
    const size_t floats = static_cast<size_t>(g.voxels() * g.count);
    std::vector<float> expected(floats);
    poison(expected);
    cuda_bank::emulate_tensor_core_bank(
        g, bytes.data(), cuda_bank::tensor_core_weights(g, taps.data()), expected.data());
    const DeviceBuffer d_in = to_device(bytes), d_weights = to_device(w.fragments),
                       d_scales = to_device(w.scales);
    std::vector<float> runs[2];
    for (std::vector<float>& out : runs) {
      std::vector<float> poisoned(floats);
      poison(poisoned);
      DeviceBuffer d_out = to_device(poisoned);
      cuda_bank::launch_tensor_core_bank(g, 0, policy, reinterpret_cast<const uint8_t*>(d_in.get()),
                                         reinterpret_cast<const int32_t*>(d_weights.get()),
                                         d_scales.get(), d_out.get(), nullptr);
      out = to_host(d_out, floats);
    }
    int64_t wrong = 0, first = -1;
    for (size_t i = 0; i < floats; ++i)
      if (std::memcmp(&runs[0][i], &expected[i], sizeof(float)) != 0) {
        if (first < 0)
          first = static_cast<int64_t>(i);
        ++wrong;
      }
    EXPECT_EQ(wrong, 0) << "first at " << first << ": " << (first < 0 ? 0.0f : runs[0][first])
                        << ", emulated " << (first < 0 ? 0.0f : expected[first]);
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), floats * sizeof(float)), 0);
    if (::testing::Test::HasFailure())
      return;
  }
}

// No extent a multiple of the tiles (32 or 64 along x; 4 to 24 rows); two passes (13, 24 filters);
// a volume smaller than the filter; 4D sequences (7 tap frames).
const std::vector<Case> kCases = {{{70, 45, 13, 1}, 13}, {{130, 9, 10, 1}, 12}, {{5, 3, 2, 1}, 12},
                                  {{70, 13, 3, 4}, 13},  {{37, 25, 4, 3}, 24},  {{5, 3, 2, 2}, 24}};

TEST(GpuWgmmaBank, TheWgmmaKernelEqualsTheHostEmulationBitForBit) {
  NDCONV_REQUIRE_GPU();
  if (!cuda_bank::tensor_core_takes_wgmma(quadrature_geometry(), 0, policy_of(true)))
    GTEST_SKIP() << "the device does not run the wgmma kernel (compute capability 9.0 only)";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int shape = 0; shape < wgmma_shapes(); ++shape) {
    SCOPED_TRACE("wgmma shape " + std::to_string(shape));
    check_cases(kCases, policy_of(true, shape), seed);
  }
}

TEST(GpuWgmmaBank, TheMmaSyncKernelEqualsTheHostEmulationBitForBit) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_cases(kCases, policy_of(false), seed);
}

// Small shapes, seconds under compute-sanitizer (memcheck, racecheck): a 3D and a 4D volume with
// partial tiles and two passes, the 4D one with several positions along z, on every compiled wgmma
// block shape.
TEST(GpuWgmmaBank, SmallShapesForTheSanitizers) {
  NDCONV_REQUIRE_GPU();
  if (!cuda_bank::tensor_core_takes_wgmma(quadrature_geometry(), 0, policy_of(true)))
    GTEST_SKIP() << "the device does not run the wgmma kernel (compute capability 9.0 only)";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int shape = 0; shape < wgmma_shapes(); ++shape) {
    SCOPED_TRACE("wgmma shape " + std::to_string(shape));
    check_cases({{{70, 9, 3, 1}, 13}, {{70, 13, 2, 2}, 13}}, policy_of(true, shape), seed);
  }
}

// The product's policy: wgmma exactly on compute capability 9.0 (this test binary holds the sm_90a
// code), and the bank's notes name the instruction that ran.
TEST(GpuWgmmaBank, TheProductTakesWgmmaOnHopperOnly) {
  NDCONV_REQUIRE_GPU();
  cudaDeviceProp prop{};
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const bool hopper = prop.major == 9 && prop.minor == 0;
  EXPECT_EQ(cuda_bank::tensor_core_takes_wgmma(quadrature_geometry(), 0, TensorCoreBankPolicy{}),
            hopper);
  EXPECT_FALSE(cuda_bank::tensor_core_takes_wgmma(quadrature_geometry(), 0, policy_of(false)));
  const Index n{29, 17, 11, 1};
  const std::vector<float> input = eight_bit_volume(EightBitKind::EchoLike, n, fresh_seed());
  const std::vector<float> taps = quadrature_bank_taps(3);
  const int64_t voxels = n[0] * n[1] * n[2];
  std::vector<float> out(static_cast<size_t>(voxels * 12));
  poison(out);
  std::vector<VolumeView> views;
  for (int f = 0; f < 12; ++f)
    views.push_back(make_view(out.data() + f * voxels, 3, n));
  Options options;
  options.backend = Backend::Cuda;
  options.operation = Operation::Correlation;
  options.boundary = Boundary::Zero;
  const RunReport report =
      filter_bank(make_view<const float>(input.data(), 3, n),
                  FilterBank{3, Index{7, 7, 7, 1}, 12, taps.data()}, views, options);
  bool wgmma = false, mma_sync = false;
  for (const std::string& note : report.notes) {
    wgmma = wgmma || note.find("on the tensor cores (wgmma") != std::string::npos;
    mma_sync = mma_sync || note.find("on the tensor cores (mma.sync") != std::string::npos;
  }
  EXPECT_EQ(wgmma, hopper);
  EXPECT_EQ(mma_sync, !hopper);
  for (float v : out)
    ASSERT_TRUE(v == v) << "an output left unwritten (NaN)";
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
