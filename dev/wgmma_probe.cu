// Probe: Hopper's warpgroup MMA as the wgmma filter bank uses it (src/cuda/bank/wgmma_layout.h,
// wgmma_kernel.cuh): wgmma.m64nNk32.s32.u8.s8 with A from registers (each warp's 16 rows in the
// mma.sync A fragment's layout) and B in shared memory (K-major, no swizzle, the descriptor of
// wgmma_b_descriptor), N = 48 and 96, two chunks chained into the same accumulators (the second
// B at the descriptor's address + 1536 bytes), against a host reference through the accumulator
// mapping the kernel's epilogue uses (wgmma_accumulator_row/_column). Both readings of the
// descriptor's two offsets (leading = the step along K, or the step between column groups): the
// one that passes is the format. Then the tensor pipe's rate for each N, A in registers, B in
// shared memory (the kernel's ceiling).
//
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a
//   -I src -I dev dev/wgmma_probe.cu -o wgmma_probe
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/bank/wgmma_kernel.cuh"
#include "cuda_check.h"

using namespace ndconv::cuda_bank;

constexpr int kChunks = 2;

// One warpgroup: D = sum over 2 chunks of A_c (64 x 32 u8, row-major) x B_c (32 x N s8, B_c[k][n]
// at k * N + n), out[(row * N + column)] (int32).
template <int N, bool Swap>
__global__ void probe_kernel(const uint8_t* a, const int8_t* b, int32_t* out) {
  __shared__ __align__(128) uint8_t shared_b[kChunks * 32 * N];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  constexpr int kChunkBytes = 32 * N;
  for (int i = threadIdx.x; i < kChunks * 32 * N; i += blockDim.x) {
    const int c = i / kChunkBytes, k = i % kChunkBytes / N, n = i % N;
    shared_b[c * kChunkBytes + wgmma_b_offset(k, n)] = static_cast<uint8_t>(b[i]);
  }
  wgmma_steps::proxy_fence();
  __syncthreads();
  const uint64_t descriptor =
      wgmma_b_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(shared_b)), Swap);
  int32_t d[N / 2];
  for (int r = 0; r < N / 2; ++r)
    d[r] = 0;
  uint32_t frag[kChunks][4];
  for (int c = 0; c < kChunks; ++c)
    for (int q = 0; q < 4; ++q) {
      uint32_t word = 0;
      for (int i = 0; i < 4; ++i)
        word |=
            uint32_t{a[c * 64 * 32 + wgmma_a_row(warp, lane, q) * 32 + a_fragment_k(lane, q, i)]}
            << (8 * i);
      frag[c][q] = word;
    }
  for (int r = 0; r < N / 2; ++r)
    wgmma_steps::pin(d[r]);
  wgmma_steps::fence();
  wgmma_steps::wgmma_u8s8<N>(d, frag[0], descriptor, 0);
  wgmma_steps::wgmma_u8s8<N>(d, frag[1], descriptor + kChunkBytes / 16, 1);
  wgmma_steps::commit();
  wgmma_steps::wait<0>();
  for (int r = 0; r < N / 2; ++r)
    wgmma_steps::pin(d[r]);
  for (int r = 0; r < N / 2; ++r)
    out[wgmma_accumulator_row(warp, lane, r) * N + wgmma_accumulator_column(lane, r)] = d[r];
}

template <int N, bool Swap>
bool probe(std::mt19937& rng) {
  std::vector<uint8_t> a(kChunks * 64 * 32);
  std::vector<int8_t> b(kChunks * 32 * N);
  for (auto& v : a)
    v = static_cast<uint8_t>(rng());
  for (auto& v : b)
    v = static_cast<int8_t>(rng());
  std::vector<int32_t> want(64 * N, 0), got(64 * N, 0x7fffffff);
  for (int c = 0; c < kChunks; ++c)
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < 32; ++k)
          want[m * N + n] += int32_t{a[c * 2048 + m * 32 + k]} * b[c * 32 * N + k * N + n];
  uint8_t* da;
  int8_t* db;
  int32_t* dout;
  CHECK(cudaMalloc(&da, a.size()));
  CHECK(cudaMalloc(&db, b.size()));
  CHECK(cudaMalloc(&dout, got.size() * 4));
  CHECK(cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout, 0x7f, got.size() * 4));
  probe_kernel<N, Swap><<<1, 128>>>(da, db, dout);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), dout, got.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dout));
  int wrong = 0;
  for (int i = 0; i < 64 * N; ++i)
    if (got[i] != want[i]) {
      if (wrong < 4)
        std::printf("    (row %d, column %d): got %d, want %d\n", i / N, i % N, got[i], want[i]);
      ++wrong;
    }
  std::printf("wgmma m64n%dk32 u8 x s8, A registers, B K-major %s: %s (%d of %d wrong)\n", N,
              Swap ? "leading = column-group step (swapped)" : "leading = K step",
              wrong ? "FAIL" : "pass", wrong, 64 * N);
  return wrong == 0;
}

// The tensor pipe's rate: each warpgroup chains `iterations` x 4 wgmmas into 2 accumulator sets,
// A from registers, B from shared memory.
template <int N>
__global__ void rate_kernel(int* out, int iterations) {
  __shared__ __align__(128) uint8_t shared_b[4 * 32 * N];
  for (int i = threadIdx.x; i < 4 * 32 * N; i += blockDim.x)
    shared_b[i] = static_cast<uint8_t>(i * 7);
  wgmma_steps::proxy_fence();
  __syncthreads();
  const uint64_t descriptor =
      wgmma_b_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(shared_b)));
  int32_t d0[N / 2], d1[N / 2];
  for (int r = 0; r < N / 2; ++r)
    d0[r] = d1[r] = 0;
  const uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x ^ 5u, 7u};
  for (int i = 0; i < iterations; ++i) {
    wgmma_steps::fence();
#pragma unroll
    for (int c = 0; c < 4; c += 2) {
      wgmma_steps::wgmma_u8s8<N>(d0, a, descriptor + c * 32 * N / 16, 1);
      wgmma_steps::wgmma_u8s8<N>(d1, a, descriptor + (c + 1) * 32 * N / 16, 1);
    }
    wgmma_steps::commit();
    wgmma_steps::wait<1>();
  }
  wgmma_steps::wait<0>();
  int s = 0;
  for (int r = 0; r < N / 2; ++r)
    s += d0[r] + d1[r];
  if (s == 123456789)
    out[0] = s;
}

