// Experiment: a one-pass separable Gaussian for the `gauss3d_s2` row (256^3, sigma 2, 17 taps per
// axis, zero boundary) that streams each column of tiles along z. Per input plane: one bulk tensor
// copy of the tile and its halo (STAGES deep), the x pass from shared memory (4 outputs per thread
// from a sliding window), the y pass (4 outputs per thread down a column), and the z pass as a
// ring of 17 accumulators per output in registers (each plane's y result added into the 17 output
// planes it reaches; the ring's slots are compile-time because the plane loop is unrolled by 17).
// Each axis sums its taps in ascending order from zero, as three naive passes do, so the result is
// checked bit for bit against three naive passes on the GPU (x, then y, then z), and timed against
// the memory floor at the copy bandwidth measured in the same run.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 -I src -I . dev/gauss_one_pass.cu -o gauss_one_pass
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "kernels/bulk_copy.h"

using namespace ndconv::kernels;

constexpr int kN = 256, kK = 17, kR = kK / 2;
__constant__ float c_taps[kK];

__global__ void naive_pass(const float* in, float* out, int axis) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= int64_t(kN) * kN * kN)
    return;
  const int c[3] = {int(i % kN), int(i / kN % kN), int(i / (kN * kN))};
  const int64_t stride = axis == 0 ? 1 : axis == 1 ? kN : int64_t(kN) * kN;
  float acc = 0.0f;
  for (int j = 0; j < kK; ++j) {
    const int p = c[axis] - kR + j;
    if (p >= 0 && p < kN)
      acc = fmaf(c_taps[j], in[i + (p - c[axis]) * stride], acc);
  }
  out[i] = acc;
}

// TX x TY outputs per plane; THREADS threads; ZC output planes per block; STAGES planes in flight.
// MATH false: the same copies, shared-memory traffic and stores without the filters (the output is
// wrong by design): the data movement's own time.
template <int TX, int TY, int ZC, int STAGES, int THREADS, int MIN_BLOCKS, bool MATH = true>
struct Shape {
  static constexpr bool kMath = MATH;
  static constexpr int kTx = TX, kTy = TY, kZc = ZC, kStages = STAGES, kThreads = THREADS,
                       kMinBlocks = MIN_BLOCKS;
  static constexpr int kInX = TX + 2 * kR, kInY = TY + 2 * kR;  // the tile with its halo
  static constexpr int kPlaneFloats = kInX * kInY;
  static constexpr int kXTasks = kInY * (TX / 4);  // x pass: rows x groups of 4 outputs
  static constexpr int kYRun = TX * TY / THREADS;  // y pass: outputs per thread down a column
  static_assert(TX * TY % THREADS == 0 && THREADS % TX == 0, "threads tile the plane");
  static_assert(TY % kYRun == 0, "a thread's y run stays in the tile");
  static constexpr size_t kSmem =
      sizeof(float) * (size_t(STAGES) * kPlaneFloats + 2 * size_t(kInY) * TX) + 64;
};

template <typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    gauss_one_pass(const __grid_constant__ TensorMap map, float* out) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  float* planes = reinterpret_cast<float*>(smem_raw);
  float* xbuf = planes + S::kStages * S::kPlaneFloats;  // two planes of x results, TX wide
  uint64_t* bars = reinterpret_cast<uint64_t*>(xbuf + 2 * S::kInY * S::kTx);
  const int tid = threadIdx.x;
  const int x0 = blockIdx.x * S::kTx, y0 = blockIdx.y * S::kTy, z0 = blockIdx.z * S::kZc;
  constexpr int kPlanes = S::kZc + 2 * kR;
  constexpr int kBytes = S::kPlaneFloats * sizeof(float);
  if (tid == 0) {
    for (int s = 0; s < S::kStages; ++s)
      bulk_barrier_init(&bars[s]);
  }
  __syncthreads();
  if (tid == 0) {
    for (int s = 0; s < S::kStages && s < kPlanes; ++s) {
      const int c[4] = {x0 - kR, y0 - kR, z0 - kR + s, 0};
      bulk_copy_box(map, c, planes + s * S::kPlaneFloats, &bars[s], kBytes);
    }
  }
  float t[kK];
#pragma unroll
  for (int k = 0; k < kK; ++k)
    t[k] = c_taps[k];
  // The y pass's thread: column x, rows ry .. ry + kYRun - 1 of the tile.
  const int yx = tid % S::kTx, ry = tid / S::kTx * S::kYRun;
  float ring[kK][S::kYRun];
#pragma unroll
  for (int k = 0; k < kK; ++k)
