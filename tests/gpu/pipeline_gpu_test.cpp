// The CUDA backend's host path on a GPU: the chunk pipeline (resident chunks of large volumes,
// staged slabs under memory caps; pinned, pageable and strided host memory; stored uint8 input)
// equals one pass of the kernels bit for bit, where the one pass is the device-pointer entry point
// on the whole volume; concurrent calls from several threads equal serial calls; the
// device-pointer entry points on the caller's stream; the buffer caches. Every output starts
// poisoned with NaN; one-pass results are also checked against the float64 reference. Skipped with
// the reason when no usable GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cases.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "ndconv/gaussian.h"
#include "ndconv/memory.h"
#include "ndconv/stored.h"
#include "reference.h"
#include "require_gpu.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/handle_pool.h"
#endif

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;

#ifdef NDCONV_HAVE_CUDA

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device copy of a host vector, freed on destruction.
struct DeviceVector {
  float* data = nullptr;
  size_t size = 0;
  explicit DeviceVector(size_t n) : size(n) {
    if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess)
      data = nullptr;
  }
  ~DeviceVector() { cudaFree(data); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
};

std::vector<float> to_host(const DeviceVector& d) {
  std::vector<float> h(d.size);
  if (cudaMemcpy(h.data(), d.data, d.size * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
    std::fill(h.begin(), h.end(), std::numeric_limits<float>::quiet_NaN());
  return h;
}

Options cuda_options(Boundary b, OutputRegion region = OutputRegion::Same) {
  Options o;
  o.backend = Backend::Cuda;
  o.boundary = b;
  o.region = region;
  return o;
}

bool same_bits(const std::vector<float>& a, const float* b) {
  return std::memcmp(a.data(), b, a.size() * sizeof(float)) == 0;
}

// One pass of the kernels over the whole volume: the device-pointer entry point.
std::vector<float> one_pass_dense(const ShapeCase& s, const std::vector<float>& in,
                                  const DenseFilter& f, const Options& o, const Index& out_extent) {
  DeviceVector d_in(in.size()), d_out(static_cast<size_t>(voxels(s.dims, out_extent)));
  EXPECT_NE(d_in.data, nullptr);
  EXPECT_NE(d_out.data, nullptr);
  if (d_in.data == nullptr || d_out.data == nullptr)
    return {};
  cudaMemcpy(d_in.data, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<float> nan(d_out.size, std::numeric_limits<float>::quiet_NaN());
  cudaMemcpy(d_out.data, nan.data(), nan.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  const RunReport r = filter_dense_device(make_view<const float>(d_in.data, s.dims, s.volume), f,
                                          make_view(d_out.data, s.dims, out_extent), o, stream);
  EXPECT_EQ(r.backend, Backend::Cuda);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  return to_host(d_out);
}

// One pass of the separable kernels over the whole volume: the device-pointer entry point.
std::vector<float> one_pass_separable(int dims, const Index& extent, const std::vector<float>& in,
                                      const SeparableFilter& f, const Options& o) {
  DeviceVector d_in(in.size()), d_out(in.size());
  EXPECT_NE(d_in.data, nullptr);
  EXPECT_NE(d_out.data, nullptr);
  if (d_in.data == nullptr || d_out.data == nullptr)
    return {};
  EXPECT_EQ(cudaMemcpy(d_in.data, in.data(), in.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_out.data, 0xff, in.size() * 4), cudaSuccess);  // NaN
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  filter_separable_device(make_view<const float>(d_in.data, dims, extent), f,
                          make_view(d_out.data, dims, extent), o, stream);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  return to_host(d_out);
}

bool has_note(const RunReport& r, const char* text) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

#ifdef NDCONV_HAVE_CUDA
// The engine switches to Options::cuda_device for its work and gives the calling thread its
// current device back: a probe, a host call and a median on the last GPU leave the caller on the
// first, and the other way round (on a one-GPU machine both are device 0).
TEST(CudaDevices, CallsLeaveTheCallersCurrentDevice) {
  NDCONV_REQUIRE_GPU();
  const int last = static_cast<int>(cuda_status().devices.size()) - 1;
  const Index extent{24, 20, 16, 1};
  std::vector<float> in(24 * 20 * 16, 1.0f), out(in.size());
  const SeparableFilter g = gaussian_filter(3, {1.0, 1.0, 1.0, 0.0});
  for (const auto& [caller, work] : {std::pair{0, last}, std::pair{last, 0}}) {
    ASSERT_EQ(cudaSetDevice(caller), cudaSuccess);
    Options o;
    o.backend = Backend::Cuda;
    o.cuda_device = work;
    (void)cuda_status();
    filter_separable(make_view<const float>(in.data(), 3, extent), g,
                     make_view(out.data(), 3, extent), o);
    median_filter(make_view<const float>(in.data(), 3, extent), make_view(out.data(), 3, extent),
                  {1, 1, 1, 0}, o);
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, caller) << "work on device " << work;
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}
#endif

// One volume over several GPUs (Options::cuda_devices): the output in slabs along the last axis,
// one per entry, at once; bit for bit one GPU's, dense, separable and stored, every boundary.
// Repeating device 0 runs two slabs on one GPU, so the test means something on one GPU too.
TEST(CudaDevices, OneVolumeInSlabsOverGpusEqualsOneGpu) {
  NDCONV_REQUIRE_GPU();
  std::vector<int> every;
  for (const DeviceInfo& d : cuda_status().devices)
    every.push_back(d.index);
  const Index extent{96, 80, 70, 1};
  const int64_t n = 96 * 80 * 70;
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(n, seed);
  std::vector<uint8_t> stored(static_cast<size_t>(n));
  for (size_t i = 0; i < stored.size(); ++i)
    stored[i] = static_cast<uint8_t>(static_cast<int>(in[i] * 97.0f) & 255);
  const std::vector<float> taps = random_values(5 * 5 * 5, seed + 1);
  const DenseFilter dense{3, {5, 5, 5, 1}, taps.data()};
  const SeparableFilter g = gaussian_filter(3, {1.5, 2.0, 2.5, 0.0});
  for (Boundary b : {Boundary::Zero, Boundary::Replicate, Boundary::Mirror, Boundary::Periodic,
                     Boundary::Reflect, Boundary::Constant}) {
    Options one;
    one.backend = Backend::Cuda;
    one.boundary = b;
    one.boundary_value = 0.75f;
    for (const std::vector<int>& devices :
         {std::vector<int>{0, 0}, every, std::vector<int>{0, 0, 0}}) {
      if (devices.size() < 2)
        continue;
      Options many = one;
      many.cuda_devices = devices;
      std::vector<float> a(static_cast<size_t>(n), NAN), c(static_cast<size_t>(n), NAN);
      const auto in_view = make_view<const float>(in.data(), 3, extent);
      const auto stored_view = make_stored_view(stored.data(), ScalarType::UInt8, 3, extent);
      filter_dense(in_view, dense, make_view(a.data(), 3, extent), one);
      const RunReport r = filter_dense(in_view, dense, make_view(c.data(), 3, extent), many);
      EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * 4), 0)
          << "dense, " << to_string(b) << ", " << devices.size() << " slabs, seed " << seed;
      EXPECT_TRUE(has_note(r, "slabs along the last axis")) << to_string(b);
      filter_separable(in_view, g, make_view(a.data(), 3, extent), one);
      filter_separable(in_view, g, make_view(c.data(), 3, extent), many);
      EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * 4), 0)
          << "separable, " << to_string(b) << ", seed " << seed;
      filter_separable_stored(stored_view, g, make_view(a.data(), 3, extent), one);
      filter_separable_stored(stored_view, g, make_view(c.data(), 3, extent), many);
      EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * 4), 0)
          << "stored separable, " << to_string(b) << ", seed " << seed;
    }
  }
  Options missing;
  missing.backend = Backend::Cuda;
  missing.cuda_devices = {0, static_cast<int>(every.size())};
  std::vector<float> out(static_cast<size_t>(n));
  EXPECT_THROW(filter_dense(make_view<const float>(in.data(), 3, extent), dense,
                            make_view(out.data(), 3, extent), missing),
               InvalidArgument);
}

