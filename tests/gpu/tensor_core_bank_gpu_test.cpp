// The tensor-core filter bank (src/cuda/bank/tensor_core*.{h,cuh,cu}) on the GPU: the host
// emulation's values bit for bit on extents that are no multiple of the tiles, with one and two
// passes, outputs poisoned with NaN, repeat runs identical; per voxel against float64 as accurate
// as the FP32 bank kernel on the same data (uniform, dark speckle, echo-like); and the bank's
// driver choosing it for 8-bit input, the FP32 kernels otherwise, saying which in the report.
// Skips with the reason without a usable GPU; built with the CUDA backend only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "eight_bit_volumes.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "require_gpu.h"
#include "reference.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/device_memory.h"
#include "device_copies.h"
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

using cuda_backend::DeviceBuffer;

const Index kFilter{7, 7, 7, 1};
const Index kFilter4d{7, 7, 7, 7};

// A 4D sequence where n[3] > 1, else a 3D volume; its 7^dims filter.
int dims_of(const Index& n) {
  return n[3] > 1 ? 4 : 3;
}
const Index& filter_of(const Index& n) {
  return dims_of(n) == 4 ? kFilter4d : kFilter;
}

// A 3D or 4D bank problem over the whole volume (correlation, zero boundary, `same` region) and
// what the launch-level API makes of it: the FP32 launch and padded input, and the tensor-core
// operands.
struct Bank {
  detail::BankProblem problem;
  cuda_bank::BankLaunch launch;
  std::vector<float> padded;
  cuda_bank::TensorCoreGeometry geometry;
  std::vector<uint8_t> bytes;                   ///< padded_input_image
  cuda_bank::TensorCoreWeights weights;         ///< as the emulation reads them
  cuda_bank::TensorCoreWeights kernel_weights;  ///< as the product's kernel on device 0 reads them
  bool eight_bit = false;                       ///< the input packed into `bytes`
};

Bank make_bank(const std::vector<float>& input, const Index& n, int count,
               const std::vector<float>& taps) {
  Bank b;
  b.problem = seven_cubed_bank(input, n, count, taps, dims_of(n));
  const detail::BankProblem& p = b.problem;
  b.launch = cuda_bank::plan_bank(p, 0);
  core::PaddedVolume padded;
  cuda_bank::pad_bank_input(p, b.launch, 0, {}, padded);
  b.padded.assign(padded.storage.get(), padded.storage.get() + b.launch.padded_count());
  b.geometry = cuda_bank::tensor_core_geometry(b.launch);
  // The kernel's input image: the 8-bit volume first (what the emulation reads), then the shifted
  // copies where the product's tile stages them.
  b.eight_bit = cuda_bank::padded_input_image(b.geometry, b.padded.data(), b.launch.row_length, 1,
                                              1, b.bytes);
  b.weights = cuda_bank::tensor_core_weights(b.geometry, taps.data());
  b.kernel_weights = cuda_bank::tensor_core_kernel_weights(b.geometry, taps.data(), 0);
  return b;
}

// The tensor-core kernel's outputs, poisoned with NaN before the launch.
std::vector<float> run_tensor_cores(const Bank& b) {
  const size_t floats = static_cast<size_t>(b.geometry.voxels() * b.geometry.count);
  std::vector<float> poisoned(floats);
  poison(poisoned);
  const DeviceBuffer d_in = to_device(b.bytes), d_fragments = to_device(b.kernel_weights.fragments),
                     d_scales = to_device(b.kernel_weights.scales);
  DeviceBuffer d_out = to_device(poisoned);
  cuda_bank::launch_tensor_core_bank(b.geometry, 0, reinterpret_cast<const uint8_t*>(d_in.get()),
                                     reinterpret_cast<const int32_t*>(d_fragments.get()),
                                     d_scales.get(), d_out.get(), nullptr);
  return to_host(d_out, floats);
}

