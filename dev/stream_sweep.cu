// Experiment: shapes of the streaming kernel of separable filters (src/cuda/separable/
// stream_thread.h, stream_kernel.cuh) for the `gauss3d_s2` row (256^3, sigma 2, 17 taps per axis,
// zero boundary): tile, threads, stages, blocks per SM and chunk along z, each checked bit for bit
// against three naive passes on the GPU (x, then y, then z, each tap sum ascending from zero) and
// timed against the memory floor at the copy bandwidth measured in the same run. Then the
// product's shape on volumes whose extents are not multiples of its tile, under every boundary the
// kernels see (the face tiles' halo: tiled/tiled_halo.h), bit for bit against the naive passes.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 -I src -I . dev/stream_sweep.cu -o stream_sweep
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/separable/stream_kernel.cuh"
#include "cuda/separable/stream_plan.h"
#include "cuda_check.h"

using namespace ndconv;
using namespace ndconv::kernels;

constexpr int kK = 17, kR = kK / 2;
__constant__ float c_taps[kK];

struct Dims {
  int n[3];
  __host__ __device__ int64_t count() const { return int64_t(n[0]) * n[1] * n[2]; }
};

__global__ void naive_pass(const float* in, float* out, Dims d, int axis, int boundary) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count())
    return;
  const int c[3] = {int(i % d.n[0]), int(i / d.n[0] % d.n[1]), int(i / (int64_t(d.n[0]) * d.n[1]))};
  const int64_t stride = axis == 0 ? 1 : axis == 1 ? d.n[0] : int64_t(d.n[0]) * d.n[1];
  float acc = 0.0f;
  for (int j = 0; j < kK; ++j) {
    const int p = boundary_index_t<int>(c[axis] - kR + j, d.n[axis], boundary);
    acc = fmaf(c_taps[j], p < 0 ? 0.0f : in[i + (p - c[axis]) * stride], acc);
  }
  out[i] = acc;
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

TensorMap make_map(const float* in, Dims d, int box_x, int box_y) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &found));
  const cuuint64_t row = uint64_t(d.n[0]) * 4, plane = row * d.n[1];
  const cuuint64_t dims[4] = {cuuint64_t(d.n[0]), cuuint64_t(d.n[1]), 1, cuuint64_t(d.n[2])};
  const cuuint64_t strides[3] = {row, plane, plane};
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

Geometry geometry(Dims d, int boundary) {
  Geometry g{};
  const int64_t n[4] = {d.n[0], d.n[1], 1, d.n[2]};
  const int64_t stride[4] = {1, d.n[0], int64_t(d.n[0]) * d.n[1], int64_t(d.n[0]) * d.n[1]};
  for (int a = 0; a < 4; ++a) {
    g.in_extent[a] = g.out_extent[a] = n[a];
    g.in_stride[a] = g.out_stride[a] = stride[a];
    g.filter_extent[a] = a == 2 ? 1 : kK;
    g.offset[a] = a == 2 ? 0 : -kR;
  }
  g.boundary = boundary;
  return g;
}

StreamTaps g_taps;

// The naive passes' result for d under boundary b (x, then y, then z).
std::vector<float> reference(const float* in, float* out, float* tmp, Dims d, int b) {
  const int blocks = int((d.count() + 255) / 256);
  naive_pass<<<blocks, 256>>>(in, out, d, 0, b);
  naive_pass<<<blocks, 256>>>(out, tmp, d, 1, b);
  naive_pass<<<blocks, 256>>>(tmp, out, d, 2, b);
  CHECK(cudaGetLastError());
  std::vector<float> want(d.count());
  CHECK(cudaMemcpy(want.data(), out, d.count() * 4, cudaMemcpyDeviceToHost));
  return want;
}