// A 4D volume large enough that each GPU's slab is itself pipelined resident, in pinned host
// memory (copied directly): bit for bit one GPU's, and each GPU uploads its rows and the halo only.
TEST(CudaDevices, PinnedFourDVolumeInSlabsOverGpusEqualsOneGpu) {
  NDCONV_REQUIRE_GPU();
  std::vector<int> devices;
  for (const DeviceInfo& d : cuda_status().devices)
    devices.push_back(d.index);
  devices = devices.size() < 2 ? std::vector<int>{0, 0} : std::vector<int>{devices[0], devices[1]};
  const Index extent{64, 64, 64, 48};
  const int64_t n = 64 * 64 * 64 * 48;
  const uint64_t seed = fresh_seed();
  const std::vector<float> values = random_values(n, seed);
  PinnedBuffer<float> in(static_cast<size_t>(n)), one_out(static_cast<size_t>(n)),
      many_out(static_cast<size_t>(n));
  std::copy(values.begin(), values.end(), in.data());
  const std::vector<float> taps = random_values(3 * 3 * 3 * 5, seed + 1);
  const DenseFilter dense{4, {3, 3, 3, 5}, taps.data()};
  const auto in_view = make_view<const float>(in.data(), 4, extent);
  for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
    Options one;
    one.backend = Backend::Cuda;
    one.boundary = b;
    Options many = one;
    many.cuda_devices = devices;
    std::fill(one_out.data(), one_out.data() + n, NAN);
    std::fill(many_out.data(), many_out.data() + n, NAN);
    filter_dense(in_view, dense, make_view(one_out.data(), 4, extent), one);
    const RunReport r = filter_dense(in_view, dense, make_view(many_out.data(), 4, extent), many);
    EXPECT_EQ(std::memcmp(one_out.data(), many_out.data(), static_cast<size_t>(n) * 4), 0)
        << to_string(b) << ", seed " << seed;
    const std::string uploaded = b == Boundary::Periodic ? "(96 input rows" : "(52 input rows";
    EXPECT_TRUE(has_note(r, uploaded.c_str())) << to_string(b);
    EXPECT_TRUE(has_note(r, "input pinned, copied directly")) << to_string(b);
    EXPECT_TRUE(has_note(r, "resident input")) << to_string(b);
  }
}

