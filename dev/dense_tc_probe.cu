// Experiment (issue 49): one dense T^3 filter (T = 7, 11) on an 8-bit volume on the tensor cores
// (mma.sync u8 x s8 -> s32, sm_80+), the weights split into 4 signed 8-bit digits
// (core/int8_digits.h), one exact int32 sum per digit, combined in FP32 at the end.
//
// Mapping (banded Toeplitz along y, the data as the A operand, the weights stationary in registers,
// the volume streamed along z):
//   M = 16 consecutive outputs along x;
//   N = 2 consecutive outputs along y x 4 digits = 8 (one n8 tile; column n = 4 j + s);
//   K = one input plane's window: T + 1 rows along y (w) x G groups of 4 bytes along x (a_x = 4 q +
//       i, G = ceil(T / 4)), group order w-major: 16 groups (2 k32 chunks) for 7, 36 (4 k32 + one
//       k16) for 11; B[(w, a_x)][(j, s)] = digit s of tap (a_x, w - j, c), zero outside the band.
//   A warp holds every tap plane c's B fragments in registers (T x 4 or T x 9 registers). Input
//   plane z' feeds output planes z' - c for c = 0 .. T - 1: each A fragment (one shared-memory
//   build) serves T MMAs into T rolling accumulators (slot = output plane mod T).
// Useful share of the MMA work: T^2 / (K per plane) / 4 = 49 / 64 / 4 = 19.1% (7), 121 / 144 / 4 =
// 21.0% (11).
//
// Each variant is checked bit for bit, every voxel, against an exact integer kernel (the same
// digits summed per voxel in int32, then combine_slices) and on sampled voxels against the host's
// integer sums; the accuracy (|error| / sum |w||x| against float64, per voxel on sampled voxels)
// against a plain FP32 kernel (fmaf in tap order) on uniform, dark-speckle and echo-like data.
// Timing: CUDA events, L2 flushed before each launch, median of 15, against the FP32 FMA peak
// measured in the same process (the bench's FMA kernel, src/perf/gpu.cu).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I . -lineinfo
//   dev/dense_tc_probe.cu src/core/int8_digits.cpp -o dense_tc_probe
// run: dense_tc_probe [quick|full|emulate] [variant name part]: every variant at 3 block depths
// along z on 3 data sets (quick: uniform data, one depth); emulate: every variant's host emulation
// (the kernel's offsets, slots and exchange lane by lane) against the host's integer sums
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
#include "cuda_check.h"

using namespace ndconv;