// The FP32 bank kernel's outputs on the same problem.
std::vector<float> run_fp32(const Bank& b) {
  const size_t floats = static_cast<size_t>(b.launch.voxels * b.launch.count);
  std::vector<float> poisoned(floats);
  poison(poisoned);
  const DeviceBuffer d_in = to_device(b.padded),
                     d_taps = to_device(cuda_bank::bank_device_taps(b.launch, b.problem.taps));
  DeviceBuffer d_out = to_device(poisoned);
  cuda_bank::launch_bank_device(b.launch, 0, d_in.get(), d_taps.get(), d_out.get(), nullptr,
                                nullptr, nullptr);
  return to_host(d_out, floats);
}

// Extents (volume axes; 4D where n[3] > 1) and filters of a kernel check.
struct KernelCase {
  Index n;
  int count;
};

// The tensor-core kernel on uniform 8-bit data and spread taps of each case: the host emulation's
// values bit for bit (outputs poisoned with NaN first), per voxel within 1e-6 of float64, a repeat
// run bit-identical.
void check_kernel_cases(const std::vector<KernelCase>& cases, uint64_t seed) {
  NDCONV_CUDA_CHECK(cudaSetDevice(0));
  for (const KernelCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" +
                 std::to_string(c.n[2]) + "x" + std::to_string(c.n[3]) + ", " +
                 std::to_string(c.count) + " filters");
    const std::vector<float> input = eight_bit_volume(EightBitKind::Uniform, c.n, seed + c.n[0]);
    const std::vector<float> taps = spread_taps(c.count, seed ^ 0x3c6ef372, dims_of(c.n));
    const Bank b = make_bank(input, c.n, c.count, taps);
    ASSERT_TRUE(b.eight_bit);
    ASSERT_TRUE(cuda_bank::tensor_core_unfit(b.launch, taps.data(), 0, {}).empty());
    const std::vector<float> gpu = run_tensor_cores(b);
    std::vector<float> emulated(gpu.size());
    poison(emulated);
    cuda_bank::emulate_tensor_core_bank(b.geometry, b.bytes.data(), b.weights, emulated.data());
    EXPECT_EQ(std::memcmp(gpu.data(), emulated.data(), gpu.size() * sizeof(float)), 0);
    const BankReference ref = bank_reference(input, c.n, filter_of(c.n), c.count, taps);
    EXPECT_LT(worst_voxel_error(ref, gpu.data()), 1e-6);
    const std::vector<float> again = run_tensor_cores(b);
    EXPECT_EQ(std::memcmp(gpu.data(), again.data(), gpu.size() * sizeof(float)), 0);
    if (::testing::Test::HasFailure())
      return;
  }
}

TEST(GpuTensorCoreBank, EqualsTheHostEmulationBitForBitAndRepeats) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // No extent a multiple of the tiles (64 along x, 8 rows in 3D, 12 in 4D); two passes (13
  // filters); a volume smaller than the filter; 4D sequences (7 tap frames).
  check_kernel_cases({{{70, 45, 13, 1}, 13},
                      {{130, 9, 10, 1}, 12},
                      {{5, 3, 2, 1}, 12},
                      {{70, 13, 3, 4}, 13},
                      {{37, 25, 4, 3}, 24},
                      {{5, 3, 2, 2}, 24}},
                     seed);
}

// The same checks on small shapes, seconds under compute-sanitizer (memcheck, racecheck): a 3D
// and a 4D volume with partial tiles and two passes, the 4D one with several positions along z
// (the tap frames' copies in flight across frames).
TEST(GpuTensorCoreBank, SmallShapesForTheSanitizers) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_kernel_cases({{{70, 9, 3, 1}, 13}, {{70, 13, 2, 2}, 13}}, seed);
}

TEST(GpuTensorCoreBank, AsAccurateAsTheFp32KernelPerVoxel) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  NDCONV_CUDA_CHECK(cudaSetDevice(0));
  // The quadrature banks: 12 real 7^3 filters on a 3D volume, 24 real 7^4 on a 4D sequence.
  for (const Index& n : {Index{67, 41, 29, 1}, Index{29, 19, 10, 8}}) {
    const int dims = dims_of(n), count = dims == 4 ? 24 : 12;
    SCOPED_TRACE(std::to_string(dims) + "D");
    const std::vector<float> taps = quadrature_bank_taps(dims);
    for (EightBitKind kind : kEightBitKinds) {
      SCOPED_TRACE(eight_bit_name(kind));
      const std::vector<float> input = eight_bit_volume(kind, n, seed);
      const Bank b = make_bank(input, n, count, taps);
      ASSERT_TRUE(b.eight_bit);
      const BankReference ref = bank_reference(input, n, filter_of(n), count, taps);
      const double tensor = worst_voxel_error(ref, run_tensor_cores(b).data());
      const double fp32 = worst_voxel_error(ref, run_fp32(b).data());
      std::cout << "[ accuracy ] " << dims << "D " << eight_bit_name(kind)
                << ": max |error| / sum |w||x|: FP32 kernel " << fp32 << ", tensor cores " << tensor
                << "\n";
      EXPECT_LE(tensor, fp32);
    }
  }
}

