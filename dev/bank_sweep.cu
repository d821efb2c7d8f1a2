// Experiment: the filter bank kernels' compile-time policies (the plane kernel's BankPolicy: rows
// prefetched, blocks per SM; the ring kernel's BankRingPolicy: rows per block, blocks per SM, rows
// prefetched; the ring takes the 3D problem only), KO and the passes in one launch or one each,
// timed side by side on the bench's two bank problems (3D 256^3 with 12 real 7^3 filters, 4D 128^3
// x 32 with 24 real 7^4 filters), data on the device, against this GPU's FP32 FMA peak measured in
// the same run. Every variant's outputs are compared with a float64 reference at sampled voxels.
// The winner goes into src/cuda/bank/bank.cu; this file stays an experiment (not built by CMake).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I kernels
// dev/bank_sweep.cu -o bank_sweep
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/bank/bank_kernel.cuh"
#include "cuda_check.h"

using namespace ndconv::cuda_bank;

__global__ void fma_peak_kernel(float* out, int iterations) {
  float a[8];
  for (int i = 0; i < 8; ++i)
    a[i] = threadIdx.x * 1e-7f + i;
  const float m = 0.999999f, c = 1e-7f;
#pragma unroll 16  // as the bench's peak kernel: loop bookkeeping costs FMA issue slots
  for (int n = 0; n < iterations; ++n)
#pragma unroll
    for (int i = 0; i < 8; ++i)
      a[i] = fmaf(a[i], m, c);
  float s = 0;
  for (int i = 0; i < 8; ++i)
    s += a[i];
  if (s == 1234.5f)
    out[0] = s;
}

double fma_peak_flops(int sms) {
  float* out;
  CHECK(cudaMalloc(&out, 4));
  const int iterations = 1 << 16, blocks = sms * 8, threads = 256;
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  fma_peak_kernel<<<blocks, threads>>>(out, iterations);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(a));
    fma_peak_kernel<<<blocks, threads>>>(out, iterations);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, ms);
  }
  CHECK(cudaFree(out));
  return 2.0 * 8.0 * iterations * double(blocks) * threads / (best * 1e-3);
}

struct Problem {
  const char* name;
  int64_t n[4];  // canonical outputs
  int k[4];      // canonical taps
  int filters;
};

using Kernel = void (*)(BankGeometry, BankTiles, const float*, const float*, int, int64_t, int,
                        float*, int64_t, const float*, float*, bool);

struct Variant {
  std::string name;
  int ko;
  Kernel kernel;
  bool one_launch;  // every pass in one launch, or one launch per pass
  int threads;
  int64_t (*shared_floats)(int k0, int k1, int k3, int ko);
  bool ring;  // bank_ring_kernel: filters one tap deep along axis 2 only
};

template <int KO, class Policy>
Variant make(const char* name, bool one_launch = true) {
  return {name,
          KO,
          bank_kernel<7, KO, false, Policy>,
          one_launch,
          BankShape::kThreads,
          [](int k0, int k1, int, int ko) {
            return BankShape::shared_floats(k0, k1, ko, Policy::kStages);
          },
          false};
}