namespace {

// ---- the mapping ------------------------------------------------------------------------------

template <int T>
struct Shape {
  static constexpr int kJ = 2;                     // outputs along y per n8 tile
  static constexpr int kSlices = 4;                // digits
  static constexpr int kW = T + kJ - 1;            // window rows along y
  static constexpr int kG = (T + 3) / 4;           // groups of 4 bytes along x per row
  static constexpr int kGroups = kW * kG;          // K groups per input plane
  static constexpr int kFull = kGroups / 8;        // k32 chunks
  static constexpr bool kHalf = kGroups % 8 != 0;  // and one k16
  static_assert(kGroups % 8 == 0 || kGroups % 8 == 4, "whole k32 chunks and at most one k16");
  static constexpr int kBRegs = 2 * kFull + (kHalf ? 1 : 0);  // per tap plane per lane
};

// Group gp of a plane's K: row w (along y) and group a (bytes 4a .. 4a + 3 along x).
template <int T>
__host__ __device__ constexpr int group_row(int gp) {
  return gp / Shape<T>::kG;
}
template <int T>
__host__ __device__ constexpr int group_col(int gp) {
  return gp % Shape<T>::kG;
}

// B register r (< kBRegs) of lane `lane`, byte i: the group (k32 chunk r / 2: 8 (r / 2) + 4 (r % 2)
// + t; the k16: 8 kFull + t) and column g.
template <int T>
int b_group(int r, int lane) {
  const int t = lane % 4;
  return r < 2 * Shape<T>::kFull ? 8 * (r / 2) + 4 * (r % 2) + t : 8 * Shape<T>::kFull + t;
}

// digits[s][(c * T + y) * T + x] (correlation order): the B fragments, [c][r][lane].
template <int T>
std::vector<int32_t> b_fragments(const detail::SplitFilter& split) {
  using S = Shape<T>;
  const int taps = T * T * T;
  std::vector<int32_t> f(static_cast<size_t>(T * S::kBRegs * 32));
  for (int c = 0; c < T; ++c)
    for (int r = 0; r < S::kBRegs; ++r)
      for (int lane = 0; lane < 32; ++lane) {
        const int gp = b_group<T>(r, lane), n = lane / 4, j = n / 4, s = n % 4;
        uint32_t word = 0;
        for (int i = 0; i < 4; ++i) {
          const int ax = 4 * group_col<T>(gp) + i, ay = group_row<T>(gp) - j;
          int8_t d = 0;
          if (ax < T && ay >= 0 && ay < T)
            d = split.digits[static_cast<size_t>(s * taps + (c * T + ay) * T + ax)];
          word |= uint32_t{static_cast<uint8_t>(d)} << (8 * i);
        }
        f[static_cast<size_t>((c * S::kBRegs + r) * 32 + lane)] = static_cast<int32_t>(word);
      }
  return f;
}

__device__ __forceinline__ void mma_k32(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_k16(int32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

struct Args {
  const uint8_t* in;  // padded: (n + T - 1)^2 rows of row_bytes, planes of plane_bytes
  int64_t row_bytes, plane_bytes;
  int n;   // outputs per axis (a multiple of the block's extents along x and y)
  int zs;  // output planes per block
  const int32_t* b;
  float scale;
  float* out;  // n^3, x fastest
};

// Block: WX x WY warps; a warp MT M tiles along x (16 MT outputs) by 2 rows along y.
template <int T, int MT, int WX, int WY>
struct Tile {
  using S = Shape<T>;
  static constexpr int kThreads = 32 * WX * WY;
  static constexpr int kBX = 16 * MT * WX, kBY = 2 * WY;
  static constexpr int kRows = kBY + T - 1;                               // staged rows per plane
  static constexpr int kWords = ((kBX + 4 * S::kG + 4) / 4 + 3) / 4 * 4;  // staged words per row
  static constexpr int kStride = kWords % 32 == 0 ? kWords + 4 : kWords;  // words between rows
  static constexpr int kPlaneWords = kRows * kStride;
  static constexpr int kRing = 3;  // planes in flight
  static constexpr int kShared = kRing * kPlaneWords * 4;
};

// The word (from the staged plane's first) where A register q of M tile m of chunk ch (ch ==
// kFull: the k16, q < 2) of lane `lane` in warp (wx, wy) starts: group 8 ch + 4 (q >> 1) + t (the
// k16: 8 kFull + t), row 2 wy + its row, byte 16 (MT wx + m) + g + 8 (q & 1) + 4 its column; the
// 4 bytes are the funnel shift of this word and the next by 8 (g % 4) bits.
template <int T, int MT, int WX, int WY>
__host__ __device__ int a_offset(int lane, int wx, int wy, int ch, int q, int m) {
  using S = Shape<T>;
  using L = Tile<T, MT, WX, WY>;
  const int g = lane / 4, t = lane % 4;
  const int gl = ch < S::kFull ? 8 * ch + 4 * (q >> 1) + t : 8 * S::kFull + t;
  return (2 * wy + group_row<T>(gl)) * L::kStride +
         (16 * (MT * wx + m) + g + 8 * (q & 1) + 4 * group_col<T>(gl)) / 4;
}
__host__ __device__ inline int a_shift(int lane) {
  return 8 * (lane / 4 % 4);
}
// The output (from the block's first) that lane `lane` of warp (wx, wy) writes for M tile m after
// the epilogue's exchange: x 16 (MT wx + m) + g + 8 (t & 1), y 2 wy + t / 2.
template <int MT>
__host__ __device__ int out_x(int lane, int wx, int m) {
  return 16 * (MT * wx + m) + lane / 4 + 8 * (lane % 4 & 1);
}
__host__ __device__ inline int out_y(int lane, int wy) {
  return 2 * wy + lane % 4 / 2;
}
// The digits a lane holds after the exchange: its C registers c and the partner's (lane ^ 1) r.
__host__ __device__ inline void lane_digits(const int32_t* c, int32_t r0, int32_t r1, bool odd,
                                            int32_t (&d)[4]) {
  d[0] = odd ? r0 : c[0];
  d[1] = odd ? r1 : c[1];
  d[2] = odd ? c[2] : r0;
  d[3] = odd ? c[3] : r1;
}
__host__ __device__ inline int32_t sent(const int32_t* c, bool odd, int i) {
  return odd ? c[i] : c[2 + i];
}

template <int T, int MT, int WX, int WY>
__global__ void __launch_bounds__(32 * WX * WY) dense_tc_kernel(Args a) {
  using S = Shape<T>;
  using L = Tile<T, MT, WX, WY>;
  extern __shared__ uint4 shared16[];
  uint32_t* const ring = reinterpret_cast<uint32_t*>(shared16);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wx = warp % WX, wy = warp / WX, g = lane / 4, t = lane % 4;
  const int x_b = blockIdx.x * L::kBX, y_b = blockIdx.y * L::kBY, z_b = blockIdx.z * a.zs;
  const int planes = min(a.zs, a.n - z_b) + T - 1;

  uint32_t b[T][S::kBRegs];
#pragma unroll
  for (int c = 0; c < T; ++c)
#pragma unroll
    for (int r = 0; r < S::kBRegs; ++r)
      b[c][r] = static_cast<uint32_t>(__ldg(a.b + (c * S::kBRegs + r) * 32 + lane));

  auto stage = [&](int p) {
    uint32_t* dst = ring + (p % L::kRing) * L::kPlaneWords;
    const uint8_t* src = a.in + (z_b + p) * a.plane_bytes + int64_t{y_b} * a.row_bytes + x_b;
    for (int i = threadIdx.x; i < L::kRows * (L::kWords / 4); i += L::kThreads) {
      const int row = i / (L::kWords / 4), chunk = i % (L::kWords / 4);
      __pipeline_memcpy_async(dst + row * L::kStride + 4 * chunk,
                              src + row * a.row_bytes + 16 * chunk, 16);
    }
  };

  const int shift = a_shift(lane);

  int32_t acc[T][MT][4];
#pragma unroll
  for (int u = 0; u < T; ++u)
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[u][m][q] = 0;

  for (int p = 0; p < L::kRing - 1; ++p) {
    if (p < planes)
      stage(p);
    __pipeline_commit();
  }

#pragma unroll 1
  for (int base = 0; base < planes; base += T) {
#pragma unroll
    for (int u = 0; u < T; ++u) {
      const int p = base + u;
      if (p < planes) {
        __pipeline_wait_prior(L::kRing - 2);
        __syncthreads();  // plane p visible; every warp done with plane p - 1's slot
        if (p + L::kRing - 1 < planes)
          stage(p + L::kRing - 1);
        __pipeline_commit();
        const uint32_t* words = ring + (p % L::kRing) * L::kPlaneWords;
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            acc[u][m][q] = 0;  // output plane p starts (slot p mod T)
#pragma unroll
        for (int ch = 0; ch < S::kFull; ++ch) {
          uint32_t fa[MT][4];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const int off = a_offset<T, MT, WX, WY>(lane, wx, wy, ch, q, m);
              fa[m][q] = __funnelshift_r(words[off], words[off + 1], shift);
            }
#pragma unroll
          for (int c = 0; c < T; ++c)
#pragma unroll
            for (int m = 0; m < MT; ++m)
              mma_k32(acc[(u - c + T) % T][m], fa[m], b[c][2 * ch], b[c][2 * ch + 1]);
        }
        if constexpr (S::kHalf) {
          uint32_t fa[MT][2];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
              const int off = a_offset<T, MT, WX, WY>(lane, wx, wy, S::kFull, q, m);
              fa[m][q] = __funnelshift_r(words[off], words[off + 1], shift);
            }
#pragma unroll
          for (int c = 0; c < T; ++c)
#pragma unroll
            for (int m = 0; m < MT; ++m)
              mma_k16(acc[(u - c + T) % T][m], fa[m][0], fa[m][1], b[c][2 * S::kFull]);
        }
        // Output plane p - T + 1 is complete (slot (u + 1) mod T).
        const int o = p - (T - 1);
        if (o >= 0) {
          const int e = (u + 1) % T;
          const bool odd = t & 1;
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            const int32_t* c = acc[e][m];
            const int32_t r0 = __shfl_xor_sync(0xffffffffu, sent(c, odd, 0), 1);
            const int32_t r1 = __shfl_xor_sync(0xffffffffu, sent(c, odd, 1), 1);
            int32_t d[4];
            lane_digits(c, r0, r1, odd, d);
            const int x = x_b + out_x<MT>(lane, wx, m), y = y_b + out_y(lane, wy);
            a.out[(int64_t{z_b + o} * a.n + y) * a.n + x] = detail::combine_slices(d, 4, a.scale);
          }
        }
      }
    }
  }
}

