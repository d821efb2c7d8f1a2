// Experiment: cuFFT's in-place real transforms of n^3 (a forward and an inverse, as the FFT path
// runs them, cuda/fft/fft_launch.cu) for every even n in [lo, hi] whose prime factors are at most
// 7, in float64 (the path's precision) and float32 (for comparison only: the per-voxel accuracy
// test on dark data rules it out, docs/performance.md), so that the transform sizes rule
// (FftPolicy::largest_prime and fft_friendly_extent) prefers the sizes cuFFT is fast on.
// Prints n, its factors, ms per forward+inverse pair (median of 10 after 2 warm-ups) and ns per
// point, in place as the path runs them, and float64 out of place (a real buffer without the
// row padding, twice the memory). Not built by CMake.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 dev/fft_sizes.cu -lcufft -o fft_sizes
// run:   ./fft_sizes [lo hi]    (default 256 336: the fft rows' boxes are 266, 270 and 276)
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_check.h"

#define CUFFT(x)                                                               \
  do {                                                                         \
    cufftResult r_ = (x);                                                      \
    if (r_ != CUFFT_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s:%d: cuFFT error %d\n", __FILE__, __LINE__, r_); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

std::string factors(int n) {
  std::string t;
  for (int p : {2, 3, 5, 7}) {
    int e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e > 0)
      t += (t.empty() ? "" : "*") + std::to_string(p) + "^" + std::to_string(e);
  }
  return n == 1 ? t : "";
}

// Median ms of a forward and an inverse transform of n^3 (double or float), in place (one
// buffer, x rows padded to 2 (n / 2 + 1)) or out of place (a real buffer of n^3 and a complex one).
double pair_ms(int n, bool doubles, bool in_place) {
  const size_t half = n / 2 + 1;
  const size_t bytes = half * 2 * n * n * (doubles ? sizeof(double) : sizeof(float));
  void* complex_buffer = nullptr;
  void* real_buffer = nullptr;
  CHECK(cudaMalloc(&complex_buffer, bytes));
  CHECK(cudaMemset(complex_buffer, 0, bytes));
  if (in_place) {
    real_buffer = complex_buffer;
  } else {
    const size_t real_bytes = size_t(n) * n * n * (doubles ? sizeof(double) : sizeof(float));
    CHECK(cudaMalloc(&real_buffer, real_bytes));
    CHECK(cudaMemset(real_buffer, 0, real_bytes));
  }
  cufftHandle forward, inverse;
  CUFFT(cufftPlan3d(&forward, n, n, n, doubles ? CUFFT_D2Z : CUFFT_R2C));
  CUFFT(cufftPlan3d(&inverse, n, n, n, doubles ? CUFFT_Z2D : CUFFT_C2R));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = 0; r < 12; ++r) {
    CHECK(cudaEventRecord(start));
    if (doubles) {
      CUFFT(cufftExecD2Z(forward, static_cast<double*>(real_buffer),
                         static_cast<cufftDoubleComplex*>(complex_buffer)));
      CUFFT(cufftExecZ2D(inverse, static_cast<cufftDoubleComplex*>(complex_buffer),
                         static_cast<double*>(real_buffer)));
    } else {
      CUFFT(cufftExecR2C(forward, static_cast<float*>(real_buffer),
                         static_cast<cufftComplex*>(complex_buffer)));
      CUFFT(cufftExecC2R(inverse, static_cast<cufftComplex*>(complex_buffer),
                         static_cast<float*>(real_buffer)));
    }
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2)
      times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  CUFFT(cufftDestroy(forward));
  CUFFT(cufftDestroy(inverse));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  if (!in_place)
    CHECK(cudaFree(real_buffer));
  CHECK(cudaFree(complex_buffer));
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int lo = argc > 2 ? std::atoi(argv[1]) : 256;
  const int hi = argc > 2 ? std::atoi(argv[2]) : 336;
  std::printf("%5s %-16s %10s %10s %10s %10s %10s\n", "n", "factors", "f64_ms", "f64_ns/pt",
              "f64oop_ms", "f32_ms", "f32_ns/pt");
  for (int n = lo + (lo % 2); n <= hi; n += 2) {
    const std::string f = factors(n);
    if (f.empty())
      continue;
    const double points = double(n) * n * n;
    const double d = pair_ms(n, true, true), oop = pair_ms(n, true, false),
                 s = pair_ms(n, false, true);
    std::printf("%5d %-16s %10.3f %10.4f %10.3f %10.3f %10.4f\n", n, f.c_str(), d, d * 1e6 / points,
                oop, s, s * 1e6 / points);
  }
  return 0;
}