TEST(CudaPipeline, ResidentChunksEqualOnePass) {
  NDCONV_REQUIRE_GPU();
  // 4D, 25 MiB: resident (pieces of 3 frames, chunks of 4 frames), a 9-tap filter along t that
  // reads 8 frames beyond each chunk; every boundary, dense and separable, pinned and pageable.
  const ShapeCase s{4, {64, 64, 64, 24}, {3, 3, 3, 9}};
  const size_t n = static_cast<size_t>(voxels(4, s.volume));
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(static_cast<int64_t>(n), seed);
  const std::vector<float> taps = random_values(voxels(4, s.filter), seed + 1);
  const DenseFilter f{4, s.filter, taps.data()};
  SeparableFilter sf;
  sf.dims = 4;
  for (int a = 0; a < 4; ++a)
    sf.taps[a] = positive_taps(s.filter[a], seed + 2 + static_cast<uint64_t>(a));
  PinnedBuffer<float> pin_in(n), pin_out(n);
  ASSERT_TRUE(pin_in.pinned());
  std::copy(in.begin(), in.end(), pin_in.begin());
  std::vector<float> out(n);
  for (Boundary b : kAllBoundaries) {
    const Options o = cuda_options(b);
    const std::vector<float> one = one_pass_dense(s, in, f, o, s.volume);
    const std::vector<float> one_separable = one_pass_separable(4, s.volume, in, sf, o);
    ASSERT_EQ(one.size(), n);
    ASSERT_EQ(one_separable.size(), n);
    for (bool separable : {false, true}) {
      for (bool pinned : {false, true}) {
        const ConstVolumeView iv =
            make_view<const float>(pinned ? pin_in.data() : in.data(), 4, s.volume);
        float* const result = pinned ? pin_out.data() : out.data();
        std::fill(result, result + n, std::numeric_limits<float>::quiet_NaN());
        const VolumeView ov = make_view(result, 4, s.volume);
        const RunReport r =
            separable ? filter_separable(iv, sf, ov, o) : filter_dense(iv, f, ov, o);
        const std::string what = std::string(to_string(b)) + (separable ? " separable" : " dense") +
                                 (pinned ? " pinned" : " pageable") +
                                 " seed=" + std::to_string(seed);
        EXPECT_GT(r.slabs, 1) << what;
        EXPECT_TRUE(has_note(r, "resident input")) << what;
        EXPECT_EQ(has_note(r, "input pinned, copied directly"), pinned) << what;
        EXPECT_TRUE(same_bits(separable ? one_separable : one, result)) << what;
      }
    }
  }
  // A stored uint8 input, converted on the device piece by piece, pinned and pageable.
  std::vector<unsigned char> bytes(n);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (auto& v : bytes)
    v = static_cast<unsigned char>(rng());
  PinnedBuffer<unsigned char> pin_bytes(n);
  std::copy(bytes.begin(), bytes.end(), pin_bytes.begin());
  std::vector<float> converted(n);
  for (size_t i = 0; i < n; ++i)
    converted[i] = 0.5f * static_cast<float>(bytes[i]) - 3.0f;
  for (Boundary b : {Boundary::Mirror, Boundary::Periodic}) {
    const Options o = cuda_options(b);
    const std::vector<float> one = one_pass_dense(s, converted, f, o, s.volume);
    for (const unsigned char* data : {bytes.data(), pin_bytes.data()}) {
      poison(out);
      const RunReport r =
          filter_dense_stored(make_stored_view(data, ScalarType::UInt8, 4, s.volume, 0.5, -3.0), f,
                              make_view(out.data(), 4, s.volume), o);
      EXPECT_TRUE(has_note(r, "resident input")) << to_string(b);
      EXPECT_TRUE(same_bits(one, out.data()))
          << to_string(b) << " uint8 " << (data == bytes.data() ? "pageable" : "pinned")
          << " seed=" << seed;
    }
  }
}

