// Experiment (issue 49): the tensor-core dense filter's block shapes (src/cuda/tensor_dense/:
// one dense T^3 filter, T = 7 or 11, on an 8-bit volume; the mapping in tensor_dense_layout.h),
// the product's kernel (tensor_dense_kernel.cuh) instantiated for each TensorDenseTile shape (M
// tiles per warp, warps along x and y) and run at three block depths along z, on 256^3.
//
// Each variant is checked bit for bit, every voxel, against an exact integer kernel (the same
// digits summed per voxel in int32, then combine_slices) that is itself checked on sampled voxels
// against the host's integer sums; the accuracy (|error| / sum |w||x| against float64 on sampled
// voxels) against a plain FP32 kernel (fmaf in tap order) on uniform, dark-speckle and echo-like
// data. Timing: CUDA events, L2 flushed before each launch, median of 15, against the FP32 FMA
// peak measured in the same process (the bench's FMA kernel, src/perf/gpu.cu) and the device's
// mma.sync u8 x s8 rate on registers. The winners are TensorDenseTile7 and TensorDenseTile11; the
// kernel's lanes are emulated in CI (tests/gpu/tensor_dense_emulation_test.cpp).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I . -lineinfo
//   dev/dense_tc_probe.cu src/cuda/tensor_dense/tensor_dense_layout.cpp src/core/int8_digits.cpp
//   src/core/parallel_for.cpp -o dense_tc_probe
// run: dense_tc_probe [quick|full] [variant name part]: every variant (or those whose name holds
// the part) at 3 block depths on 3 data sets (quick: uniform data, one depth)
#include <cuda_pipeline_primitives.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/int8_digits.h"
#include "cuda/tensor_dense/tensor_dense_kernel.cuh"
#include "cuda_check.h"

using namespace ndconv;

namespace {

using cuda_tensor_dense::TensorDenseArgs;
using cuda_tensor_dense::TensorDenseTile;

// The product's MMA wrappers for the peak kernel.
using cuda_tensor_dense::tensor_dense_steps::mma_k32;

// ---- references ---------------------------------------------------------------------------------

// Exact: each digit's int32 sum at each output, then combine_slices (what the MMAs must give).
template <int T>
__global__ void exact_kernel(const uint8_t* in, int64_t row_bytes, int64_t plane_bytes, int n,
                             const int8_t* digits, float scale, float* out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= int64_t{n} * n * n)
    return;
  const int x = i % n, y = i / n % n, z = i / n / n;
  int32_t s[4] = {0, 0, 0, 0};
  constexpr int taps = T * T * T;
  for (int c = 0; c < T; ++c)
    for (int ay = 0; ay < T; ++ay) {
      const uint8_t* row = in + (z + c) * plane_bytes + (y + ay) * row_bytes + x;
      for (int ax = 0; ax < T; ++ax) {
        const int v = row[ax], k = (c * T + ay) * T + ax;
#pragma unroll
        for (int d = 0; d < 4; ++d)
          s[d] += v * digits[d * taps + k];
      }
    }
  out[i] = detail::combine_slices(s, 4, scale);
}

// A plain FP32 correlation (fmaf in tap order), the accuracy test's FP32 comparison.
template <int T>
__global__ void fp32_kernel(const uint8_t* in, int64_t row_bytes, int64_t plane_bytes, int n,
                            const float* taps, float* out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= int64_t{n} * n * n)
    return;
  const int x = i % n, y = i / n % n, z = i / n / n;
  float s = 0;
  for (int c = 0; c < T; ++c)
    for (int ay = 0; ay < T; ++ay) {
      const uint8_t* row = in + (z + c) * plane_bytes + (y + ay) * row_bytes + x;
      for (int ax = 0; ax < T; ++ax)
        s = fmaf(taps[(c * T + ay) * T + ax], static_cast<float>(row[ax]), s);
    }
  out[i] = s;
}

