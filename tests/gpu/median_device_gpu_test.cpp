// The GPU median through median_filter_device (ndconv/device.h; skipped without a usable GPU):
// data in device memory, the filter enqueued on a non-blocking stream, bit for bit equal to the
// sorting reference and to the CPU backend (every boundary, constant with a value other than 0 on
// both GPU entry points, 2D/3D/4D, the forgetful and the counting kernels, NaN/inf/ties); the
// refusals (host memory, strided views, a window the kernel
// does not take, the CPU backend).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ndconv/device.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/median/median.h"
#include "cuda/tuning.h"
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

// Volumes with ties (as in 8-bit data), NaNs and infinities.
std::vector<float> median_input(int64_t n) {
  std::vector<float> in = random_values(n, fresh_seed());
  for (int64_t i = 0; i < n; i += 3)
    in[i] = std::round(in[i] * 4.0f);
  in[n / 2] = std::numeric_limits<float>::quiet_NaN();
  in[n / 3] = std::numeric_limits<float>::infinity();
  in[n / 5] = -std::numeric_limits<float>::infinity();
  return in;
}

int64_t bits_differ(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i)
    n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

struct Case {
  int dims;
  Index extent, radius;
};

// 2D radius 1-3 and 3D radius 1: the forgetful kernel; the others count.
const Case kCases[] = {{2, {301, 97, 1, 1}, {1, 1, 0, 0}}, {2, {150, 97, 1, 1}, {3, 3, 0, 0}},
                       {2, {150, 67, 1, 1}, {2, 7, 0, 0}}, {3, {67, 45, 38, 1}, {1, 1, 1, 0}},
                       {3, {40, 33, 29, 1}, {2, 1, 3, 0}}, {4, {23, 19, 17, 6}, {1, 1, 1, 1}},
                       {4, {12, 10, 9, 8}, {0, 2, 1, 3}}};

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