// ---- the kernel on the host, lane by lane
// ---------------------------------------------------------

uint32_t host_funnel(uint32_t lo, uint32_t hi, int shift) {
  return static_cast<uint32_t>(((uint64_t{hi} << 32 | lo) >> shift) & 0xffffffffu);
}
int host_byte(uint32_t w, int i, bool is_signed) {
  const int b = (w >> (8 * i)) & 0xff;
  return is_signed && b > 127 ? b - 256 : b;
}
// D += A B for one warp: k32 (A 4 registers, B 2) or k16 (A 2, B 1), the PTX ISA's fragments.
void host_mma(int32_t (&c)[32][4], const uint32_t (&a)[32][4], const uint32_t (&b)[32][2],
              bool k32) {
  int am[16][32] = {}, bm[32][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      for (int q = 0; q < (k32 ? 4 : 2); ++q)
        am[g + 8 * (q & 1)][16 * (q >> 1) + 4 * t + i] = host_byte(a[lane][q], i, false);
      for (int q = 0; q < (k32 ? 2 : 1); ++q)
        bm[16 * q + 4 * t + i][g] = host_byte(b[lane][q], i, true);
    }
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q) {
      const int row = lane / 4 + 8 * (q >> 1), col = 2 * (lane % 4) + (q & 1);
      for (int k = 0; k < (k32 ? 32 : 16); ++k)
        c[lane][q] += am[row][k] * bm[k][col];
    }
}
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