TEST(CudaPipeline, ChunksEqualOnePassForEveryKindOfHostMemory) {
  NDCONV_REQUIRE_GPU();
  // 20 MiB of input: pipelined in chunks without a cap.
  const ShapeCase s{3, {160, 128, 250, 1}, {3, 5, 7, 1}};
  for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    Options o = cuda_options(b);
    const std::vector<float> one = one_pass_dense(s, in, f, o, s.volume);
    ASSERT_EQ(one.size(), in.size());

    // Pageable.
    std::vector<float> out(in.size());
    poison(out);
    RunReport r = filter_dense(make_view(in.data(), s.dims, s.volume), f,
                               make_view(out.data(), s.dims, s.volume), o);
    EXPECT_GT(r.slabs, 1) << "expected a pipelined call";
    EXPECT_TRUE(same_bits(one, out.data())) << to_string(b) << " pageable seed=" << seed;

    // Pinned input and output: copied directly.
    PinnedBuffer<float> pin_in(in.size()), pin_out(in.size());
    ASSERT_TRUE(pin_in.pinned());
    std::copy(in.begin(), in.end(), pin_in.begin());
    std::fill(pin_out.begin(), pin_out.end(), std::numeric_limits<float>::quiet_NaN());
    r = filter_dense(make_view<const float>(pin_in.data(), s.dims, s.volume), f,
                     make_view(pin_out.data(), s.dims, s.volume), o);
    EXPECT_TRUE(same_bits(one, pin_out.data())) << to_string(b) << " pinned seed=" << seed;
    EXPECT_TRUE(has_note(r, "input pinned, copied directly"));

    // A memory cap: more, smaller chunks, fewer in flight.
    o.device_memory_cap = in.size() * sizeof(float) / 5;
    poison(out);
    r = filter_dense(make_view(in.data(), s.dims, s.volume), f,
                     make_view(out.data(), s.dims, s.volume), o);
    EXPECT_GT(r.slabs, 5);
    EXPECT_TRUE(same_bits(one, out.data())) << to_string(b) << " capped seed=" << seed;
    std::fill(pin_out.begin(), pin_out.end(), std::numeric_limits<float>::quiet_NaN());
    filter_dense(make_view<const float>(pin_in.data(), s.dims, s.volume), f,
                 make_view(pin_out.data(), s.dims, s.volume), o);
    EXPECT_TRUE(same_bits(one, pin_out.data())) << to_string(b) << " capped pinned";
  }
}

TEST(CudaPipeline, StridedViewsAndValidRegion) {
  NDCONV_REQUIRE_GPU();
  // The input is a sub-view of a larger pinned volume (strided), the output a strided view.
  const ShapeCase s{3, {150, 120, 240, 1}, {5, 3, 6, 1}};
  const Index outer{160, 130, 250, 1};
  const uint64_t seed = fresh_seed();
  PinnedBuffer<float> big(static_cast<size_t>(voxels(3, outer)));
  const std::vector<float> values = random_values(static_cast<int64_t>(big.size()), seed);
  std::copy(values.begin(), values.end(), big.begin());
  ConstVolumeView in_view = make_view<const float>(big.data() + 3, 3, outer);
  in_view.extent = s.volume;
  std::vector<float> in(static_cast<size_t>(voxels(3, s.volume)));
  for (int64_t z = 0, i = 0; z < s.volume[2]; ++z)
    for (int64_t y = 0; y < s.volume[1]; ++y)
      for (int64_t x = 0; x < s.volume[0]; ++x)
        in[static_cast<size_t>(i++)] = in_view.at({x, y, z, 0});
  const std::vector<float> taps = random_values(voxels(3, s.filter), seed + 1);
  const DenseFilter f{3, s.filter, taps.data()};
  for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
    const Options o = cuda_options(Boundary::Replicate, region);
    const Index out_extent =
        reference_output_extent(make_view<const float>(in.data(), 3, s.volume), s.filter, region);
    const std::vector<float> one = one_pass_dense(s, in, f, o, out_extent);
    std::vector<float> out_big(static_cast<size_t>(voxels(3, outer)));
    poison(out_big);
    VolumeView out_view = make_view(out_big.data() + 1, 3, outer);
    out_view.extent = out_extent;
    const RunReport r = filter_dense(in_view, f, out_view, o);
    EXPECT_GT(r.slabs, 1);
    std::vector<float> got;
    for (int64_t z = 0; z < out_extent[2]; ++z)
      for (int64_t y = 0; y < out_extent[1]; ++y)
        for (int64_t x = 0; x < out_extent[0]; ++x)
          got.push_back(out_view.at({x, y, z, 0}));
    EXPECT_TRUE(same_bits(one, got.data())) << to_string(region) << " seed=" << seed;
    const auto ref = reference_dense(make_view<const float>(in.data(), 3, s.volume), f,
                                     Operation::Convolution, Boundary::Replicate, region);
    EXPECT_LT(relative_l2_error(got, ref), kTolerance) << to_string(region) << " seed=" << seed;
  }
}