#pragma unroll
    for (int j = 0; j < S::kYRun; ++j)
      ring[k][j] = 0.0f;

  for (int base = 0; base < kPlanes; base += kK) {
#pragma unroll
    for (int r = 0; r < kK; ++r) {
      const int p = base + r;
      if (p >= kPlanes)
        break;
      const int s = p % S::kStages;
      bulk_wait(&bars[s], (p / S::kStages) & 1);
      const float* plane = planes + s * S::kPlaneFloats;
      float* xb = xbuf + (p & 1) * S::kInY * S::kTx;
      for (int task = tid; task < S::kXTasks; task += S::kThreads) {
        const int row = task / (S::kTx / 4), xg = task % (S::kTx / 4) * 4;
        float w[4 + kK - 1];
#pragma unroll
        for (int m = 0; m < 4 + kK - 1; m += 4) {
          const float4 f = *reinterpret_cast<const float4*>(plane + row * S::kInX + xg + m);
          w[m] = f.x, w[m + 1] = f.y, w[m + 2] = f.z, w[m + 3] = f.w;
        }
        float a[4] = {w[kR], w[kR + 1], w[kR + 2], w[kR + 3]};
        if (S::kMath) {
          a[0] = a[1] = a[2] = a[3] = 0.0f;
#pragma unroll
          for (int k = 0; k < kK; ++k)
#pragma unroll
            for (int i = 0; i < 4; ++i)
              a[i] = fmaf(t[k], w[i + k], a[i]);
        }
        *reinterpret_cast<float4*>(xb + row * S::kTx + xg) = make_float4(a[0], a[1], a[2], a[3]);
      }
      bulk_fence_shared();
      __syncthreads();
      if (tid == 0 && p + S::kStages < kPlanes) {
        const int c[4] = {x0 - kR, y0 - kR, z0 - kR + p + S::kStages, 0};
        bulk_copy_box(map, c, planes + s * S::kPlaneFloats, &bars[s], kBytes);
      }
      float col[S::kYRun + kK - 1];
#pragma unroll
      for (int m = 0; m < S::kYRun + kK - 1; ++m)
        col[m] = xb[(ry + m) * S::kTx + yx];
      float v[S::kYRun];
#pragma unroll
      for (int j = 0; j < S::kYRun; ++j)
        v[j] = S::kMath ? 0.0f : col[j + kR];
#pragma unroll
      for (int k = 0; k < kK && S::kMath; ++k)
#pragma unroll
        for (int j = 0; j < S::kYRun; ++j)
          v[j] = fmaf(t[k], col[j + k], v[j]);
          // Plane p reaches output planes o = p - k (tap k); output o lives in ring slot o % 17,
          // which is (r - k) mod 17 here: compile-time.
#pragma unroll
      for (int k = 0; k < kK; ++k) {
        const int slot = (r - k + kK) % kK;
#pragma unroll
        for (int j = 0; j < S::kYRun; ++j)
          ring[slot][j] = S::kMath ? fmaf(t[k], v[j], ring[slot][j]) : v[j];
      }
      const int o = p - 2 * kR;  // complete: its last tap came now
      const int done = (r - 2 * kR + kK) % kK;
      if (o >= 0) {
        float* dst = out + (int64_t(z0 + o) * kN + y0 + ry) * kN + x0 + yx;
#pragma unroll
        for (int j = 0; j < S::kYRun; ++j)
          dst[int64_t(j) * kN] = ring[done][j];
      }
#pragma unroll
      for (int j = 0; j < S::kYRun; ++j)
        ring[done][j] = 0.0f;
    }
  }
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

TensorMap make_map(const float* in, int box_x, int box_y) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &found));
  const cuuint64_t dims[4] = {kN, kN, kN, 1};
  const cuuint64_t strides[3] = {kN * 4ull, kN * kN * 4ull, uint64_t(kN) * kN * kN * 4ull};
  const cuuint32_t box[4] = {cuuint32_t(box_x), cuuint32_t(box_y), 1, 1};
  const cuuint32_t es[4] = {1, 1, 1, 1};
  CUtensorMap m;
  const CUresult r = reinterpret_cast<EncodeTiled>(f)(
      &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, const_cast<float*>(in), dims, strides, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "encode failed %d\n", int(r));
    std::exit(1);
  }
  TensorMap t;
  std::memcpy(&t, &m, sizeof t);
  return t;
}

constexpr size_t kVoxels = size_t(kN) * kN * kN;

