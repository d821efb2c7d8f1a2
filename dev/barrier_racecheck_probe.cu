// Experiment: does compute-sanitizer's racecheck see the ordering that a producer/consumer hand-off
// through named barriers (bar.arrive by the producer warp, bar.sync by the consumer warp, as the
// warp-specialised wgmma bank kernel first used) or through mbarriers gives? One block of two
// warps, two shared buffers: the producer fills buffer i % 2 with item i and arrives on its
// "full" barrier; the consumer waits on it, reads and sums the item, and arrives on its "empty"
// barrier, which the producer waits on before refilling the buffer. Correct by construction
// (the sums are checked); a racecheck hazard report on it is the tool's, not the code's.
//
// run: compute-sanitizer --tool racecheck barrier_racecheck_probe named|mbarrier
// build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I dev
//   dev/barrier_racecheck_probe.cu -o barrier_racecheck_probe
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_check.h"

constexpr int kItems = 16, kWords = 256;

__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ uint32_t address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(address(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(address(bar)) : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(address(bar)),
      "r"(parity)
      : "memory");
}

template <bool Mbarriers>
__global__ void handoff(unsigned* sums) {
  __shared__ unsigned buffers[2][kWords];
  __shared__ uint64_t bars[4];  // full 0, 1; empty 0, 1
  const int lane = threadIdx.x % 32;
  if (Mbarriers && threadIdx.x == 0)
    for (int i = 0; i < 4; ++i)
      mbarrier_init(bars + i, 32);
  __syncthreads();
  if (threadIdx.x >= 32) {  // the producer warp
    for (int i = 0; i < kItems; ++i) {
      const int b = i % 2;
      if (i >= 2) {
        if constexpr (Mbarriers)
          mbarrier_wait(bars + 2 + b, (i / 2 - 1) % 2);
        else
          named_sync(3 + b, 64);
      }
      for (int w = lane; w < kWords; w += 32)
        buffers[b][w] = i * 1000 + w;
      if constexpr (Mbarriers)
        mbarrier_arrive(bars + b);
      else
        named_arrive(1 + b, 64);
    }
  } else {  // the consumer warp
    for (int i = 0; i < kItems; ++i) {
      const int b = i % 2;
      if constexpr (Mbarriers)
        mbarrier_wait(bars + b, i / 2 % 2);
      else
        named_sync(1 + b, 64);
      unsigned sum = 0;
      for (int w = lane; w < kWords; w += 32)
        sum += buffers[b][w];
      for (int o = 16; o > 0; o /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
      if (lane == 0)
        sums[i] = sum;
      if (i + 2 < kItems) {
        if constexpr (Mbarriers)
          mbarrier_arrive(bars + 2 + b);
        else
          named_arrive(3 + b, 64);
      }
    }
  }
}

int main(int argc, char** argv) {
  const bool mbarriers = argc > 1 && std::strcmp(argv[1], "mbarrier") == 0;
  unsigned* d = nullptr;
  CHECK(cudaMalloc(&d, kItems * sizeof(unsigned)));
  if (mbarriers)
    handoff<true><<<1, 64>>>(d);
  else
    handoff<false><<<1, 64>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> sums(kItems);
  CHECK(cudaMemcpy(sums.data(), d, kItems * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  int wrong = 0;
  for (int i = 0; i < kItems; ++i)
    wrong += sums[i] != static_cast<unsigned>(i * 1000 * kWords + kWords * (kWords - 1) / 2);
  std::printf("%s hand-off: %d of %d sums wrong\n", mbarriers ? "mbarrier" : "named-barrier", wrong,
              kItems);
  return wrong == 0 ? 0 : 1;
}