struct DeviceFloats {
  float* data = nullptr;
  explicit DeviceFloats(size_t n) {
    if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess)
      data = nullptr;
  }
  ~DeviceFloats() { cudaFree(data); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

// median_filter_device on a non-blocking stream; the output poisoned first.
void device_median(const Case& c, const std::vector<float>& in, const Options& o,
                   std::vector<float>& out) {
  const size_t n = in.size();
  DeviceFloats d_in(n), d_out(n);
  ASSERT_NE(d_in.data, nullptr);
  ASSERT_NE(d_out.data, nullptr);
  CHECK_CUDA(cudaMemcpy(d_in.data, in.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_out.data, 0xa5, n * 4));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const RunReport r =
      median_filter_device(make_view<const float>(d_in.data, c.dims, c.extent),
                           make_view(d_out.data, c.dims, c.extent), c.radius, o, stream);
  EXPECT_EQ(r.backend, Backend::Cuda);
  out.assign(n, 0.0f);
  CHECK_CUDA(cudaMemcpyAsync(out.data(), d_out.data, n * 4, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaStreamDestroy(stream));
}

TEST(MedianDeviceGpu, MatchesReferenceAndCpuBitForBit) {
  NDCONV_REQUIRE_GPU();
  for (const Case& c : kCases) {
    const int64_t n = c.extent[0] * c.extent[1] * c.extent[2] * c.extent[3];
    const std::vector<float> in = median_input(n);
    const ConstVolumeView iv = make_view(in.data(), c.dims, c.extent);
    for (size_t bi = 0; bi < kBoundaryCount; ++bi) {
      const auto b = static_cast<Boundary>(bi);
      SCOPED_TRACE(std::to_string(c.dims) + "D " + to_string(b) + " radius " +
                   std::to_string(c.radius[0]) + "x" + std::to_string(c.radius[1]) + "x" +
                   std::to_string(c.radius[2]) + "x" + std::to_string(c.radius[3]));
      Options o;
      o.boundary = b;
      o.boundary_value = b == Boundary::Constant ? 0.37f : 0.0f;  // scipy's cval
      std::vector<float> gpu;
      device_median(c, in, o, gpu);
      const std::vector<float> ref = reference_median_bits(iv, c.radius, b, o.boundary_value);
      EXPECT_EQ(bits_differ(gpu, ref), 0) << "voxels that differ from the reference";
      // The host entry point on the GPU (upload, the same kernel, download).
      std::vector<float> host_gpu(n);
      o.backend = Backend::Cuda;
      median_filter(iv, make_view(host_gpu.data(), c.dims, c.extent), c.radius, o);
      EXPECT_EQ(bits_differ(host_gpu, ref), 0) << "median_filter on the GPU";
      std::vector<float> cpu(n);
      o.backend = Backend::Cpu;
      median_filter(iv, make_view(cpu.data(), c.dims, c.extent), c.radius, o);
      EXPECT_EQ(bits_differ(gpu, cpu), 0) << "voxels that differ from the CPU backend";
      if (::testing::Test::HasFailure())
        return;
    }
  }
}

TEST(MedianDeviceGpu, RefusesHostMemoryStridedViewsAndLargeWindows) {
  NDCONV_REQUIRE_GPU();
  const Index extent{16, 12, 10, 1};
  const int64_t n = 16 * 12 * 10;
  std::vector<float> host(n, 1.0f), host_out(n);
  DeviceFloats d_in(n), d_out(n);
  ASSERT_NE(d_in.data, nullptr);
  Options o;
  const auto din = make_view<const float>(d_in.data, 3, extent);
  EXPECT_THROW(median_filter_device(make_view<const float>(host.data(), 3, extent),
                                    make_view(d_out.data, 3, extent), {1, 1, 1, 0}, o, nullptr),
               InvalidArgument);
  EXPECT_THROW(
      median_filter_device(din, make_view(host_out.data(), 3, extent), {1, 1, 1, 0}, o, nullptr),
      InvalidArgument);
  VolumeView strided = make_view(d_out.data, 3, extent);
  strided.extent[0] -= 1;
  strided.stride[1] = extent[0];
  strided.stride[2] = extent[0] * extent[1];
  EXPECT_THROW(median_filter_device(make_view<const float>(d_in.data, 3, strided.extent), strided,
                                    {1, 1, 1, 0}, o, nullptr),
               InvalidArgument);
  // A 4D window whose box does not fit a block's shared memory.
  EXPECT_THROW(
      median_filter_device(make_view<const float>(d_in.data, 4, {4, 4, 4, 5}),
                           make_view(d_out.data, 4, {4, 4, 4, 5}), {7, 7, 7, 7}, o, nullptr),
      InvalidArgument);
  o.backend = Backend::Cpu;
  EXPECT_THROW(
      median_filter_device(din, make_view(d_out.data, 3, extent), {1, 1, 1, 0}, o, nullptr),
      InvalidArgument);
}

// The 3 x 3 x 3 kernel in every column shape Tuning may name (outputs a thread along z) through
// the launcher, bit for bit against the sorting reference under every boundary
// (Constant as the engine passes it: Zero with its value), on extents with blocks inside the
// volume and on every face, NaN, infinities and ties.
TEST(MedianDeviceGpu, EveryColumnShapeMatchesTheReference) {
  NDCONV_REQUIRE_GPU();
  const Index extent{69, 14, 37, 1}, radius{1, 1, 1, 0};
  const int64_t n = extent[0] * extent[1] * extent[2];
  const std::vector<float> in = median_input(n);
  const ConstVolumeView iv = make_view(in.data(), 3, extent);
  DeviceFloats d_in(n), d_out(n);
  ASSERT_NE(d_in.data, nullptr);
  ASSERT_NE(d_out.data, nullptr);
  CHECK_CUDA(cudaMemcpy(d_in.data, in.data(), n * 4, cudaMemcpyHostToDevice));
  const int shapes[] = {8, 12, 14, 16};  // outputs a thread
  std::vector<float> got(static_cast<size_t>(n));
  for (size_t bi = 0; bi < kBoundaryCount; ++bi) {
    const auto b = static_cast<Boundary>(bi);
    const float outside = b == Boundary::Constant ? 0.37f : 0.0f;
    const Boundary rule = b == Boundary::Constant ? Boundary::Zero : b;
    const std::vector<float> ref = reference_median_bits(iv, radius, b, outside);
    for (const int outputs : shapes) {
      cuda_backend::Tuning tuning;
      tuning.median_column_outputs = outputs;
      CHECK_CUDA(cudaMemset(d_out.data, 0xa5, n * 4));
      cuda_median::launch_device(d_in.data, d_out.data, 3, extent, radius, rule, outside, nullptr,
                                 tuning);
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CUDA(cudaMemcpy(got.data(), d_out.data, n * 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(bits_differ(got, ref), 0) << to_string(b) << ", " << outputs << " outputs";
    }
  }
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