constexpr int kChains = 8, kFmaThreads = 256;
__global__ void fma_kernel(float* out, int iterations, float b, float c) {
  float a[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j)
    a[j] = static_cast<float>(threadIdx.x + j) * 1e-3f;
#pragma unroll 16
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j)
      a[j] = fmaf(a[j], b, c);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j)
    s += a[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void mma_peak_kernel(int* out, int iterations) {
  int32_t acc[8][4] = {};
  const uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x ^ 5u, 7u};
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      mma_k32(acc[j], a, threadIdx.x * 11u, 13u);
  int s = 0;
  for (int j = 0; j < 8; ++j)
    s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 123456789)
    out[0] = s;
}

// ---- timing
// ---------------------------------------------------------------------------------------

struct Timer {
  void* flush = nullptr;
  size_t flush_bytes = size_t{256} << 20;
  cudaEvent_t e0, e1;
  Timer() {
    CHECK(cudaMalloc(&flush, flush_bytes));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
  }
  template <class F>
  double median_ms(F launch, int reps = 15) {
    launch();  // warm-up
    CHECK(cudaGetLastError());
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      CHECK(cudaMemsetAsync(flush, r & 0xff, flush_bytes));
      CHECK(cudaEventRecord(e0));
      launch();
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      CHECK(cudaGetLastError());
      float m = 0;
      CHECK(cudaEventElapsedTime(&m, e0, e1));
      ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

double fma_peak_flops(Timer& timer) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / kFmaThreads);
  const int iterations = 1 << 14;
  float* sink;
  CHECK(cudaMalloc(&sink, sizeof(float) * blocks * kFmaThreads));
  const double ms = timer.median_ms(
      [&] { fma_kernel<<<blocks, kFmaThreads>>>(sink, iterations, 0.999999f, 1e-7f); }, 11);
  CHECK(cudaFree(sink));
  return 2.0 * blocks * kFmaThreads * double(iterations) * kChains / (ms * 1e-3);
}

double mma_peak_ops(Timer& timer) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int* out;
  CHECK(cudaMalloc(&out, 4));
  const int iterations = 1 << 13, blocks = prop.multiProcessorCount * 4;
  const double ms = timer.median_ms([&] { mma_peak_kernel<<<blocks, 128>>>(out, iterations); }, 5);
  CHECK(cudaFree(out));
  return 2.0 * 16 * 8 * 32 * 8.0 * iterations * blocks * 4 / (ms * 1e-3);
}

// ---- problems -----------------------------------------------------------------------------------

enum class Data { Uniform, Dark, Echo };
const char* data_name(Data d) {
  return d == Data::Uniform ? "uniform" : d == Data::Dark ? "dark" : "echo";
}

struct Volume {
  int n = 0, t = 0;
  int64_t row_bytes = 0, rows = 0, plane_bytes = 0;
  std::vector<uint8_t> bytes;
  uint8_t at(int x, int y, int z) const {
    return bytes[static_cast<size_t>(z * plane_bytes + y * row_bytes + x)];
  }
};

Volume make_volume(int n, int t, Data kind, uint64_t seed) {
  Volume v;
  v.n = n;
  v.t = t;
  v.row_bytes = (n + t - 1 + 15) / 16 * 16 + 64;
  v.rows = n + t - 1;
  v.plane_bytes = v.row_bytes * v.rows;
  v.bytes.assign(static_cast<size_t>(v.plane_bytes * (n + t - 1)), 0);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int e = n + t - 1;
  for (int z = 0; z < e; ++z)
    for (int y = 0; y < e; ++y)
      for (int x = 0; x < e; ++x) {
        double value = 0;
        if (kind == Data::Uniform) {
          value = static_cast<double>(rng() & 0xff);
        } else if (kind == Data::Dark) {  // most voxels 0 or 1, rare bright speckles
          value = 255.0 * std::pow(u(rng), 12.0);
        } else {  // Rayleigh speckle on a bright shell in a dark cavity
          const double r =
              std::sqrt(double(x - e / 2) * (x - e / 2) + double(y - e / 2) * (y - e / 2) +
                        double(z - e / 2) * (z - e / 2)) /
              e;
          const double tissue = r > 0.25 && r < 0.35 ? 1.0 : 0.08;
          value = 60.0 * tissue * std::sqrt(-2.0 * std::log(1.0 - u(rng)));
        }
        v.bytes[static_cast<size_t>(z * v.plane_bytes + y * v.row_bytes + x)] =
            static_cast<uint8_t>(std::min(255.0, std::floor(value)));
      }
  return v;
}