template <int KO, class Policy>
Variant make_ring(const char* name) {
  return {name,
          KO,
          bank_ring_kernel<7, KO, false, Policy>,
          true,
          Policy::kThreads,
          Policy::shared_floats,
          true};
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const double peak = fma_peak_flops(sms);
  std::printf("device %s, %d SMs; FP32 FMA peak %.1f TFLOP/s\n", prop.name, sms, peak * 1e-12);

  const std::vector<Variant> variants = {
      make<2, BankPolicy<true, 4, 3>>("ko2 prefetched, 3 stages, one launch"),
      make<2, BankPolicy<false, 4, 3>>("ko2 one at a time, 3 stages, one launch"),
      make_ring<2, BankRingPolicy<32, 3>>("ring ko2, 3 blocks/SM"),
      make_ring<2, BankRingPolicy<32, 4>>("ring ko2, <= 128 registers"),
      make_ring<2, BankRingPolicy<32, 3, false>>("ring ko2, rows one at a time"),
      make_ring<2, BankRingPolicy<64, 2>>("ring ko2, 8 warps a block"),
  };
  const Problem problems[] = {{"bank_3d", {256, 256, 1, 256}, {7, 7, 1, 7}, 12},
                              {"bank_4d", {128, 128, 128, 32}, {7, 7, 7, 7}, 24}};
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (const Problem& pb : problems) {
    const int k0 = pb.k[0];
    const int passes = (pb.filters + BankShape::kFilters - 1) / BankShape::kFilters;
    const int64_t pass_taps = int64_t{pb.k[3]} * pb.k[2] * pb.k[1] * k0 * BankShape::kFilters;
    std::vector<float> taps(pass_taps * passes);
    for (float& t : taps)
      t = uni(rng);
    float* d_taps;
    CHECK(cudaMalloc(&d_taps, taps.size() * 4));
    CHECK(cudaMemcpy(d_taps, taps.data(), taps.size() * 4, cudaMemcpyHostToDevice));
    const int64_t voxels = pb.n[0] * pb.n[1] * pb.n[2] * pb.n[3];
    const int64_t row_length = BankShape::row_length(pb.n[0], k0);
    const int64_t e1 = pb.n[1] + pb.k[1] - 1, e2 = pb.n[2] + pb.k[2] - 1;
    const int64_t e3 = (pb.n[3] + 11) / 12 * 12 + pb.k[3] - 1;  // every KO's padding (1 to 4)
    const int64_t padded = row_length * e1 * e2 * e3;
    std::vector<float> input(padded);
    for (float& v : input)
      v = uni(rng);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, padded * 4));
    CHECK(cudaMemcpy(d_in, input.data(), padded * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&d_out, voxels * pb.filters * 4));
    std::vector<float> out(voxels * pb.filters);
    const double fmas = double(voxels) * pb.filters * pb.k[0] * pb.k[1] * pb.k[2] * pb.k[3];

    // Sampled float64 reference: output voxel (x, y, z, w) of filter f.
    std::vector<int64_t> samples;
    for (int s = 0; s < 400; ++s)
      samples.push_back(std::uniform_int_distribution<int64_t>(0, voxels * pb.filters - 1)(rng));
    std::vector<double> reference;
    for (int64_t s : samples) {
      const int f = s / voxels;
      int64_t v = s % voxels;
      const int64_t x = v % pb.n[0], y = v / pb.n[0] % pb.n[1],
                    z = v / (pb.n[0] * pb.n[1]) % pb.n[2], w = v / (pb.n[0] * pb.n[1] * pb.n[2]);
      const int pass = f / BankShape::kFilters, fp = f % BankShape::kFilters;
      double acc = 0;
      for (int j3 = 0; j3 < pb.k[3]; ++j3)
        for (int j2 = 0; j2 < pb.k[2]; ++j2)
          for (int j1 = 0; j1 < pb.k[1]; ++j1)
            for (int jx = 0; jx < k0; ++jx) {
              const double t = taps[pass * pass_taps +
                                    (((int64_t{j3} * pb.k[2] + j2) * pb.k[1] + j1) * k0 + jx) *
                                        BankShape::kFilters +
                                    fp];
              const double in =
                  input[(((w + j3) * e2 + (z + j2)) * e1 + (y + j1)) * row_length + x + jx];
              acc += t * in;
            }
      reference.push_back(acc);
    }

    std::printf("\n%s: %lld voxels x %d filters, %d^%d taps; %.3g FMAs\n", pb.name,
                static_cast<long long>(voxels), pb.filters, k0, pb.k[2] == 1 ? 3 : 4, fmas);
    std::printf("%-40s %10s %8s %12s %6s %6s %7s\n", "variant", "ms", "% peak", "max rel err",
                "regs", "spill", "blk/SM");
    for (const Variant& var : variants) {
      if (var.ring && pb.k[2] != 1)
        continue;
      const int ko = var.ko;
      const BankGeometry g{row_length, e1,      e2,      pb.k[1], pb.k[2],
                           pb.k[3],    pb.n[0], pb.n[1], pb.n[2], pb.n[3]};
      const BankTiles tiles{
          (g.n0 + BankShape::kBx * BankShape::kTx - 1) / (BankShape::kBx * BankShape::kTx),
          (g.n1 + var.threads / BankShape::kBx - 1) / (var.threads / BankShape::kBx),
          (g.n3 + ko - 1) / ko};
      const size_t shared = var.shared_floats(k0, g.k1, g.k3, ko) * sizeof(float);
      if (shared > 48 * 1024)
        CHECK(cudaFuncSetAttribute(var.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared)));
      int per_sm = 0;
      CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, var.kernel, var.threads, shared));
      cudaFuncAttributes attr;
      CHECK(cudaFuncGetAttributes(&attr, var.kernel));
      const int launches = var.one_launch ? 1 : passes, per_launch = passes / launches;
      const int64_t blocks =
          std::min<int64_t>(tiles.count(g.n2) * per_launch, int64_t{per_sm} * sms);
      auto run = [&] {
        for (int i = 0; i < launches; ++i) {
          const int first = i * BankShape::kFilters;
          var.kernel<<<blocks, var.threads, shared>>>(
              g, tiles, d_in, d_taps + i * pass_taps, per_launch, pass_taps, pb.filters - first,
              d_out + first * voxels, voxels, nullptr, nullptr, false);
        }
      };
      CHECK(cudaMemset(d_out, 0xff, voxels * pb.filters * 4));  // NaN
      run();
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t s = 0; s < samples.size(); ++s) {
        const double e =
            std::fabs(out[samples[s]] - reference[s]) / std::max(1.0, std::fabs(reference[s]));
        worst = std::isnan(out[samples[s]]) ? INFINITY : std::max(worst, e);
      }
      cudaEvent_t a, b;
      CHECK(cudaEventCreate(&a));
      CHECK(cudaEventCreate(&b));
      std::vector<float> times;
      const int reps = pb.k[2] == 1 ? 20 : 5;
      for (int r = 0; r < reps + 2; ++r) {
        CHECK(cudaEventRecord(a));
        run();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2)
          times.push_back(ms);
      }
      std::sort(times.begin(), times.end());
      const double ms = times[times.size() / 2];
      std::printf("%-40s %10.3f %7.1f%% %12.2e %6d %6zu %7d\n", var.name.c_str(), ms,
                  100.0 * 2.0 * fmas / (ms * 1e-3) / peak, worst, attr.numRegs, attr.localSizeBytes,
                  per_sm);
      CHECK(cudaEventDestroy(a));
      CHECK(cudaEventDestroy(b));
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_taps));
  }
  return 0;
}