// ---- The reconstruction's weighted sum (TensorCoreWideFramesTile) ---------------------------

// A weighted sum of `count` size^dims filters (4D where n[3] > 1) over the whole volume
// (correlation, zero boundary, `same` region) and its operands: the FP32 launch and padded input,
// the tensor-core operands and per-voxel weights (1 for filter 0, the lowpass).
struct WeightedBank {
  detail::BankProblem problem;
  cuda_bank::BankLaunch launch;
  std::vector<float> padded, weights;
  cuda_bank::TensorCoreGeometry geometry;
  std::vector<uint8_t> bytes;
  cuda_bank::TensorCoreWeights tensor_weights;
  bool eight_bit = false;
};

Index cube(int size, int dims) {
  return {size, size, size, dims == 4 ? size : 1};
}

WeightedBank make_weighted_bank(const std::vector<float>& input, const Index& n, int count,
                                const std::vector<float>& taps, uint64_t seed, int size) {
  WeightedBank b;
  detail::BankProblem& p = b.problem;
  const int dims = dims_of(n), h = size / 2;
  p.input = make_view(input.data(), dims, n);
  p.filter_extent = cube(size, dims);
  p.count = count;
  p.taps = taps.data();
  p.offset = {-h, -h, -h, dims == 4 ? -h : 0};
  p.boundary = Boundary::Zero;
  p.output_extent = n;
  b.launch = cuda_bank::plan_bank(p, 0);
  core::PaddedVolume padded;
  cuda_bank::pad_bank_input(p, b.launch, 0, {}, padded);
  b.padded.assign(padded.storage.get(), padded.storage.get() + b.launch.padded_count());
  b.geometry = cuda_bank::tensor_core_geometry(b.launch);
  b.eight_bit = cuda_bank::padded_input_image(b.geometry, b.padded.data(), b.launch.row_length, 1,
                                              1, b.bytes);
  b.tensor_weights = cuda_bank::tensor_core_weights(b.geometry, taps.data(),
                                                    cuda_bank::tensor_core_tile_rows(b.geometry));
  b.weights = sum_weights(count, b.launch.voxels, seed);
  return b;
}

// The tensor-core weighted sum, poisoned with NaN before the launch.
std::vector<float> run_tensor_core_sum(const WeightedBank& b) {
  const size_t voxels = static_cast<size_t>(b.geometry.voxels());
  std::vector<float> poisoned(voxels);
  poison(poisoned);
  const DeviceBuffer d_in = to_device(b.bytes), d_fragments = to_device(b.tensor_weights.fragments),
                     d_scales = to_device(b.tensor_weights.scales),
                     d_weights = to_device(b.weights);
  DeviceBuffer d_sum = to_device(poisoned);
  cuda_bank::launch_tensor_core_weighted_sum(b.geometry, 0,
                                             reinterpret_cast<const uint8_t*>(d_in.get()),
                                             reinterpret_cast<const int32_t*>(d_fragments.get()),
                                             d_scales.get(), d_weights.get(), d_sum.get(), nullptr);
  return to_host(d_sum, voxels);
}

// The FP32 bank kernel's fused weighted sum on the same problem.
std::vector<float> run_fp32_sum(const WeightedBank& b) {
  const size_t voxels = static_cast<size_t>(b.launch.voxels);
  std::vector<float> poisoned(voxels);
  poison(poisoned);
  const DeviceBuffer d_in = to_device(b.padded),
                     d_taps = to_device(cuda_bank::bank_device_taps(b.launch, b.problem.taps)),
                     d_weights = to_device(b.weights);
  DeviceBuffer d_sum = to_device(poisoned);
  cuda_bank::launch_bank_device(b.launch, 0, d_in.get(), d_taps.get(), nullptr, d_weights.get(),
                                d_sum.get(), nullptr);
  return to_host(d_sum, voxels);
}