TEST(CudaPipeline, SeparableChunksEqualTheDeviceEntryPoint) {
  NDCONV_REQUIRE_GPU();
  const Index extent{200, 96, 300, 1};
  const int64_t n = voxels(3, extent);
  for (Boundary b : {Boundary::Zero, Boundary::Mirror}) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(n, seed);
    SeparableFilter f;
    f.dims = 3;
    f.taps[0] = random_values(9, seed + 1);
    f.taps[1] = random_values(5, seed + 2);
    f.taps[2] = random_values(17, seed + 3);
    Options o = cuda_options(b);
    const std::vector<float> one = one_pass_separable(3, extent, in, f, o);
    ASSERT_EQ(one.size(), in.size());
    const auto ref =
        reference_separable_passes(make_view(in.data(), 3, extent), f, Operation::Convolution, b);
    EXPECT_LT(relative_l2_error(one, ref), kTolerance) << to_string(b) << " seed=" << seed;

    for (size_t cap : {size_t{0}, in.size() * 4}) {
      o.device_memory_cap = cap;
      std::vector<float> out(in.size());
      poison(out);
      const RunReport r =
          filter_separable(make_view(in.data(), 3, extent), f, make_view(out.data(), 3, extent), o);
      EXPECT_GT(r.slabs, 1);
      EXPECT_TRUE(same_bits(one, out.data())) << to_string(b) << " cap " << cap;
    }
  }
}

TEST(CudaPipeline, ConcurrentCallsEqualSerialCalls) {
  NDCONV_REQUIRE_GPU();
  const int devices = static_cast<int>(cuda_status().devices.size());
  constexpr int kThreads = 9;
  struct Job {
    ShapeCase shape;
    std::vector<float> in, taps, serial, concurrent;
    bool separable = false;
    Options options;
  };
  std::vector<Job> jobs(kThreads);
  const uint64_t seed = fresh_seed();
  for (int t = 0; t < kThreads; ++t) {
    Job& j = jobs[static_cast<size_t>(t)];
    // Different sizes (one pass and pipelined), filters and devices.
    j.shape = t % 2 == 0 ? ShapeCase{3, {64, 48, 40, 1}, {3, 3, 3, 1}}
                         : ShapeCase{3, {128, 128, 300, 1}, {5, 3, 7, 1}};
    j.separable = t % 3 == 2;
    j.in = random_values(voxels(3, j.shape.volume), seed + 10 * t);
    j.taps = random_values(voxels(3, j.shape.filter), seed + 10 * t + 1);
    j.options = cuda_options(t % 2 == 0 ? Boundary::Zero : Boundary::Mirror);
    j.options.cuda_device = t % devices;
    // The last three force KO 2, which the tiled and column kernels lack: dense filters on the
    // blocked kernel with constant taps, the separable filter's y and z passes too, so that
    // launches with different taps share each translation unit's one constant buffer.
    if (t >= 6)
      j.options.expert.outputs_per_thread = 2;
  }
  auto run = [](Job& j, std::vector<float>& out) {
    out.assign(j.in.size(), std::numeric_limits<float>::quiet_NaN());
    const ConstVolumeView in = make_view<const float>(j.in.data(), 3, j.shape.volume);
    const VolumeView o = make_view(out.data(), 3, j.shape.volume);
    if (j.separable) {
      SeparableFilter f;
      f.dims = 3;
      for (int a = 0; a < 3; ++a)
        f.taps[a].assign(j.taps.begin(), j.taps.begin() + j.shape.filter[a]);
      filter_separable(in, f, o, j.options);
    } else {
      filter_dense(in, DenseFilter{3, j.shape.filter, j.taps.data()}, o, j.options);
    }
  };
  for (Job& j : jobs)
    run(j, j.serial);
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<std::thread> threads;
    std::vector<std::string> errors(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        try {
          run(jobs[static_cast<size_t>(t)], jobs[static_cast<size_t>(t)].concurrent);
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(t)] = e.what();
        }
      });
    }
    for (auto& th : threads)
      th.join();
    for (int t = 0; t < kThreads; ++t) {
      const Job& j = jobs[static_cast<size_t>(t)];
      EXPECT_EQ(errors[static_cast<size_t>(t)], "") << "thread " << t;
      EXPECT_TRUE(same_bits(j.serial, j.concurrent.data()))
          << "thread " << t << " repeat " << repeat << " seed=" << seed;
    }
  }
  // The serial results are right, too.
  const Job& j = jobs[0];
  const auto ref = reference_dense(make_view<const float>(j.in.data(), 3, j.shape.volume),
                                   DenseFilter{3, j.shape.filter, j.taps.data()},
                                   Operation::Convolution, Boundary::Zero, OutputRegion::Same);
  EXPECT_LT(relative_l2_error(j.serial, ref), kTolerance);
}