std::vector<float> make_taps(int t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> taps(static_cast<size_t>(t * t * t));
  for (size_t i = 0; i < taps.size(); ++i)
    taps[i] = u(rng) * std::pow(10.0f, -static_cast<float>(i % 3));
  return taps;
}

struct Device {
  uint8_t* in = nullptr;
  float* out = nullptr;
  float* ref = nullptr;
  int32_t* b = nullptr;
  int8_t* digits = nullptr;
  float* taps = nullptr;
};

template <int T, int MT, int WX, int WY, int MB>
bool launch(const TensorDenseArgs& a) {
  using L = TensorDenseTile<T, MT, WX, WY, MB>;
  auto kernel = cuda_tensor_dense::tensor_dense_kernel<L>;
  if (L::kSharedBytes > 48 * 1024)
    CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSharedBytes));
  if (a.n0 % L::kBX || a.n1 % L::kBY)
    return false;
  const dim3 grid(a.n0 / L::kBX, a.n1 / L::kBY,
                  (a.n2 + a.planes_per_block - 1) / a.planes_per_block);
  kernel<<<grid, L::kThreads, L::kSharedBytes>>>(a);
  return true;
}

struct Variant {
  const char* name;
  int t;
  bool (*run)(const TensorDenseArgs&);
  int (*regs)();
};

template <int T, int MT, int WX, int WY, int MB>
int regs_of() {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(
      &attr, cuda_tensor_dense::tensor_dense_kernel<TensorDenseTile<T, MT, WX, WY, MB>>));
  return attr.numRegs * 1000 + static_cast<int>(attr.localSizeBytes);
}

#define VARIANT(T, MT, WX, WY, MB)                                                \
  Variant {                                                                       \
    "t" #T " mt" #MT " wx" #WX " wy" #WY " mb" #MB, T, launch<T, MT, WX, WY, MB>, \
        regs_of<T, MT, WX, WY, MB>                                                \
  }

// The shapes timed (mb: the blocks per SM the registers must allow); the product's
// (TensorDenseTile7, TensorDenseTile11) among them.
const Variant kVariants[] = {
    VARIANT(7, 2, 1, 4, 1),  VARIANT(7, 2, 1, 4, 5),  VARIANT(7, 2, 1, 4, 6),
    VARIANT(7, 2, 1, 2, 1),  VARIANT(7, 2, 1, 2, 10), VARIANT(7, 2, 2, 2, 1),
    VARIANT(7, 2, 1, 8, 1),  VARIANT(7, 4, 1, 4, 1),  VARIANT(7, 4, 1, 4, 3),
    VARIANT(7, 1, 1, 8, 1),  VARIANT(11, 2, 1, 4, 1), VARIANT(11, 1, 1, 4, 1),
    VARIANT(11, 1, 1, 4, 3), VARIANT(11, 1, 1, 2, 1),
};
const char* g_only = "";  // run only the variants whose name holds this

// The host's integer sums at one output (the kernel's arithmetic, independently).
float host_exact(const Volume& v, const detail::SplitFilter& s, int x, int y, int z) {
  const int t = v.t, taps = t * t * t;
  int32_t acc[4] = {0, 0, 0, 0};
  for (int c = 0; c < t; ++c)
    for (int ay = 0; ay < t; ++ay)
      for (int ax = 0; ax < t; ++ax)
        for (int d = 0; d < 4; ++d)
          acc[d] += v.at(x + ax, y + ay, z + c) *
                    s.digits[static_cast<size_t>(d * taps + (c * t + ay) * t + ax)];
  return detail::combine_slices(acc, 4, s.scale);
}