// The kernel's blocks, planes, warps and lanes on the host (n small): the same offsets, slots and
// exchange. Returns the outputs.
template <int T, int MT, int WX, int WY>
std::vector<float> emulate(const Volume& v, int zs, const std::vector<int32_t>& frag, float scale) {
  using S = Shape<T>;
  using L = Tile<T, MT, WX, WY>;
  const int n = v.n;
  std::vector<float> out(static_cast<size_t>(n) * n * n, std::nanf(""));
  std::vector<uint32_t> plane(L::kPlaneWords);
  for (int bz = 0; bz * zs < n; ++bz)
    for (int by = 0; by < n / L::kBY; ++by)
      for (int bx = 0; bx < n / L::kBX; ++bx) {
        const int x_b = bx * L::kBX, y_b = by * L::kBY, z_b = bz * zs;
        const int planes = std::min(zs, n - z_b) + T - 1;
        // acc[warp][slot][m][lane][4]
        std::vector<int32_t> acc(static_cast<size_t>(WX * WY * T * MT * 32 * 4), 0);
        auto A = [&](int w, int u, int m) {
          return reinterpret_cast<int32_t(*)[4]>(
              &acc[static_cast<size_t>(((w * T + u) * MT + m) * 32 * 4)]);
        };
        for (int p = 0; p < planes; ++p) {
          for (int r = 0; r < L::kRows; ++r)
            for (int w = 0; w < L::kWords; ++w) {
              uint32_t word = 0;
              for (int i = 0; i < 4; ++i)
                word |= uint32_t{v.bytes[static_cast<size_t>(
                            (z_b + p) * v.plane_bytes + (y_b + r) * v.row_bytes + x_b + 4 * w + i)]}
                        << (8 * i);
              plane[static_cast<size_t>(r * L::kStride + w)] = word;
            }
          const int u = p % T;
          for (int warp = 0; warp < WX * WY; ++warp) {
            const int wx = warp % WX, wy = warp / WX;
            for (int m = 0; m < MT; ++m)
              for (int lane = 0; lane < 32; ++lane)
                for (int q = 0; q < 4; ++q)
                  A(warp, u, m)[lane][q] = 0;
            for (int ch = 0; ch <= S::kFull; ++ch) {
              const bool k32 = ch < S::kFull;
              if (!k32 && !S::kHalf)
                break;
              for (int m = 0; m < MT; ++m) {
                uint32_t fa[32][4] = {};
                for (int lane = 0; lane < 32; ++lane)
                  for (int q = 0; q < (k32 ? 4 : 2); ++q) {
                    const int off = a_offset<T, MT, WX, WY>(lane, wx, wy, ch, q, m);
                    fa[lane][q] = host_funnel(plane[static_cast<size_t>(off)],
                                              plane[static_cast<size_t>(off + 1)], a_shift(lane));
                  }
                for (int c = 0; c < T; ++c) {
                  uint32_t fb[32][2] = {};
                  for (int lane = 0; lane < 32; ++lane)
                    for (int q = 0; q < (k32 ? 2 : 1); ++q)
                      fb[lane][q] = static_cast<uint32_t>(
                          frag[static_cast<size_t>((c * S::kBRegs + 2 * ch + q) * 32 + lane)]);
                  host_mma(*reinterpret_cast<int32_t(*)[32][4]>(A(warp, (u - c + T) % T, m)), fa,
                           fb, k32);
                }
              }
            }
            const int o = p - (T - 1);
            if (o >= 0)
              for (int m = 0; m < MT; ++m) {
                int32_t(*c)[4] = A(warp, (u + 1) % T, m);
                for (int lane = 0; lane < 32; ++lane) {
                  const bool odd = lane & 1;
                  int32_t d[4];
                  lane_digits(c[lane], sent(c[lane ^ 1], !odd, 0), sent(c[lane ^ 1], !odd, 1), odd,
                              d);
                  const int x = x_b + out_x<MT>(lane, wx, m), y = y_b + out_y(lane, wy);
                  out[static_cast<size_t>((int64_t{z_b + o} * n + y) * n + x)] =
                      detail::combine_slices(d, 4, scale);
                }
              }
          }
        }
      }
  return out;
}