TEST(CudaDeviceEntryPoints, EnqueueOnTheCallersStreamAndCheckTheirViews) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{4, {20, 17, 9, 11}, {3, 3, 3, 2}};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(4, s.volume), seed);
  const std::vector<float> taps = random_values(voxels(4, s.filter), seed + 1);
  const DenseFilter f{4, s.filter, taps.data()};
  for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
    const Options o = cuda_options(Boundary::Periodic, region);
    const Index out_extent =
        reference_output_extent(make_view(in.data(), 4, s.volume), s.filter, region);
    const std::vector<float> got = one_pass_dense(s, in, f, o, out_extent);
    const auto ref = reference_dense(make_view(in.data(), 4, s.volume), f, Operation::Convolution,
                                     Boundary::Periodic, region);
    EXPECT_LT(relative_l2_error(got, ref), kTolerance) << to_string(region) << " seed=" << seed;
  }
  // Host memory and strided device views are refused.
  std::vector<float> host_out(in.size());
  DeviceVector d_in(in.size()), d_out(in.size());
  ASSERT_NE(d_in.data, nullptr);
  const Options o = cuda_options(Boundary::Zero);
  EXPECT_THROW(filter_dense_device(make_view<const float>(in.data(), 4, s.volume), f,
                                   make_view(d_out.data, 4, s.volume), o, nullptr),
               InvalidArgument);
  EXPECT_THROW(filter_dense_device(make_view<const float>(d_in.data, 4, s.volume), f,
                                   make_view(host_out.data(), 4, s.volume), o, nullptr),
               InvalidArgument);
  VolumeView strided = make_view(d_out.data, 4, s.volume);
  strided.extent[0] -= 1;
  strided.stride[1] = s.volume[0];
  EXPECT_THROW(filter_dense_device(make_view<const float>(d_in.data, 4, strided.extent), f, strided,
                                   o, nullptr),
               InvalidArgument);
}