// Extents (volume axes; 4D where n[3] > 1), filters and their size of a weighted-sum check.
struct WeightedCase {
  Index n;
  int count;
  int size;
};

// The weighted sum on uniform 8-bit data and spread taps of each case: the host emulation's values
// bit for bit (the sum poisoned with NaN first), a repeat run bit-identical, and on the smaller
// cases (the float64 references of 11^4 filters take seconds) per voxel within 1e-6 of float64.
void check_weighted_cases(const std::vector<WeightedCase>& cases, uint64_t seed) {
  NDCONV_CUDA_CHECK(cudaSetDevice(0));
  for (const WeightedCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" +
                 std::to_string(c.n[2]) + "x" + std::to_string(c.n[3]) + ", " +
                 std::to_string(c.count) + " filters of " + std::to_string(c.size));
    const int dims = dims_of(c.n);
    const std::vector<float> input = eight_bit_volume(EightBitKind::Uniform, c.n, seed + c.n[0]);
    const std::vector<float> taps = spread_taps(c.count, seed ^ 0x3c6ef372, dims, c.size);
    const WeightedBank b = make_weighted_bank(input, c.n, c.count, taps, seed ^ 0x77, c.size);
    ASSERT_TRUE(b.eight_bit);
    ASSERT_EQ(cuda_bank::tensor_core_unfit(b.launch, taps.data(), 0, {}, true), "");
    const std::vector<float> gpu = run_tensor_core_sum(b);
    std::vector<float> emulated(gpu.size());
    poison(emulated);
    cuda_bank::emulate_tensor_core_weighted_sum(b.geometry, b.bytes.data(), b.tensor_weights,
                                                b.weights.data(), emulated.data());
    EXPECT_EQ(std::memcmp(gpu.data(), emulated.data(), gpu.size() * sizeof(float)), 0);
    const std::vector<float> again = run_tensor_core_sum(b);
    EXPECT_EQ(std::memcmp(gpu.data(), again.data(), gpu.size() * sizeof(float)), 0);
    if (b.launch.voxels * b.launch.filter_taps <= int64_t{2500} * 14641) {
      const BankReference ref = bank_reference(input, c.n, cube(c.size, dims), c.count, taps);
      EXPECT_LT(worst_sum_error(ref, b.weights, gpu.data()), 1e-6);
    }
    if (::testing::Test::HasFailure())
      return;
  }
}

TEST(GpuTensorCoreBank, TheWeightedSumEqualsTheHostEmulationBitForBitAndRepeats) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // No extent a multiple of the tiles (64 along x, 12 rows); 11 filters (the reconstruction's in
  // 4D), 12 (a full pass), 5 and 7 (3D); 11^4, 9^4 and 11^3; a sequence smaller than the filter;
  // several positions along z and t (the streamed weights and rows in flight across frames and
  // tiles).
  check_weighted_cases({{{70, 13, 2, 2}, 11, 11},
                        {{130, 14, 1, 2}, 12, 11},
                        {{70, 13, 3, 2}, 11, 9},
                        {{37, 11, 4, 2}, 5, 9},
                        {{5, 3, 2, 2}, 11, 11},
                        {{70, 13, 5, 1}, 7, 11}},
                       seed);
}

// The weighted sum on small shapes, seconds under compute-sanitizer (memcheck, racecheck): one
// tile along x and axis 1, 11^4 over two tiles along t, 9^4 over one.
TEST(GpuTensorCoreBank, WeightedSumSmallShapeForTheSanitizers) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_weighted_cases({{{20, 5, 1, 2}, 11, 11}, {{20, 5, 1, 1}, 11, 9}}, seed);
}

