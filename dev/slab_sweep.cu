// Experiment: the slab kernel's compile-time shapes (cuda/separable/slab_thread.h: tile kTileX x
// kTileY, blocks per SM) and its chunks along z (as many as fill the
// device once, half or twice that), timed side by side on the bench's Gaussian (256^3, sigma 2,
// 17 taps per axis, zero boundary, data on the device) against the memory floor at the copy
// bandwidth measured in the same run. Every variant's output is compared with three naive passes
// on the GPU (float, max |difference| relative to the largest output); then the product's shape
// with phases left out, to see where its time goes. The winner goes into
// SlabShape and Tuning::slab_min_chunk; this file stays an experiment (not built by CMake).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I .
// [-DSLAB_SWEEP_N=272] dev/slab_sweep.cu -o slab_sweep
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/separable/separable_kernels.cuh"
#include "cuda_check.h"

using namespace ndconv::kernels;

// The volume's extent: 256 (the bench's Gaussian) or, with -DSLAB_SWEEP_N=272, an extent where the
// plan takes the slab kernel (a 256^3 block with its halo).
#ifndef SLAB_SWEEP_N
#define SLAB_SWEEP_N 256
#endif
constexpr int kN = SLAB_SWEEP_N, kK = 17;

// One naive 1D pass along `axis` (0, 1, 2) of an n^3 volume, zero boundary, centred taps.
__global__ void naive_pass(const float* in, float* out, const float* taps, int axis) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= int64_t(kN) * kN * kN)
    return;
  const int c[3] = {int(i % kN), int(i / kN % kN), int(i / (kN * kN))};
  const int64_t stride = axis == 0 ? 1 : axis == 1 ? kN : int64_t(kN) * kN;
  float acc = 0.0f;
  for (int j = 0; j < kK; ++j) {
    const int p = c[axis] - kK / 2 + j;
    if (p >= 0 && p < kN)
      acc = fmaf(taps[j], in[i + (p - c[axis]) * stride], acc);
  }
  out[i] = acc;
}

struct Context {
  float *in, *out, *ref, *flush;
  size_t flush_floats;
  Geometry g;
  SlabTaps taps;
  int sms;
  double copy_bytes_per_s;
};

float max_relative_difference(const Context& c) {
  const size_t n = size_t(kN) * kN * kN;
  std::vector<float> a(n), b(n);
  CHECK(cudaMemcpy(a.data(), c.out, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), c.ref, n * 4, cudaMemcpyDeviceToHost));
  double worst = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    scale = std::max(scale, std::fabs(double(b[i])));
    const double d = std::fabs(double(a[i]) - b[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return float(worst / scale);
}

// Median of 20 timed launches, each after writing a buffer of twice the L2 size.
template <typename Launch>
double time_ms(const Context& c, Launch launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w)
    launch();
  std::vector<float> ms;
  for (int r = 0; r < 20; ++r) {
    CHECK(cudaMemset(c.flush, r, c.flush_floats * 4));
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return 0.5 * (ms[9] + ms[10]);
}

template <typename S, int kPhases = 7>
void run_shape(Context& c, const char* name, bool all_chunks = true) {
  const auto kernel = slab_kernel<kK, S, kPhases>;
  SlabLayout l = slab_layout<kK, S>(c.g);
  l.vector_in = true;
  const int bytes = l.total_floats * 4;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, S::kThreads, bytes));
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const double floor_ms = 2.0 * kN * kN * double(kN) * 4 / c.copy_bytes_per_s * 1e3;
  for (double factor : {1.0, 0.5, 2.0}) {
    if (factor != 1.0 && !all_chunks)
      break;
    const int64_t resident = std::max<int64_t>(1, int64_t(factor * per_sm * c.sms));
    const LaunchShape s = slab_launch_shape<S>(c.g, l, resident, 16);
    auto launch = [&] {
      kernel<<<dim3(s.grid[0], s.grid[1], s.grid[2]), s.block[0], bytes>>>(c.g, l, c.taps, c.in,
                                                                           c.out);
    };
    CHECK(cudaMemset(c.out, 0xff, size_t(kN) * kN * kN * 4));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const float err = max_relative_difference(c);
    const double ms = time_ms(c, launch);
    std::printf(
        "%-22s regs %3d spill %4d B  %d/SM  grid %3lldx%3lldx%3lld chunk %3d  %.4f ms  "
        "%.2fx floor  err %.1e%s\n",
        name, attr.numRegs, int(attr.localSizeBytes), per_sm, (long long)s.grid[0],
        (long long)s.grid[1], (long long)s.grid[2], l.chunk, ms, ms / floor_ms, err,
        err < 1e-5f ? "" : "  WRONG");
  }
}