// The reflect and constant boundaries through the device entry points: the constant one adds its
// terms with its own kernel on the caller's stream (cuda/border/constant_border.cu), after the
// zero-boundary kernels; dense in both regions, separable with the passes' own padding.
TEST(CudaDeviceEntryPoints, ReflectAndConstantMatchReference) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase shapes[] = {{3, {64, 40, 20, 1}, {7, 5, 3, 1}},
                              {2, {300, 90, 1, 1}, {17, 9, 1, 1}},
                              {4, {20, 12, 9, 6}, {3, 5, 3, 5}},
                              {3, {5, 4, 6, 1}, {9, 7, 3, 1}}};
  for (const ShapeCase& s : shapes) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
    const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    SeparableFilter sf;
    sf.dims = s.dims;
    for (int a = 0; a < s.dims; ++a) {
      sf.taps[a] = positive_taps(s.filter[a], seed + 2 + static_cast<uint64_t>(a));
      sf.pass_order[a] = s.dims - 1 - a;
    }
    sf.taps[0].assign(static_cast<size_t>(s.filter[0]), 0.0f);  // a derivative along x
    sf.taps[0].front() = -1.0f;
    sf.taps[0].back() = 1.0f;
    for (Boundary b : {Boundary::Reflect, Boundary::Constant}) {
      const float value = test_boundary_value(b, seed);
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        bool fits = true;
        for (int a = 0; a < s.dims; ++a)
          fits = fits && s.filter[a] <= s.volume[a];
        if (region == OutputRegion::Valid && !fits)
          continue;
        Options o = cuda_options(b, region);
        o.boundary_value = value;
        const Index out_extent = reference_output_extent(in_view, s.filter, region);
        const std::vector<float> got = one_pass_dense(s, in, f, o, out_extent);
        const auto ref = reference_dense(in_view, f, Operation::Convolution, b, region, value);
        EXPECT_LT(relative_l2_error(got, ref), kTolerance)
            << s << " dense " << to_string(b) << " " << value << " " << to_string(region)
            << " seed=" << seed;
      }
      Options o = cuda_options(b);
      o.boundary_value = value;
      const std::vector<float> got = one_pass_separable(s.dims, s.volume, in, sf, o);
      const auto ref = reference_separable_passes(in_view, sf, Operation::Convolution, b, value);
      EXPECT_LT(relative_l2_error(got, ref), kTolerance)
          << s << " separable " << to_string(b) << " " << value << " seed=" << seed;
    }
  }
}

TEST(CudaBufferCaches, RepeatedCallsReuseAndReleaseOnDemand) {
  NDCONV_REQUIRE_GPU();
  const Index extent{128, 128, 300, 1};
  const std::vector<float> in = random_values(voxels(3, extent), fresh_seed());
  std::vector<float> out(in.size());
  const std::vector<float> taps = random_values(27, fresh_seed());
  const DenseFilter f{3, {3, 3, 3, 1}, taps.data()};
  const Options o = cuda_options(Boundary::Zero);
  filter_dense(make_view(in.data(), 3, extent), f, make_view(out.data(), 3, extent), o);
  const CachedMemory kept = cached_memory();
  EXPECT_GT(kept.device_bytes, 0u);
  EXPECT_GT(kept.pinned_staging_bytes, 0u);  // pageable memory went through staging
  filter_dense(make_view(in.data(), 3, extent), f, make_view(out.data(), 3, extent), o);
  EXPECT_EQ(cached_memory().device_bytes, kept.device_bytes);  // the same buffers again
  release_cached_memory();
  EXPECT_EQ(cached_memory().device_bytes, 0u);
  EXPECT_EQ(cached_memory().pinned_staging_bytes, 0u);
}

// The streams and events of a call go back to their device's pool and the next call takes them
// again; release_cached_memory() destroys the idle ones. Calls from several threads at once each
// take their own.
TEST(CudaBufferCaches, StreamsAndEventsAreKeptAndReleased) {
  NDCONV_REQUIRE_GPU();
  const Index extent{128, 128, 300, 1};  // 19.7 MB: the resident pipeline, five streams
  const std::vector<float> in = random_values(voxels(3, extent), fresh_seed());
  const std::vector<float> taps = random_values(27, fresh_seed());
  const DenseFilter f{3, {3, 3, 3, 1}, taps.data()};
  const Options o = cuda_options(Boundary::Zero);
  std::vector<float> first(in.size(), std::nanf("")), again(in.size(), std::nanf(""));
  release_cached_memory();
  EXPECT_EQ(cuda_backend::idle_handles().streams, 0u);
  EXPECT_EQ(cuda_backend::idle_handles().events, 0u);
  filter_dense(make_view(in.data(), 3, extent), f, make_view(first.data(), 3, extent), o);
  const cuda_backend::IdleHandles kept = cuda_backend::idle_handles();
  EXPECT_GE(kept.streams, 2u);
  EXPECT_GE(kept.events, 4u);
  filter_dense(make_view(in.data(), 3, extent), f, make_view(again.data(), 3, extent), o);
  EXPECT_EQ(cuda_backend::idle_handles().streams, kept.streams);  // the same ones again
  EXPECT_EQ(cuda_backend::idle_handles().events, kept.events);
  EXPECT_TRUE(std::none_of(first.begin(), first.end(), [](float v) { return std::isnan(v); }));
  EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0);

  std::vector<std::vector<float>> outs(3, std::vector<float>(in.size(), std::nanf("")));
  std::vector<std::thread> threads;
  for (auto& out : outs)
    threads.emplace_back([&, dst = out.data()] {
      filter_dense(make_view(in.data(), 3, extent), f, make_view(dst, 3, extent), o);
    });
  for (auto& t : threads)
    t.join();
  for (const auto& out : outs)
    EXPECT_EQ(std::memcmp(first.data(), out.data(), first.size() * sizeof(float)), 0);
  const cuda_backend::IdleHandles after = cuda_backend::idle_handles();
  EXPECT_GE(after.streams, kept.streams);
  EXPECT_LE(after.streams, cuda_backend::kKeptStreams);
  EXPECT_LE(after.events, 2 * cuda_backend::kKeptEvents);
  release_cached_memory();
  EXPECT_EQ(cuda_backend::idle_handles().streams, 0u);
  EXPECT_EQ(cuda_backend::idle_handles().events, 0u);
}