TEST(GpuTensorCoreBank, TheWeightedSumIsAsAccurateAsTheFp32KernelPerVoxel) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  NDCONV_CUDA_CHECK(cudaSetDevice(0));
  // The reconstruction's filters: the lowpass and 10 highpass filters of 11^4 (the default) on
  // every kind of data, of 9^4 (the echo preset) on the echo-like sequence.
  const Index n{13, 9, 6, 5};
  for (int size : {11, 9}) {
    const std::vector<float> taps = reconstruction_bank_taps(size);
    for (EightBitKind kind : kEightBitKinds) {
      if (size == 9 && kind != EightBitKind::EchoLike)
        continue;
      SCOPED_TRACE(std::to_string(size) + "^4, " + eight_bit_name(kind));
      const std::vector<float> input = eight_bit_volume(kind, n, seed);
      const WeightedBank b = make_weighted_bank(input, n, 11, taps, seed ^ 0x99, size);
      ASSERT_TRUE(b.eight_bit);
      const BankReference ref = bank_reference(input, n, cube(size, 4), 11, taps);
      const double tensor = worst_sum_error(ref, b.weights, run_tensor_core_sum(b).data());
      const double fp32 = worst_sum_error(ref, b.weights, run_fp32_sum(b).data());
      std::cout << "[ accuracy ] weighted sum " << size << "^4, " << eight_bit_name(kind)
                << ": max |error| / sum_f |w_f| sum |h_f||x|: FP32 kernel " << fp32
                << ", tensor cores " << tensor << "\n";
      EXPECT_LE(tensor, fp32);
    }
  }
}

bool has_note(const RunReport& r, const std::string& text) {
  for (const std::string& note : r.notes)
    if (note.find(text) != std::string::npos)
      return true;
  return false;
}

// filter_bank's outputs (the bank's filters' volumes contiguous, poisoned first) on `in`.
std::vector<float> bank_outputs(const ConstVolumeView& in, const FilterBank& bank,
                                const Options& options, RunReport& report) {
  const int64_t voxels = in.voxel_count();
  std::vector<float> out(static_cast<size_t>(voxels * bank.count));
  poison(out);
  std::vector<VolumeView> views;
  for (int f = 0; f < bank.count; ++f)
    views.push_back(make_view(out.data() + f * voxels, in.dims, in.extent));
  report = filter_bank(in, bank, views, options);
  return out;
}

TEST(GpuTensorCoreBank, TheBankTakesTheTensorCoresFor8BitInputOnly) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Index& n : {Index{45, 23, 17, 1}, Index{23, 14, 9, 6}}) {
    const int dims = dims_of(n), count = dims == 4 ? 24 : 12;
    SCOPED_TRACE(std::to_string(dims) + "D");
    const int64_t voxels = n[0] * n[1] * n[2] * n[3];
    const std::vector<float> taps = quadrature_bank_taps(dims);
    std::vector<float> input = eight_bit_volume(EightBitKind::EchoLike, n, seed);
    FilterBank bank{dims, filter_of(n), count, taps.data()};
    Options options;
    options.backend = Backend::Cuda;
    options.operation = Operation::Correlation;
    options.boundary = Boundary::Zero;
    for (bool eight_bit : {true, false}) {
      SCOPED_TRACE(eight_bit ? "8-bit" : "not 8-bit");
      if (!eight_bit)
        input[voxels / 2] += 0.5f;
      RunReport report;
      const std::vector<float> out =
          bank_outputs(make_view<const float>(input.data(), dims, n), bank, options, report);
      EXPECT_EQ(has_note(report, "on the tensor cores ("), eight_bit);
      EXPECT_EQ(has_note(report, "not on the tensor cores: the input is not 8-bit"), !eight_bit);
      // As accurate per voxel as the FP32 kernel on the same input (the FP32 path is that kernel).
      const Bank b = make_bank(input, n, count, taps);
      EXPECT_EQ(b.eight_bit, eight_bit);
      const BankReference ref = bank_reference(input, n, filter_of(n), count, taps);
      EXPECT_LE(worst_voxel_error(ref, out.data()), worst_voxel_error(ref, run_fp32(b).data()));
    }
  }
}