// Runs shape S on d (boundary b, `resident` blocks for the chunks: 0 one chunk) and compares with
// `want`; times it when floor_ms > 0.
template <typename S>
bool run_shape(const char* name, const float* in, float* out, Dims d, int b, int64_t resident,
               const std::vector<float>& want, double floor_ms) {
  const Geometry g = geometry(d, b);
  StreamLayout l = cuda_backend::stream_layout_for<S>(g);
  if (l.halo.halo_slots < 0) {
    std::printf("%s: halo unfit\n", name);
    return false;
  }
  const TensorMap map = make_map(in, d, l.box_x, l.box_y);
  auto kernel = stream_kernel<kK, S>;
  const int smem = l.total_floats * 4;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, kernel));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, S::kThreads, smem));
  const LaunchShape s = stream_launch_shape<S>(g, l, resident < 0 ? 132 * per_sm : resident, 32);
  const dim3 grid(unsigned(s.grid[0]), unsigned(s.grid[1]), unsigned(s.grid[2]));
  CHECK(cudaMemset(out, 0xff, d.count() * 4));  // NaN
  kernel<<<grid, S::kThreads, smem>>>(g, l, g_taps, map, in, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> got(d.count());
  CHECK(cudaMemcpy(got.data(), out, d.count() * 4, cudaMemcpyDeviceToHost));
  size_t differ = 0, nan = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]))
      ++nan;
    else if (std::memcmp(&got[i], &want[i], 4) != 0)
      ++differ, worst = std::max(worst, double(std::fabs(got[i] - want[i])));
  }
  const bool ok = nan == 0 && differ == 0;
  if (floor_ms <= 0) {
    std::printf("%-34s %dx%dx%d boundary %d halo %d slots %s: %zu NaN, %zu differ (max %.3g) %s\n",
                name, d.n[0], d.n[1], d.n[2], b, l.halo.halo_slots,
                l.halo.halo_local ? "local" : "direct", nan, differ, worst, ok ? "OK" : "FAIL");
    return ok;
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int rep = 0; rep < 7; ++rep) {
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < 20; ++i)
      kernel<<<grid, S::kThreads, smem>>>(g, l, g_taps, map, in, out);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t / 20);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  std::printf(
      "%-34s regs %3d spill %4zu B, %d/SM, grid %4d chunk %3d: %.4f ms (min %.4f) = "
      "%.2fx floor; %zu NaN, %zu differ %s\n",
      name, fa.numRegs, size_t(fa.localSizeBytes), per_sm, int(grid.x * grid.y * grid.z), l.chunk,
      ms[3], ms[0], ms[3] / floor_ms, nan, differ, ok ? "OK" : "FAIL");
  return ok;
}

int main() {
  float taps[kK];
  double sum = 0;
  for (int k = 0; k < kK; ++k)
    sum += std::exp(-0.5 * (k - kR) * (k - kR) / 4.0);
  for (int k = 0; k < kK; ++k)
    taps[k] = float(std::exp(-0.5 * (k - kR) * (k - kR) / 4.0) / sum);
  CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof taps));
  for (int k = 0; k < kK; ++k)
    g_taps.x[k] = g_taps.y[k] = g_taps.z[k] = taps[k];
  const Dims big{{256, 256, 256}};
  std::vector<float> h(big.count());
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : h)
    v = u(rng);
  float *in, *out, *tmp;
  CHECK(cudaMalloc(&in, big.count() * 4));
  CHECK(cudaMalloc(&out, big.count() * 4));
  CHECK(cudaMalloc(&tmp, big.count() * 4));
  CHECK(cudaMemcpy(in, h.data(), big.count() * 4, cudaMemcpyHostToDevice));
  int failures = 0;

  // The product's shape on smaller volumes, every boundary the kernels see, one chunk and chunks.
  using P = StreamShape;
  for (Dims d : {Dims{{100, 70, 50}}, Dims{{12, 7, 5}}, Dims{{40, 33, 90}}}) {
    for (int b : {kZero, kReplicate, kMirror, kPeriodic, kReflect}) {
      const std::vector<float> want = reference(in, out, tmp, d, b);
      for (int64_t resident : {int64_t(0), int64_t(40)})
        failures += !run_shape<P>("product shape", in, out, d, b, resident, want, 0);
    }
  }

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
  const double floor_ms = 2.0 * big.count() * 4 / (gbs * 1e9) * 1e3;
  std::printf("copy bandwidth %.0f GB/s; memory floor of 256^3 in + out: %.4f ms\n", gbs, floor_ms);
  CHECK(cudaFree(ca));
  CHECK(cudaFree(cb));

  const std::vector<float> want = reference(in, out, tmp, big, kZero);
  // resident -1: the device's resident blocks (132 SMs x blocks per SM), chunks of >= 32 planes.
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 2>>("32x32 t256 st4 2/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 3, 2>>("32x32 t256 st3 2/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 6, 2>>("32x32 t256 st6 2/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 2>>("32x32 t256 st4 2/SM z32", in, out, big,
                                                           kZero, 512, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 1>>("32x32 t256 st4 1/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<64, 16, 256, 4, 2>>("64x16 t256 st4 2/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 16, 128, 4, 4>>("32x16 t128 st4 4/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 64, 512, 4, 1>>("32x64 t512 st4 1/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<64, 32, 512, 4, 1>>("64x32 t512 st4 1/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 512, 4, 2>>("32x32 t512 st4 2/SM", in, out, big,
                                                           kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 2, 4, true>>(
      "32x32 t256 st4 2/SM z taps in regs", in, out, big, kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 64, 512, 4, 1, 4, true>>(
      "32x64 t512 st4 1/SM z taps in regs", in, out, big, kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 1, 4, true>>(
      "32x32 t256 st4 1/SM z taps in regs", in, out, big, kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 256, 4, 2, 8>>("32x32 t256 st4 2/SM x8", in, out,
                                                              big, kZero, -1, want, floor_ms);
  failures += !run_shape<StreamShapeOf<32, 32, 512, 4, 2, 8>>("32x32 t512 st4 2/SM x8", in, out,
                                                              big, kZero, -1, want, floor_ms);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(tmp));
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
