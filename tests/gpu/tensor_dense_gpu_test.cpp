// The tensor-core dense filter on the GPU (src/cuda/tensor_dense/): bit for bit the host's integer
// sums (tensor_dense_exact, which the CI emulation ties to the kernel's lanes) and the same bits
// again on a second run; through filter_dense_stored on 8-bit input, NaN-poisoned outputs per voxel
// against float64 no worse than the FP32 path on the same data (uniform, dark speckle, echo-like),
// the notes saying which ran and why; the FP32 kernels for other inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "ndconv/stored.h"
#include "require_gpu.h"
#include "test_data.h"

// The kernel is driven through the CUDA backend's own API: a build without CUDA has none.
#ifdef NDCONV_HAVE_CUDA
#include "cuda/device_memory.h"
#include "cuda/tensor_dense/tensor_dense.h"
#include "tensor_dense_cases.h"

namespace ndconv::test {
namespace {

using namespace cuda_tensor_dense;

bool has_note(const RunReport& r, const std::string& text) {
  for (const std::string& n : r.notes)
    if (n.find(text) != std::string::npos)
      return true;
  return false;
}

// filter_dense_stored of `bytes` (extents n) with a size^3 filter, `same`, correlation.
std::vector<float> dense_call(const std::vector<uint8_t>& bytes, const Index& n,
                              const std::vector<float>& taps, int size, Boundary boundary,
                              bool tensor_cores, RunReport& report) {
  std::vector<float> out(static_cast<size_t>(n[0] * n[1] * n[2]),
                         std::numeric_limits<float>::quiet_NaN());
  Options o;
  o.backend = Backend::Cuda;
  o.operation = Operation::Correlation;
  o.boundary = boundary;
  o.expert.tensor_cores = tensor_cores;
  DenseFilter f{3, {size, size, size, 1}, taps.data()};
  report = filter_dense_stored(make_stored_view(bytes.data(), ScalarType::UInt8, 3, n), f,
                               make_view(out.data(), 3, n), o);
  return out;
}

// The kernel on the device against the host's integer sums, bit for bit, twice, at block depths
// that leave a partial last block and on extents with partial tiles.
TEST(GpuTensorDense, EqualsTheHostIntegerSumsBitForBitAndRepeats) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int size : {7, 11}) {
    SCOPED_TRACE(std::to_string(size) + "^3");
    const Index n{77, 45, 53, 1};
    const std::vector<uint8_t> bytes = eight_bit_bytes(EightBitKind::Uniform, n, seed + size);
    const std::vector<float> taps = spread_taps(1, seed + 1, 3, size);
    const int64_t outputs[3] = {n[0], n[1], n[2]};
    const TensorDenseGeometry g = tensor_dense_geometry(size, outputs);
    const int h = size / 2;
    const std::vector<uint8_t> padded =
        tensor_dense_padded(g, make_stored_view(bytes.data(), ScalarType::UInt8, 3, n),
                            Index{-h, -h, -h, 0}, Boundary::Reflect, 4);
    std::vector<float> expect(static_cast<size_t>(g.voxels()));
    tensor_dense_exact(g, padded.data(), taps.data(), expect.data());
    const TensorDenseWeights w = tensor_dense_weights(size, taps.data());
    cuda_backend::DeviceBuffer d_in((padded.size() + 3) / 4), d_w(w.fragments.size()),
        d_out(expect.size());
    ASSERT_EQ(cudaMemcpy(d_in.get(), padded.data(), padded.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(
        cudaMemcpy(d_w.get(), w.fragments.data(), w.fragments.size() * 4, cudaMemcpyHostToDevice),
        cudaSuccess);
    for (int planes : {16, 53}) {
      for (int run = 0; run < 2; ++run) {
        SCOPED_TRACE(std::to_string(planes) + " planes a block, run " + std::to_string(run));
        ASSERT_EQ(cudaMemset(d_out.get(), 0xff, expect.size() * 4), cudaSuccess);  // NaN
        launch_tensor_dense(g, reinterpret_cast<const uint8_t*>(d_in.get()),
                            reinterpret_cast<const int32_t*>(d_w.get()), w.scale, d_out.get(),
                            planes, nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<float> got(expect.size());
        ASSERT_EQ(cudaMemcpy(got.data(), d_out.get(), got.size() * 4, cudaMemcpyDeviceToHost),
                  cudaSuccess);
        int64_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i)
          differ += std::memcmp(&got[i], &expect[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0);
      }
    }
  }
}

// One small call of each size, for compute-sanitizer's memcheck and racecheck.
TEST(GpuTensorDense, SmallShapesForTheSanitizers) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  const Index n{33, 20, 18, 1};
  const std::vector<uint8_t> bytes = eight_bit_bytes(EightBitKind::DarkSpeckle, n, seed);
  for (int size : {7, 11}) {
    const std::vector<float> taps = spread_taps(1, seed + size, 3, size);
    RunReport report;
    const std::vector<float> out = dense_call(bytes, n, taps, size, Boundary::Zero, true, report);
    EXPECT_TRUE(has_note(report, "dense plan: tensor cores"));
    EXPECT_LT(worst_dense_error(dense_reference(bytes, n, taps, size, Boundary::Zero), out.data()),
              1e-5);
  }
}

// Issue 49's accuracy test through the public call: per voxel no worse than the FP32 path on the
// same 8-bit data; the notes say the tensor cores ran.
TEST(GpuTensorDense, AsAccurateAsTheFp32PathPerVoxel) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{70, 52, 44, 1};
  for (int size : {7, 11}) {
    const std::vector<float> taps = spread_taps(1, seed + size, 3, size);
    for (EightBitKind kind : kEightBitKinds) {
      SCOPED_TRACE(std::to_string(size) + "^3, " + eight_bit_name(kind));
      const std::vector<uint8_t> bytes = eight_bit_bytes(kind, n, seed + 3);
      RunReport tc_report, fp32_report;
      const std::vector<float> tc =
          dense_call(bytes, n, taps, size, Boundary::Zero, true, tc_report);
      const std::vector<float> fp32 =
          dense_call(bytes, n, taps, size, Boundary::Zero, false, fp32_report);
      EXPECT_TRUE(has_note(tc_report, "dense plan: tensor cores")) << tc_report.notes.back();
      EXPECT_TRUE(has_note(fp32_report, "not on the tensor cores: options.expert.tensor_cores"));
      const DenseReference ref = dense_reference(bytes, n, taps, size, Boundary::Zero);
      const double e_tc = worst_dense_error(ref, tc.data()),
                   e_fp32 = worst_dense_error(ref, fp32.data());
      RecordProperty(std::to_string(size) + "_" + eight_bit_name(kind), error_pair(e_tc, e_fp32));
      EXPECT_LE(e_tc, e_fp32);
    }
  }
}

// Every boundary through the call: against float64 within the FP32 path's error; other filters
// and float input on the FP32 kernels, the notes saying why.
TEST(GpuTensorDense, BoundariesAndWhatTakesTheTensorCores) {
  NDCONV_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index n{33, 20, 18, 1};
  const std::vector<uint8_t> bytes = eight_bit_bytes(EightBitKind::EchoLike, n, seed);
  const std::vector<float> taps = spread_taps(1, seed + 1, 3, 7);
  for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic,
                     Boundary::Reflect}) {
    SCOPED_TRACE(static_cast<int>(b));
    RunReport tc_report, fp32_report;
    const std::vector<float> tc = dense_call(bytes, n, taps, 7, b, true, tc_report);
    const std::vector<float> fp32 = dense_call(bytes, n, taps, 7, b, false, fp32_report);
    EXPECT_TRUE(has_note(tc_report, "dense plan: tensor cores"));
    const DenseReference ref = dense_reference(bytes, n, taps, 7, b);
    EXPECT_LE(worst_dense_error(ref, tc.data()), worst_dense_error(ref, fp32.data()));
  }
  // A 5^3 filter: the FP32 kernels, saying why.
  const std::vector<float> taps5 = spread_taps(1, seed + 2, 3, 5);
  RunReport r5;
  const std::vector<float> out5 = dense_call(bytes, n, taps5, 5, Boundary::Zero, true, r5);
  EXPECT_TRUE(has_note(r5, "not on the tensor cores: a filter of 5x5x5 taps"));
  EXPECT_LT(worst_dense_error(dense_reference(bytes, n, taps5, 5, Boundary::Zero), out5.data()),
            1e-5);
}

}  // namespace
}  // namespace ndconv::test
#endif  // NDCONV_HAVE_CUDA