void run_size(int t, int n, bool quick, Timer& timer, double fma_flops, double mma_ops) {
  bool any = false;
  for (const Variant& var : kVariants)
    any |= var.t == t && std::strstr(var.name, g_only);
  if (!any)
    return;
  std::printf("== dense %d^3 on %d^3 uint8\n", t, n);
  const std::vector<float> taps = make_taps(t, 1000 + t);
  const detail::SplitFilter split = detail::split_filter(taps.data(), int64_t{t} * t * t, 4);
  std::printf("split error (largest tap loss / largest tap): %.3g\n",
              detail::split_error(taps.data(), int64_t{t} * t * t, split, 4));
  const std::vector<int32_t> frag =
      cuda_tensor_dense::tensor_dense_weights(t, taps.data()).fragments;
  Device d;
  const int64_t voxels = int64_t{n} * n * n;
  CHECK(cudaMalloc(&d.out, voxels * 4));
  CHECK(cudaMalloc(&d.ref, voxels * 4));
  CHECK(cudaMalloc(&d.b, frag.size() * 4));
  CHECK(cudaMalloc(&d.digits, split.digits.size()));
  CHECK(cudaMalloc(&d.taps, taps.size() * 4));
  CHECK(cudaMemcpy(d.b, frag.data(), frag.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.digits, split.digits.data(), split.digits.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.taps, taps.data(), taps.size() * 4, cudaMemcpyHostToDevice));
  std::vector<float> got(static_cast<size_t>(voxels)), ref(static_cast<size_t>(voxels));
  const double useful = 2.0 * t * t * t * double(voxels);
  bool first_data = true;
  for (Data kind : {Data::Uniform, Data::Dark, Data::Echo}) {
    if (quick && kind != Data::Uniform)
      break;
    const Volume v = make_volume(n, t, kind, 77 + t + int(kind));
    CHECK(cudaMalloc(&d.in, v.bytes.size()));
    CHECK(cudaMemcpy(d.in, v.bytes.data(), v.bytes.size(), cudaMemcpyHostToDevice));
    const int blocks = static_cast<int>((voxels + 255) / 256);
    if (t == 7)
      exact_kernel<7>
          <<<blocks, 256>>>(d.in, v.row_bytes, v.plane_bytes, n, d.digits, split.scale, d.ref);
    else
      exact_kernel<11>
          <<<blocks, 256>>>(d.in, v.row_bytes, v.plane_bytes, n, d.digits, split.scale, d.ref);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(ref.data(), d.ref, voxels * 4, cudaMemcpyDeviceToHost));
    // The exact kernel against the host's sums at sampled voxels.
    std::mt19937_64 rng(5);
    std::vector<int> sx, sy, sz;
    int host_bad = 0;
    for (int i = 0; i < 3000; ++i) {
      sx.push_back(int(rng() % n));
      sy.push_back(int(rng() % n));
      sz.push_back(int(rng() % n));
      const float h = host_exact(v, split, sx[i], sy[i], sz[i]);
      const float g = ref[static_cast<size_t>((int64_t{sz[i]} * n + sy[i]) * n + sx[i])];
      host_bad += std::memcmp(&h, &g, 4) != 0;
    }
    std::printf("[%s] exact kernel vs host integer sums, 3000 voxels: %d differ\n", data_name(kind),
                host_bad);
    // Accuracy on the sampled voxels: the tensor-core result (= exact) and FP32 against float64.
    std::vector<float> f32(static_cast<size_t>(voxels));
    if (t == 7)
      fp32_kernel<7><<<blocks, 256>>>(d.in, v.row_bytes, v.plane_bytes, n, d.taps, d.out);
    else
      fp32_kernel<11><<<blocks, 256>>>(d.in, v.row_bytes, v.plane_bytes, n, d.taps, d.out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(f32.data(), d.out, voxels * 4, cudaMemcpyDeviceToHost));
    double worst_tc = 0, worst_f32 = 0;
    for (size_t i = 0; i < sx.size(); ++i) {
      double exact = 0, mag = 0;
      for (int c = 0; c < t; ++c)
        for (int ay = 0; ay < t; ++ay)
          for (int ax = 0; ax < t; ++ax) {
            const double w = taps[static_cast<size_t>((c * t + ay) * t + ax)];
            const double x = v.at(sx[i] + ax, sy[i] + ay, sz[i] + c);
            exact += w * x;
            mag += std::fabs(w) * x;
          }
      const size_t o = static_cast<size_t>((int64_t{sz[i]} * n + sy[i]) * n + sx[i]);
      if (mag > 0) {
        worst_tc = std::max(worst_tc, std::fabs(ref[o] - exact) / mag);
        worst_f32 = std::max(worst_f32, std::fabs(f32[o] - exact) / mag);
      }
    }
    std::printf(
        "[%s] max |err| / sum|w||x| vs float64, 3000 voxels: tensor cores %.3g, FP32 %.3g\n",
        data_name(kind), worst_tc, worst_f32);
    for (const Variant& var : kVariants) {
      if (var.t != t || !std::strstr(var.name, g_only))
        continue;
      for (int zs : {n, n / 2, n / 4}) {
        if (quick && zs != n / 2)
          continue;
        const TensorDenseArgs a{d.in, v.row_bytes, v.plane_bytes, n,           n,
                                n,    zs,          d.b,           split.scale, d.out};
        CHECK(cudaMemset(d.out, 0xff, voxels * 4));  // NaN
        if (!var.run(a)) {
          std::printf("  %-22s zs %3d: shape does not divide\n", var.name, zs);
          continue;
        }
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got.data(), d.out, voxels * 4, cudaMemcpyDeviceToHost));
        int64_t bad = 0;
        for (int64_t i = 0; i < voxels; ++i)
          bad += std::memcmp(&got[static_cast<size_t>(i)], &ref[static_cast<size_t>(i)], 4) != 0;
        double ms = 0;
        if (first_data)
          ms = timer.median_ms([&] { var.run(a); });
        const int rl = var.regs();
        if (first_data)
          std::printf(
              "  %-22s zs %3d: %lld differ, %7.4f ms, %.1f%% of FP32 peak, %.0f int8 TOPS "
              "(%.1f%% of mma peak), %d regs %d B local\n",
              var.name, zs, static_cast<long long>(bad), ms,
              100.0 * useful / (ms * 1e-3) / fma_flops,
              useful / (ms * 1e-3) / 0.25 / (t == 7 ? 49.0 / 64 : 121.0 / 144) * 1e-12,
              100.0 * useful / (ms * 1e-3) / 0.25 / (t == 7 ? 49.0 / 64 : 121.0 / 144) / mma_ops,
              rl / 1000, rl % 1000);
        else
          std::printf("  %-22s zs %3d: %lld differ\n", var.name, zs, static_cast<long long>(bad));
      }
    }
    CHECK(cudaFree(d.in));
    first_data = false;
  }
  CHECK(cudaFree(d.out));
  CHECK(cudaFree(d.ref));
  CHECK(cudaFree(d.b));
  CHECK(cudaFree(d.digits));
  CHECK(cudaFree(d.taps));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  if (argc > 2)
    g_only = argv[2];
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  Timer timer;
  const double fma = fma_peak_flops(timer);
  const double mma = mma_peak_ops(timer);
  std::printf("FP32 FMA peak %.2f TFLOP/s; mma.sync m16n8k32 u8 x s8 on registers %.0f TOPS\n",
              fma * 1e-12, mma * 1e-12);
  for (int t : {7, 11})
    run_size(t, 256, quick, timer, fma, mma);
  const double fma2 = fma_peak_flops(timer);
  std::printf("FP32 FMA peak again at the end %.2f TFLOP/s\n", fma2 * 1e-12);
  return 0;
}