int main() {
  Context c{};
  const size_t n = size_t(kN) * kN * kN;
  int device = 0, l2 = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  CHECK(cudaMalloc(&c.in, n * 4));
  CHECK(cudaMalloc(&c.out, n * 4));
  CHECK(cudaMalloc(&c.ref, n * 4));
  c.flush_floats = size_t(2) * l2 / 4;
  CHECK(cudaMalloc(&c.flush, c.flush_floats * 4));
  std::vector<float> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : host)
    v = u(rng);
  CHECK(cudaMemcpy(c.in, host.data(), n * 4, cudaMemcpyHostToDevice));
  float taps[kK];
  double sum = 0;
  for (int j = 0; j < kK; ++j)
    sum += taps[j] = float(std::exp(-0.5 * (j - kK / 2) * (j - kK / 2) / 4.0));
  for (int j = 0; j < kK; ++j) {
    taps[j] = float(taps[j] / sum);
    c.taps.x[j] = c.taps.y[j] = c.taps.z[j] = taps[j];
  }
  // The reference: three naive passes.
  float *d_taps, *tmp;
  CHECK(cudaMalloc(&d_taps, sizeof taps));
  CHECK(cudaMalloc(&tmp, n * 4));
  CHECK(cudaMemcpy(d_taps, taps, sizeof taps, cudaMemcpyHostToDevice));
  const unsigned blocks = unsigned((n + 255) / 256);
  naive_pass<<<blocks, 256>>>(c.in, c.ref, d_taps, 0);
  naive_pass<<<blocks, 256>>>(c.ref, tmp, d_taps, 1);
  naive_pass<<<blocks, 256>>>(tmp, c.ref, d_taps, 2);
  CHECK(cudaDeviceSynchronize());
  // The copy bandwidth (bytes read + written), as the bench measures it.
  {
    const size_t bytes = size_t(1) << 30;
    float *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    float best = 1e9f;
    for (int r = 0; r < 5; ++r) {
      CHECK(cudaEventRecord(e0));
      CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      best = std::min(best, t);
    }
    c.copy_bytes_per_s = 2.0 * bytes / (best * 1e-3);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  // Geometry: canonical [x, y, 1, z], same region.
  for (int a = 0; a < kAxes; ++a) {
    c.g.in_extent[a] = c.g.out_extent[a] = a == 2 ? 1 : kN;
    c.g.filter_extent[a] = a == 2 ? 1 : kK;
    c.g.offset[a] = a == 2 ? 0 : -(kK / 2);
  }
  c.g.in_stride[0] = c.g.out_stride[0] = 1;
  c.g.in_stride[1] = c.g.out_stride[1] = kN;
  c.g.in_stride[2] = c.g.out_stride[2] = int64_t(kN) * kN;
  c.g.in_stride[3] = c.g.out_stride[3] = int64_t(kN) * kN;
  c.g.boundary = kZero;
  std::printf("copy %.0f GB/s, floor %.4f ms; chunks: 0.5x, 1x, 2x the resident blocks\n",
              c.copy_bytes_per_s * 1e-9, 2.0 * n * 4 / c.copy_bytes_per_s * 1e3);
  run_shape<SlabShapeOf<32, 32, 2>>(c, "32x32 2/SM (prod)");
  run_shape<SlabShapeOf<64, 16, 2>>(c, "64x16 2/SM");
  run_shape<SlabShapeOf<64, 16, 3>>(c, "64x16 3/SM");
  run_shape<SlabShapeOf<64, 32, 1>>(c, "64x32 1/SM");
  run_shape<SlabShapeOf<128, 16, 1>>(c, "128x16 1/SM");
  run_shape<SlabShapeOf<32, 16, 4>>(c, "32x16 4/SM");
  run_shape<SlabShapeOf<64, 8, 4>>(c, "64x8 4/SM");
  // The product's shape with phases left out (wrong outputs, the same traffic): where the time
  // goes. 0: copies and stores only; 1: + x filter; 3: + y filter; 5: x filter and ring.
  std::printf("profile of the product's shape (outputs wrong by design):\n");
  run_shape<SlabShapeOf<32, 32, 2>, 0>(c, "  copies+stores", false);
  run_shape<SlabShapeOf<32, 32, 2>, 1>(c, "  + x", false);
  run_shape<SlabShapeOf<32, 32, 2>, 3>(c, "  + x + y", false);
  run_shape<SlabShapeOf<32, 32, 2>, 5>(c, "  + x + ring", false);
  return 0;
}