// filter_bank_weighted_sum (the host-staged reconstruction's path) with the 4D preset's
// reconstruction filters: on the tensor cores for 8-bit input, the notes saying so, per voxel as
// accurate as the FP32 kernel (expert.tensor_cores off); the FP32 kernel where the input is not
// 8-bit, the notes saying why.
TEST(GpuTensorCoreBank, TheWeightedSumTakesTheTensorCoresFor8BitInputOnly) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{15, 9, 6, 5};
  const int64_t voxels = n[0] * n[1] * n[2] * n[3];
  const std::vector<float> taps = reconstruction_bank_taps(9);  // the echo preset's 9^4
  std::vector<float> input = eight_bit_volume(EightBitKind::EchoLike, n, seed);
  const std::vector<float> weight_values = sum_weights(11, voxels, seed ^ 0x2b);
  std::vector<ConstVolumeView> weights;
  for (int f = 0; f < 11; ++f)
    weights.push_back(make_view(weight_values.data() + f * voxels, 4, n));
  const FilterBank bank{4, {9, 9, 9, 9}, 11, taps.data()};
  for (bool eight_bit : {true, false}) {
    SCOPED_TRACE(eight_bit ? "8-bit" : "not 8-bit");
    if (!eight_bit)
      input[voxels / 2] += 0.5f;
    const ConstVolumeView in = make_view<const float>(input.data(), 4, n);
    const BankReference ref = bank_reference(input, n, {9, 9, 9, 9}, 11, taps);
    double errors[2];
    for (bool tensor_cores : {true, false}) {
      Options options;
      options.backend = Backend::Cuda;
      options.operation = Operation::Correlation;
      options.boundary = Boundary::Zero;
      options.expert.tensor_cores = tensor_cores;
      std::vector<float> sum(static_cast<size_t>(voxels));
      poison(sum);
      const RunReport report =
          filter_bank_weighted_sum(in, bank, weights, make_view(sum.data(), 4, n), options);
      EXPECT_EQ(has_note(report, "weighted sum on the tensor cores (mma.sync"),
                eight_bit && tensor_cores);
      if (tensor_cores) {
        EXPECT_EQ(has_note(report, "not on the tensor cores: the input is not 8-bit"), !eight_bit);
      }
      errors[tensor_cores ? 0 : 1] = worst_sum_error(ref, weight_values, sum.data());
    }
    std::cout << "[ accuracy ] filter_bank_weighted_sum, " << (eight_bit ? "8-bit" : "not 8-bit")
              << ": tensor cores (where taken) " << errors[0] << ", FP32 kernel " << errors[1]
              << "\n";
    EXPECT_LE(errors[0], errors[1]);
  }
}

// Every boundary the bank takes through filter_bank, correlation and convolution: the padded input
// is 8-bit whatever the boundary, so the tensor cores take each; per voxel against float64.
TEST(GpuTensorCoreBank, EveryBoundaryAndOperationThroughTheBank) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{29, 17, 11, 1};
  const int64_t voxels = n[0] * n[1] * n[2];
  const std::vector<float> taps = spread_taps(12, seed ^ 0x51ed);
  const std::vector<float> input = eight_bit_volume(EightBitKind::DarkSpeckle, n, seed);
  const ConstVolumeView in = make_view<const float>(input.data(), 3, n);
  FilterBank bank{3, kFilter, 12, taps.data()};
  for (Boundary boundary : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                            Boundary::Periodic, Boundary::Reflect})
    for (Operation operation : {Operation::Correlation, Operation::Convolution}) {
      SCOPED_TRACE(std::string(to_string(boundary)) +
                   (operation == Operation::Correlation ? ", correlation" : ", convolution"));
      Options options;
      options.backend = Backend::Cuda;
      options.operation = operation;
      options.boundary = boundary;
      RunReport report;
      const std::vector<float> out = bank_outputs(in, bank, options, report);
      EXPECT_TRUE(has_note(report, "on the tensor cores ("));
      for (int f = 0; f < 12; ++f) {
        std::vector<float> magnitude(taps.begin() + f * 343, taps.begin() + (f + 1) * 343);
        const std::vector<double> ref = reference_dense(
            in, DenseFilter{3, kFilter, magnitude.data()}, operation, boundary, OutputRegion::Same);
        for (float& w : magnitude)
          w = std::fabs(w);
        const std::vector<double> sum = reference_dense(
            in, DenseFilter{3, kFilter, magnitude.data()}, operation, boundary, OutputRegion::Same);
        double worst = 0;
        for (int64_t v = 0; v < voxels; ++v) {
          const double e = std::fabs(out[f * voxels + v] - ref[v]);
          worst = std::max(worst, sum[v] > 0 ? e / sum[v] : (e == 0 ? 0.0 : 1.0));
        }
        // Four digits: about 1e-7 on dark data (the FP32 kernel about 1e-6, three digits 1e-5).
        EXPECT_LT(worst, 1e-6) << "filter " << f;
      }
      if (HasFailure())
        return;
    }
}

