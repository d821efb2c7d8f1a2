// Host emulation of the tensor-core dense filter (src/cuda/tensor_dense/tensor_dense_layout.h),
// run in CI without a GPU: the kernel's blocks, staged planes, A fragments (a_offset and funnel
// shifts), MMAs (the PTX ISA's fragments), rolling accumulator slots and epilogue exchange lane by
// lane, bit for bit against the digits' integer sums; the padded 8-bit volume against the
// boundary; and the accuracy test of issue 49 (per voxel, max |error| / sum |w| |x| against
// float64, no worse than the CPU's FP32 dense kernel on uniform, dark-speckle and echo-like data).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cuda/tensor_dense/tensor_dense_layout.h"
#include "tensor_dense_cases.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

using namespace cuda_tensor_dense;

// The padded volume of the `same` correlation of `bytes` (extents n) with a size^3 filter.
TensorDenseGeometry same_geometry(const Index& n, int size) {
  const int64_t outputs[3] = {n[0], n[1], n[2]};
  return tensor_dense_geometry(size, outputs);
}
std::vector<uint8_t> same_padded(const TensorDenseGeometry& g, const std::vector<uint8_t>& bytes,
                                 const Index& n, int size, Boundary boundary) {
  const StoredVolumeView in = make_stored_view(bytes.data(), ScalarType::UInt8, 3, n);
  const int h = size / 2;
  return tensor_dense_padded(g, in, Index{-h, -h, -h, 0}, boundary, 2);
}

// Extents that leave partial tiles along x and y and a partial last block along z.
Index small_extents(int size) {
  return size == 7 ? Index{37, 21, 29, 1} : Index{29, 19, 23, 1};
}

TEST(TensorDenseEmulation, TheKernelsLanesGiveTheDigitsIntegerSumsBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int size : {7, 11}) {
    SCOPED_TRACE(std::to_string(size) + "^3");
    const Index n = small_extents(size);
    const std::vector<uint8_t> bytes = eight_bit_bytes(EightBitKind::Uniform, n, seed + size);
    const std::vector<float> taps = spread_taps(1, seed + 1, 3, size);
    const TensorDenseGeometry g = same_geometry(n, size);
    const std::vector<uint8_t> padded = same_padded(g, bytes, n, size, Boundary::Mirror);
    std::vector<float> expect(static_cast<size_t>(g.voxels()));
    tensor_dense_exact(g, padded.data(), taps.data(), expect.data());
    const TensorDenseWeights w = tensor_dense_weights(size, taps.data());
    for (int planes : {9, 64}) {
      SCOPED_TRACE(std::to_string(planes) + " planes a block");
      std::vector<float> got(expect.size(), std::numeric_limits<float>::quiet_NaN());
      emulate_tensor_dense(g, padded.data(), w, planes, got.data());
      int64_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i)
        differ += std::memcmp(&got[i], &expect[i], sizeof(float)) != 0;
      EXPECT_EQ(differ, 0);
    }
  }
}

// The padded volume holds the input under every boundary (through the integer sums' result: the
// digits lose less than 2^-20 of sum |w| |x|, a misplaced byte far more).
TEST(TensorDenseEmulation, ThePaddedVolumeAppliesTheBoundary) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int size = 7;
  const Index n{13, 11, 9, 1};
  const std::vector<uint8_t> bytes = eight_bit_bytes(EightBitKind::Uniform, n, seed);
  const std::vector<float> taps = spread_taps(1, seed + 1, 3, size);
  for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic,
                     Boundary::Reflect}) {
    SCOPED_TRACE(static_cast<int>(b));
    const TensorDenseGeometry g = same_geometry(n, size);
    const std::vector<uint8_t> padded = same_padded(g, bytes, n, size, b);
    std::vector<float> out(static_cast<size_t>(g.voxels()));
    tensor_dense_exact(g, padded.data(), taps.data(), out.data());
    EXPECT_LT(worst_dense_error(dense_reference(bytes, n, taps, size, b), out.data()), 1e-6);
  }
}

TEST(TensorDenseEmulation, CannotImplementSaysWhy) {
  EXPECT_EQ(tensor_dense_cannot_implement(3, {7, 7, 7, 1}), "");
  EXPECT_EQ(tensor_dense_cannot_implement(3, {11, 11, 11, 1}), "");
  EXPECT_NE(tensor_dense_cannot_implement(3, {9, 9, 9, 1}), "");
  EXPECT_NE(tensor_dense_cannot_implement(3, {7, 7, 5, 1}), "");
  EXPECT_NE(tensor_dense_cannot_implement(4, {7, 7, 7, 7}), "");
}

// Issue 49's accuracy test: the tensor cores' result (the emulation's, bit for bit the GPU's) per
// voxel no worse than the CPU's FP32 dense kernel against float64.
TEST(TensorDenseEmulation, AsAccurateAsTheFp32KernelPerVoxel) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int size : {7, 11}) {
    const Index n{40, 36, 32, 1};
    const std::vector<float> taps = spread_taps(1, seed + size, 3, size);
    for (EightBitKind kind : kEightBitKinds) {
      SCOPED_TRACE(std::to_string(size) + "^3, " + eight_bit_name(kind));
      const std::vector<uint8_t> bytes = eight_bit_bytes(kind, n, seed + 7);
      const TensorDenseGeometry g = same_geometry(n, size);
      const std::vector<uint8_t> padded = same_padded(g, bytes, n, size, Boundary::Zero);
      std::vector<float> tc(static_cast<size_t>(g.voxels()));
      tensor_dense_exact(g, padded.data(), taps.data(), tc.data());
      std::vector<float> input(bytes.begin(), bytes.end()), fp32(tc.size(), std::nanf(""));
      detail::CorrelationProblem p;
      p.input = make_view<const float>(input.data(), 3, n);
      p.output = make_view(fp32.data(), 3, n);
      p.filter_extent = {size, size, size, 1};
      p.taps = taps.data();
      p.offset = {-(size / 2), -(size / 2), -(size / 2), 0};
      p.boundary = Boundary::Zero;
      Options o;
      o.backend = Backend::Cpu;
      RunReport report;
      cpu_backend::run_dense(p, o, report);
      const DenseReference ref = dense_reference(bytes, n, taps, size, Boundary::Zero);
      const double e_tc = worst_dense_error(ref, tc.data()),
                   e_fp32 = worst_dense_error(ref, fp32.data());
      RecordProperty(std::to_string(size) + "_" + eight_bit_name(kind), error_pair(e_tc, e_fp32));
      EXPECT_LE(e_tc, e_fp32);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