template <int N>
void rate(int sms) {
  int* out;
  CHECK(cudaMalloc(&out, 4));
  const int iterations = 1 << 12;
  for (int warpgroups : {1, 2, 3}) {
    const int blocks = sms * 2;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    rate_kernel<N><<<blocks, 128 * warpgroups>>>(out, iterations);
    CHECK(cudaEventRecord(e0));
    rate_kernel<N><<<blocks, 128 * warpgroups>>>(out, iterations);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double ops = 2.0 * 64 * N * 32 * 4.0 * iterations * blocks * warpgroups;
    std::printf("wgmma m64n%dk32 u8 x s8 rate, %d warpgroups/block, 2 blocks/SM: %.0f TOPS\n", N,
                warpgroups, ops / (ms * 1e-3) * 1e-12);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
  }
  CHECK(cudaFree(out));
}

// The bank kernel's inner loop alone: per step each warpgroup loads the A fragments of M M tiles
// x G chunks from shared memory (4 words per fragment, addresses that change every step), issues
// the M x G wgmmas (N columns) into M accumulator sets as one group, commits it and waits for it
// (wait_group 0: ptxas serializes wgmmas whose A registers are written while a group is in
// flight). Its rate against the number of warpgroups per SM says whether the kernel's pattern is
// bound by the wait (latency) or by the tensor pipe.
template <int M, int G, int N>
__global__ void __launch_bounds__(128) loop_kernel(int* out, int iterations) {
  __shared__ __align__(128) uint8_t shared_b[G * 32 * N];
  __shared__ uint32_t words[4096];
  for (int i = threadIdx.x; i < G * 32 * N; i += blockDim.x)
    shared_b[i] = static_cast<uint8_t>(i * 7);
  for (int i = threadIdx.x; i < 4096; i += blockDim.x)
    words[i] = i * 2654435761u;
  wgmma_steps::proxy_fence();
  __syncthreads();
  const uint64_t descriptor =
      wgmma_b_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(shared_b)));
  int32_t acc[M][N / 2];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int r = 0; r < N / 2; ++r)
      acc[m][r] = 0;
  for (int it = 0; it < iterations; ++it) {
    uint32_t frag[G][M][4];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          frag[g][m][q] = words[(threadIdx.x + 33 * g + 131 * m + 9 * q + 17 * it) & 4095];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int r = 0; r < N / 2; ++r)
        wgmma_steps::pin(acc[m][r]);
    wgmma_steps::fence();
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int m = 0; m < M; ++m)
        wgmma_steps::wgmma_u8s8<N>(acc[m], frag[g][m], descriptor + g * 32 * N / 16, 1);
    wgmma_steps::commit();
    wgmma_steps::wait<0>();
  }
  int s = 0;
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int r = 0; r < N / 2; ++r)
      s += acc[m][r];
  if (s == 123456789)
    out[0] = s;
}

template <int M, int G, int N>
void loop_rate(int sms) {
  int* out;
  CHECK(cudaMalloc(&out, 4));
  const int iterations = 2048 / (M * G) + 1;
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, loop_kernel<M, G, N>));
  std::printf("loop M %d x G %d, N %2d (%3d regs):", M, G, N, attr.numRegs);
  for (int per_sm : {1, 2, 3, 4, 6}) {
    int fit = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, loop_kernel<M, G, N>, 128, 0));
    if (fit < per_sm) {
      std::printf("   %d WG/SM: -   ", per_sm);
      continue;
    }
    const int blocks = sms * per_sm;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    loop_kernel<M, G, N><<<blocks, 128>>>(out, iterations);
    CHECK(cudaEventRecord(e0));
    loop_kernel<M, G, N><<<blocks, 128>>>(out, iterations);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double ops = 2.0 * 64 * N * 32 * double(M) * G * iterations * blocks;
    std::printf("   %d WG/SM: %4.0f", per_sm, ops / (ms * 1e-3) * 1e-12);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
  }
  std::printf("  TOPS\n");
  CHECK(cudaFree(out));
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::mt19937 rng(20261129);
  bool ok = probe<48, false>(rng);
  ok = probe<96, false>(rng) && ok;
  const bool swapped = probe<48, true>(rng);
  probe<96, true>(rng);
  std::printf("descriptor reading of wgmma_layout.h: %s; the swapped reading: %s\n",
              ok ? "CONFIRMED" : "WRONG", swapped ? "also passes" : "fails");
  rate<48>(sms);
  rate<96>(sms);
  loop_rate<4, 1, 48>(sms);
  loop_rate<2, 1, 48>(sms);
  loop_rate<1, 1, 48>(sms);
  loop_rate<4, 2, 48>(sms);
  loop_rate<2, 4, 48>(sms);
  loop_rate<2, 6, 48>(sms);
  loop_rate<1, 13, 48>(sms);
  loop_rate<2, 1, 96>(sms);
  loop_rate<2, 2, 96>(sms);
  loop_rate<1, 7, 96>(sms);
  loop_rate<2, 7, 96>(sms);
  return ok ? 0 : 1;
}