// The adaptive filter on an 8-bit echo-like 4D sequence with default parameters (the quadrature
// bank's 24 real 7^4 filters), its stages on the device: the quadrature bank on the tensor cores
// and the reconstruction's weighted sum on the tensor cores (the notes say so) against the FP32
// kernels (expert.tensor_cores off) on the same input. The two banks' responses agree per voxel
// within about 3e-6 of sum |w| |x| (each within 2e-6 of float64,
// AsAccurateAsTheFp32KernelPerVoxel); the structure tensor, its relaxation and the control mapping
// are smooth in them, and the two reconstructions are each within about 1e-6 of sum_f |w_f| sum
// |h_f| |x| of float64 (TheWeightedSumIsAsAccurateAsTheFp32KernelPerVoxel), so the outputs may
// differ by the first times the mapping's gain: per voxel, at most 2e-4 of the input's range (0.05
// of an 8-bit step; measured below).
TEST(GpuTensorCoreBank, TheAdaptiveFilterOn8BitInputAgreesWithTheFp32Path) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{30, 26, 22, 10};
  const int64_t voxels = n[0] * n[1] * n[2] * n[3];
  const std::vector<float> input = eight_bit_volume(EightBitKind::EchoLike, n, seed);
  const AdaptiveParameters parameters;  // defaults: true 4D, 7^4 quadrature filters
  std::vector<float> outputs[2];
  for (bool tensor_cores : {true, false}) {
    SCOPED_TRACE(tensor_cores ? "tensor cores" : "FP32 kernels");
    Options options;
    options.backend = Backend::Cuda;
    options.boundary = Boundary::Mirror;
    options.expert.tensor_cores = tensor_cores;
    std::vector<float>& out = outputs[tensor_cores ? 0 : 1];
    out.resize(static_cast<size_t>(voxels));
    poison(out);
    const AdaptiveReport report = adaptive_filter(make_view<const float>(input.data(), 4, n),
                                                  make_view(out.data(), 4, n), parameters, options);
    EXPECT_TRUE(has_note(report.bank, "device-resident stages"));
    EXPECT_EQ(has_note(report.quadrature_bank, "GPU quadrature bank on the tensor cores"),
              tensor_cores);
    EXPECT_EQ(has_note(report.quadrature_bank, "not on the tensor cores: the tensor cores are off"),
              !tensor_cores);
    // The filter's notes (--verbose) say so as well.
    EXPECT_EQ(has_note(report.bank, "GPU quadrature bank on the tensor cores"), tensor_cores);
    // The reconstruction's weighted sum (11 filters of 9^4) as well, or why not.
    EXPECT_EQ(has_note(report.bank, "GPU reconstruction's weighted sum on the tensor cores"),
              tensor_cores);
    EXPECT_EQ(has_note(report.bank,
                       "the weights formed in place over the control tensor; not on "
                       "the tensor cores: the tensor cores are off"),
              !tensor_cores);
  }
  double worst = 0, sum2 = 0, ref2 = 0;
  for (int64_t v = 0; v < voxels; ++v) {
    const double d = std::fabs(double{outputs[0][v]} - double{outputs[1][v]});
    worst = d == d ? std::max(worst, d) : std::numeric_limits<double>::infinity();
    sum2 += d * d;
    ref2 += double{outputs[1][v]} * outputs[1][v];
  }
  std::cout
      << "[ adaptive ] 4D echo-like 8-bit, tensor cores against FP32 kernels: max |difference| "
      << worst << " (of 255), relative L2 " << std::sqrt(sum2 / ref2) << "\n";
  EXPECT_LE(worst, 2e-4 * 255);
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