struct Device {
  uint8_t* in = nullptr;
  float* out = nullptr;
  float* ref = nullptr;
  int32_t* b = nullptr;
  int8_t* digits = nullptr;
  float* taps = nullptr;
};

template <int T, int MT, int WX, int WY>
bool launch(const Args& a) {
  using L = Tile<T, MT, WX, WY>;
  auto kernel = dense_tc_kernel<T, MT, WX, WY>;
  if (L::kShared > 48 * 1024)
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kShared));
  if (a.n % L::kBX || a.n % L::kBY)
    return false;
  const dim3 grid(a.n / L::kBX, a.n / L::kBY, (a.n + a.zs - 1) / a.zs);
  kernel<<<grid, L::kThreads, L::kShared>>>(a);
  return true;
}

struct Variant {
  const char* name;
  int t;
  bool (*run)(const Args&);
  int (*regs)();
  std::vector<float> (*emulate)(const Volume&, int, const std::vector<int32_t>&, float);
};

template <int T, int MT, int WX, int WY>
int regs_of() {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, dense_tc_kernel<T, MT, WX, WY>));
  return attr.numRegs * 1000 + static_cast<int>(attr.localSizeBytes);
}

#define VARIANT(T, MT, WX, WY)                                                              \
  Variant {                                                                                 \
    "t" #T " mt" #MT " wx" #WX " wy" #WY, T, launch<T, MT, WX, WY>, regs_of<T, MT, WX, WY>, \
        emulate<T, MT, WX, WY>                                                              \
  }

const Variant kVariants[] = {
    VARIANT(7, 1, 1, 4),  VARIANT(7, 1, 1, 8),  VARIANT(7, 2, 1, 4),  VARIANT(7, 2, 2, 4),
    VARIANT(7, 2, 2, 2),  VARIANT(7, 4, 1, 4),  VARIANT(7, 2, 1, 8),  VARIANT(7, 4, 1, 8),
    VARIANT(11, 1, 1, 2), VARIANT(11, 1, 1, 4), VARIANT(11, 1, 1, 8), VARIANT(11, 2, 1, 4),
    VARIANT(11, 1, 2, 4), VARIANT(11, 1, 2, 2),
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
  std::vector<int32_t> frag = t == 7 ? b_fragments<7>(split) : b_fragments<11>(split);
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
        Args a{d.in, v.row_bytes, v.plane_bytes, n, zs, d.b, split.scale, d.out};
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

// Every variant's host emulation against the host's integer sums, every voxel of a small volume.
int emulate_all() {
  int failures = 0;
  for (int t : {7, 11}) {
    const int n = 64, zs = 24;
    const std::vector<float> taps = make_taps(t, 1000 + t);
    const detail::SplitFilter split = detail::split_filter(taps.data(), int64_t{t} * t * t, 4);
    const std::vector<int32_t> frag = t == 7 ? b_fragments<7>(split) : b_fragments<11>(split);
    const Volume v = make_volume(n, t, Data::Uniform, 3 + t);
    std::vector<float> expect(static_cast<size_t>(n) * n * n);
    for (int z = 0; z < n; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          expect[static_cast<size_t>((z * n + y) * n + x)] = host_exact(v, split, x, y, z);
    for (const Variant& var : kVariants) {
      if (var.t != t)
        continue;
      const std::vector<float> got = var.emulate(v, zs, frag, split.scale);
      int64_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        bad += std::memcmp(&got[i], &expect[i], 4) != 0;
      std::printf("emulation %-22s n %d zs %d: %lld of %zu differ\n", var.name, n, zs,
                  static_cast<long long>(bad), got.size());
      failures += bad != 0;
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  if (argc > 1 && std::string(argv[1]) == "emulate")
    return emulate_all() ? 1 : 0;
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