// Stored values of `type`: random bytes for the integers (their whole range), random values in
// [-1000, 1000) for the floats (random bytes would hold NaN).
std::vector<unsigned char> random_stored(ScalarType type, int64_t count, uint64_t seed) {
  std::vector<unsigned char> bytes(static_cast<size_t>(count) * scalar_size(type));
  std::mt19937_64 rng(seed);
  if (type == ScalarType::Float32 || type == ScalarType::Float64) {
    const std::vector<float> v = random_values(count, seed);
    for (int64_t i = 0; i < count; ++i) {
      const float f = v[static_cast<size_t>(i)] * 1000.0f;
      if (type == ScalarType::Float32) {
        std::memcpy(bytes.data() + i * 4, &f, 4);
      } else {
        const double d = f;
        std::memcpy(bytes.data() + i * 8, &d, 8);
      }
    }
  } else {
    for (auto& b : bytes)
      b = static_cast<unsigned char>(rng());
  }
  return bytes;
}

TEST(CudaStoredTypes, EveryTypeEqualsFilteringItsFloatConversion) {
  NDCONV_REQUIRE_GPU();
  const ScalarType types[] = {ScalarType::UInt8,   ScalarType::Int8,   ScalarType::UInt16,
                              ScalarType::Int16,   ScalarType::UInt32, ScalarType::Int32,
                              ScalarType::Float32, ScalarType::Float64};
  // One pass (small) and pipelined (large, zero boundary: the staged zero rows are cleared after
  // the conversion, not converted from zero bytes).
  const ShapeCase shapes[] = {{3, {37, 21, 19, 1}, {3, 3, 5, 1}},
                              {3, {160, 128, 260, 1}, {3, 3, 5, 1}}};
  for (const ShapeCase& s : shapes) {
    const int64_t n = voxels(3, s.volume);
    const uint64_t seed = fresh_seed();
    const std::vector<float> taps = random_values(voxels(3, s.filter), seed);
    const DenseFilter f{3, s.filter, taps.data()};
    for (ScalarType type : types) {
      for (const auto& [scale, offset] : {std::pair{1.0, 0.0}, std::pair{0.25, -7.0}}) {
        const auto bytes = random_stored(type, n, seed + 1);
        PinnedBuffer<unsigned char> pinned(bytes.size());
        std::copy(bytes.begin(), bytes.end(), pinned.begin());
        std::vector<float> converted(static_cast<size_t>(n));
        const StoredVolumeView stored =
            make_stored_view(bytes.data(), type, 3, s.volume, scale, offset);
        convert_to_float(stored, make_view(converted.data(), 3, s.volume));
        const Options o = cuda_options(Boundary::Zero);
        std::vector<float> want(converted.size()), got(converted.size());
        poison(want);
        filter_dense(make_view<const float>(converted.data(), 3, s.volume), f,
                     make_view(want.data(), 3, s.volume), o);
        for (const void* data :
             {static_cast<const void*>(bytes.data()), static_cast<const void*>(pinned.data())}) {
          poison(got);
          StoredVolumeView in = stored;
          in.data = static_cast<const unsigned char*>(data);
          const RunReport r = filter_dense_stored(in, f, make_view(got.data(), 3, s.volume), o);
          EXPECT_EQ(r.backend, Backend::Cuda);
          EXPECT_TRUE(same_bits(want, got.data()))
              << to_string(type) << " scale " << scale << " " << s << " seed=" << seed
              << (data == pinned.data() ? " pinned" : " pageable");
        }
        if (n < 100000) {
          const auto ref =
              reference_dense(make_view<const float>(converted.data(), 3, s.volume), f,
                              Operation::Convolution, Boundary::Zero, OutputRegion::Same);
          EXPECT_LT(relative_l2_error(got, ref), kTolerance) << to_string(type);
        }
      }
    }
  }
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