template <typename S>
void run_shape(const char* name, const float* in, float* out, const std::vector<float>& want,
               double floor_ms) {
  const TensorMap map = make_map(in, S::kInX, S::kInY);
  CHECK(cudaFuncSetAttribute(gauss_one_pass<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(S::kSmem)));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, gauss_one_pass<S>));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gauss_one_pass<S>, S::kThreads,
                                                      S::kSmem));
  const dim3 grid(kN / S::kTx, kN / S::kTy, kN / S::kZc);
  CHECK(cudaMemset(out, 0xff, kVoxels * 4));  // NaN
  gauss_one_pass<S><<<grid, S::kThreads, S::kSmem>>>(map, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> got(kVoxels);
  CHECK(cudaMemcpy(got.data(), out, kVoxels * 4, cudaMemcpyDeviceToHost));
  size_t differ = 0, nan = 0;
  double worst = 0.0;
  for (size_t i = 0; i < kVoxels; ++i) {
    if (std::isnan(got[i]))
      ++nan;
    else if (std::memcmp(&got[i], &want[i], 4) != 0)
      ++differ, worst = std::max(worst, double(std::fabs(got[i] - want[i])));
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int rep = 0; rep < 7; ++rep) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 20; ++i)
      gauss_one_pass<S><<<grid, S::kThreads, S::kSmem>>>(map, out);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t / 20);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  std::printf(
      "%-28s regs %3d spill %4zu B, %d/SM, grid %4d: %.4f ms (min %.4f) = %.2fx floor; "
      "%zu NaN, %zu differ (max %.3g)\n",
      name, fa.numRegs, size_t(fa.localSizeBytes), per_sm, grid.x * grid.y * grid.z, ms[3], ms[0],
      ms[3] / floor_ms, nan, differ, worst);
}

int main() {
  std::vector<float> h(kVoxels);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : h)
    v = u(rng);
  float taps[kK];
  double sum = 0;
  for (int k = 0; k < kK; ++k)
    sum += std::exp(-0.5 * (k - kR) * (k - kR) / 4.0);
  for (int k = 0; k < kK; ++k)
    taps[k] = float(std::exp(-0.5 * (k - kR) * (k - kR) / 4.0) / sum);
  CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof taps));
  float *in, *out, *tmp;
  CHECK(cudaMalloc(&in, kVoxels * 4));
  CHECK(cudaMalloc(&out, kVoxels * 4));
  CHECK(cudaMalloc(&tmp, kVoxels * 4));
  CHECK(cudaMemcpy(in, h.data(), kVoxels * 4, cudaMemcpyHostToDevice));
  // Reference: x, then y, then z, each tap sum ascending from zero.
  const int blocks = int((kVoxels + 255) / 256);
  naive_pass<<<blocks, 256>>>(in, out, 0);
  naive_pass<<<blocks, 256>>>(out, tmp, 1);
  naive_pass<<<blocks, 256>>>(tmp, out, 2);
  CHECK(cudaGetLastError());
  std::vector<float> want(kVoxels);
  CHECK(cudaMemcpy(want.data(), out, kVoxels * 4, cudaMemcpyDeviceToHost));
  // The copy bandwidth (read + write) of a 1 GiB device-to-device copy, in this run.
  float *ca, *cb;
  const size_t copy_bytes = size_t(1) << 30;
  CHECK(cudaMalloc(&ca, copy_bytes));
  CHECK(cudaMalloc(&cb, copy_bytes));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> cms;
  for (int i = 0; i < 6; ++i) {
    CHECK(cudaEventRecord(a));
    CHECK(cudaMemcpyAsync(cb, ca, copy_bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t;
    CHECK(cudaEventElapsedTime(&t, a, b));
    cms.push_back(t);
  }
  std::sort(cms.begin(), cms.end());
  const double gbs = 2.0 * copy_bytes / (cms[1] * 1e-3) / 1e9;
  const double floor_ms = 2.0 * kVoxels * 4 / (gbs * 1e9) * 1e3;
  std::printf("copy bandwidth %.0f GB/s; memory floor of 256^3 in + out: %.4f ms\n", gbs, floor_ms);
  CHECK(cudaFree(ca));
  CHECK(cudaFree(cb));
  run_shape<Shape<32, 32, 64, 4, 256, 1>>("32x32 z64 st4 t256", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 64, 4, 256, 2>>("32x32 z64 st4 t256 2/SM", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 128, 4, 256, 1>>("32x32 z128 st4 t256", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 64, 6, 256, 1>>("32x32 z64 st6 t256", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 32, 4, 256, 1>>("32x32 z32 st4 t256", in, out, want, floor_ms);
  run_shape<Shape<64, 16, 128, 4, 256, 1>>("64x16 z128 st4 t256", in, out, want, floor_ms);
  run_shape<Shape<64, 16, 64, 4, 256, 1>>("64x16 z64 st4 t256", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 64, 4, 512, 1>>("32x32 z64 st4 t512", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 128, 4, 512, 1>>("32x32 z128 st4 t512", in, out, want, floor_ms);
  run_shape<Shape<64, 16, 64, 4, 512, 1>>("64x16 z64 st4 t512", in, out, want, floor_ms);
  run_shape<Shape<64, 16, 128, 6, 512, 1>>("64x16 z128 st6 t512", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 64, 4, 512, 2>>("32x32 z64 st4 t512 2/SM", in, out, want, floor_ms);
  run_shape<Shape<32, 32, 64, 4, 256, 1, false>>("32x32 z64 st4 t256 no math", in, out, want,
                                                 floor_ms);
  run_shape<Shape<32, 32, 64, 4, 512, 1, false>>("32x32 z64 st4 t512 no math", in, out, want,
                                                 floor_ms);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(tmp));
  return 0;
}
