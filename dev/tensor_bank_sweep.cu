// Experiment: the tensor-core filter bank's block shapes (src/cuda/bank/tensor_core_tile.h:
// M tiles per warp, warps per block, where the A windows come from (TensorCoreCopies), blocks per
// SM the registers must allow, the next chunk's A fragments prefetched or not), timed side by side
// on the bench's bank_3d_tc problem (256^3 8-bit input, 12 real 7^3 filters: random taps with the
// quadrature filters' spread are enough for timing) and bank_4d_tc problem (128^3 x 32, 24 real
// 7^4 filters, 7 tap frames) with the data on the device. Each variant is first checked bit for
// bit against the host emulation (emulate_tensor_core_bank) on a small volume with two passes.
// Prints the device's mma.sync u8 x s8 rate on registers alone (the ceiling of every shape), then
// per shape ms, useful TFLOP/s (2 x 343 x 12 per voxel) and executed int8 TOPS; the share of the
// FP32 FMA peak comes from the bench row in the same session. The winner goes into tensor_core.cu's
// TensorCoreDefaultTile; this file stays an experiment (not built by CMake).
//
// The reconstruction's weighted sum (`recon`): the wide tiles (TensorCoreWideFramesTile: 3 groups
// of 4 taps a tap row, the weights streamed a frame at a time, the sum in the epilogue) on the
// adaptive_4d row's reconstruction (160^3 x 20, 11 filters of 11^4, per-voxel weights), each
// variant first checked bit for bit against emulate_tensor_core_weighted_sum on a small sequence.
//
// run: tensor_bank_sweep (the 3D shapes), tensor_bank_sweep 4d (the 4D shapes) or
// tensor_bank_sweep recon (the weighted sum's shapes)
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I src -I .
// dev/tensor_bank_sweep.cu src/cuda/bank/tensor_core_layout.cpp src/core/parallel_for.cpp
// src/core/int8_digits.cpp
// -o tensor_bank_sweep
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/bank/tensor_core_kernel.cuh"
#include "cuda_check.h"

using namespace ndconv;
using namespace ndconv::cuda_bank;

// The device's mma.sync m16n8k32 u8 x s8 rate with nothing else in the way: each warp runs
// independent MMAs on registers (8 accumulators, so that the tensor pipe never waits on one).
__global__ void mma_peak_kernel(int* out, int iterations) {
  int32_t acc[8][4] = {};
  const uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x ^ 5u, 7u};
  const uint2 b = make_uint2(threadIdx.x * 11u, 13u);
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      tensor_core_steps::mma_u8s8(acc[j], a, b);
  int s = 0;
  for (int j = 0; j < 8; ++j)
    s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 123456789)
    out[0] = s;
}

double mma_peak_tops(int sms) {
  int* out;
  CHECK(cudaMalloc(&out, 4));
  const int iterations = 1 << 14, threads = 128;
  double best = 0;
  for (int blocks_per_sm : {2, 4, 8}) {
    const int blocks = sms * blocks_per_sm;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    mma_peak_kernel<<<blocks, threads>>>(out, iterations);
    CHECK(cudaEventRecord(e0));
    mma_peak_kernel<<<blocks, threads>>>(out, iterations);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double ops = 2.0 * 16 * 8 * 32 * 8.0 * iterations * blocks * (threads / 32);
    std::printf("mma.sync m16n8k32 u8 x s8, registers only, %d warps/SM: %.0f TOPS\n",
                blocks_per_sm * threads / 32, ops / (ms * 1e-3) * 1e-12);
    best = std::max(best, ops / (ms * 1e-3) * 1e-12);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
  }
  CHECK(cudaFree(out));
  return best;
}

// A problem of canonical output extents n with 7^3 filters (n[2] = 1: 3D) or 7^4 (4D, 7 tap
// frames): the padded 8-bit volume (random bytes inside, zeros in the border), the weights and,
// for `expect`, the host emulation's outputs.
struct Problem {
  TensorCoreGeometry g;
  std::vector<uint8_t> bytes;
  std::vector<float> taps;
  TensorCoreWeights w;  ///< one output row per warp (the emulation's)
  std::vector<float> expected;
};

Problem make_problem(const Index& n, int count, uint64_t seed, bool expect) {
  Problem p;
  const int64_t frames = n[2] > 1 ? 7 : 1, half = frames / 2;
  p.g.outputs = n;
  p.g.filter = {7, 7, frames, 7};
  p.g.count = count;
  p.g.padded_extent = {0, n[1] + 6, n[2] + frames - 1, n[3] + 6};
  p.g.row_bytes = tensor_core_row_bytes(n[0]);
  p.bytes.assign(static_cast<size_t>(p.g.padded_bytes()), 0);
  std::mt19937_64 rng(seed);
  for (int64_t z = 3; z < n[3] + 3; ++z)
    for (int64_t w = half; w < n[2] + half; ++w)
      for (int64_t y = 3; y < n[1] + 3; ++y)
        for (int64_t x = 3; x < n[0] + 3; ++x)
          p.bytes[static_cast<size_t>(
              ((z * p.g.padded_extent[2] + w) * p.g.padded_extent[1] + y) * p.g.row_bytes + x)] =
              static_cast<uint8_t>(rng() & 0xff);
  p.taps.resize(static_cast<size_t>(count * 49 * 7 * frames));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < p.taps.size(); ++i)
    p.taps[i] = u(rng) * std::pow(10.0f, -static_cast<float>(i % 4));
  p.w = tensor_core_weights(p.g, p.taps.data());
  if (expect) {
    p.expected.resize(static_cast<size_t>(p.g.voxels() * p.g.count));
    emulate_tensor_core_bank(p.g, p.bytes.data(), p.w, p.expected.data());
  }
  return p;
}

struct Device {
  uint8_t* bytes = nullptr;
  int32_t* fragments = nullptr;
  float* scales = nullptr;
  float* out = nullptr;
};

// The problem on the device for a kernel of `rows` output rows per warp; `copies` 4: the padded
// volume's shifted copies (Global tiles).
Device upload(const Problem& p, int rows, int copies) {
  Device d;
  const TensorCoreWeights w = tensor_core_weights(p.g, p.taps.data(), rows);
  std::vector<uint8_t> bytes(p.bytes);
  if (copies > 1) {
    bytes.resize(4 * bytes.size());
    shift_padded_copies(p.g, bytes.data());
  }
  CHECK(cudaMalloc(&d.bytes, bytes.size()));
  CHECK(cudaMalloc(&d.fragments, w.fragments.size() * 4));
  CHECK(cudaMalloc(&d.scales, w.scales.size() * 4));
  CHECK(cudaMalloc(&d.out, static_cast<size_t>(p.g.voxels() * p.g.count) * 4));
  CHECK(cudaMemcpy(d.bytes, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  CHECK(
      cudaMemcpy(d.fragments, w.fragments.data(), w.fragments.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.scales, w.scales.data(), w.scales.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d.out, 0xff, static_cast<size_t>(p.g.voxels() * p.g.count) * 4));  // NaN
  return d;
}

void release(Device& d) {
  cudaFree(d.bytes);
  cudaFree(d.fragments);
  cudaFree(d.scales);
  cudaFree(d.out);
}

template <class Tile, int MinBlocks, bool PrefetchA, int ChunkUnroll = 1>
void variant(const char* name, const Problem& small, const Problem& big, int sms) {
  // Bit for bit against the emulation on the small problem.
  {
    Device d = upload(small, Tile::kRows, Tile::kStagedCopies);
    const TensorCoreArgs a = tensor_core_args<Tile>(small.g, d.bytes, d.fragments, d.scales, d.out);
    if (!launch_tensor_core_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll>(a, small.g.passes(),
                                                                            sms, nullptr)) {
      std::printf("%-40s does not fit\n", name);
      release(d);
      return;
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(small.expected.size());
    CHECK(cudaMemcpy(got.data(), d.out, got.size() * 4, cudaMemcpyDeviceToHost));
    release(d);
    if (std::memcmp(got.data(), small.expected.data(), got.size() * 4) != 0) {
      std::printf("%-40s WRONG: differs from the host emulation\n", name);
      return;
    }
  }
  Device d = upload(big, Tile::kRows, Tile::kStagedCopies);
  const TensorCoreArgs a = tensor_core_args<Tile>(big.g, d.bytes, d.fragments, d.scales, d.out);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < 12; ++r) {
    CHECK(cudaEventRecord(e0));
    launch_tensor_core_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll>(a, big.g.passes(), sms,
                                                                       nullptr);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 2)
      ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const double voxels = static_cast<double>(big.g.voxels());
  const double useful = 2.0 * voxels * 343 * big.g.frames() * big.g.count;
  const double executed = 2.0 * voxels * TensorCoreShape::kMaxTapRows * TensorCoreShape::kRowTaps *
                          big.g.frames() * TensorCoreShape::kColumns * big.g.passes();
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr,
                              tensor_core_bank_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll>));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, tensor_core_bank_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll>, Tile::kThreads,
      Tile::shared_bytes(big.g.frames())));
  std::printf(
      "%-40s %7.3f ms  %6.1f useful TFLOP/s  %6.0f int8 TOPS  (%d regs, %zu B local, "
      "%d B shared, %d blocks/SM)\n",
      name, median, useful / median * 1e-9, executed / median * 1e-9, attr.numRegs,
      static_cast<size_t>(attr.localSizeBytes), Tile::shared_bytes(big.g.frames()), per_sm);
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  release(d);
}

// The 4D shapes (one row per warp: two rows' weights for 7 frames exceed an SM's shared memory).
void sweep_4d(int sms) {
  const Problem small = make_problem({70, 13, 3, 4}, 13, 3, true);
  const Problem big = make_problem({128, 128, 128, 32}, 24, 4, false);
  std::printf("bank_4d_tc problem: 128^3 x 32, 24 filters of 7^4, 8-bit input\n");
  using C = TensorCoreCopies;
  variant<TensorCoreTile<4, 12, C::Funnel>, 1, false>("4D: 4 M, 12 warps, funnel (product)", small,
                                                      big, sms);
  variant<TensorCoreTile<4, 8, C::Funnel>, 1, false>("4D: 4 M, 8 warps, funnel", small, big, sms);
  variant<TensorCoreTile<4, 12, C::Funnel>, 1, false, 2>("4D: 4 M, 12 warps, funnel, unroll 2",
                                                         small, big, sms);
  variant<TensorCoreTile<2, 16, C::Funnel>, 1, false>("4D: 2 M, 16 warps, funnel", small, big, sms);
  variant<TensorCoreTile<2, 12, C::Funnel>, 1, false>("4D: 2 M, 12 warps, funnel", small, big, sms);
  variant<TensorCoreTile<4, 12, C::Shared>, 1, false>("4D: 4 M, 12 warps, shared copies", small,
                                                      big, sms);
}

// ---- The reconstruction's weighted sum ----------------------------------------------------------

// Canonical output extents n, `count` filters of size^4 (size frames), random bytes, spread taps,
// per-voxel weights (1 for filter 0); for `expect`, the host emulation's sum.
struct WeightedProblem {
  TensorCoreGeometry g;
  std::vector<uint8_t> bytes;
  TensorCoreWeights w;
  std::vector<float> weights, expected;
};

WeightedProblem make_weighted(const Index& n, int count, int size, uint64_t seed, bool expect) {
  WeightedProblem p;
  p.g.outputs = n;
  p.g.filter = {size, size, size, size};
  p.g.count = count;
  p.g.padded_extent = {0, n[1] + size - 1, n[2] + size - 1, n[3] + size - 1};
  p.g.row_bytes = tensor_core_row_bytes(n[0], p.g.taps().groups);
  p.bytes.resize(static_cast<size_t>(p.g.padded_bytes()));
  std::mt19937_64 rng(seed);
  for (uint8_t& b : p.bytes)
    b = static_cast<uint8_t>(rng() & 0xff);
  std::vector<float> taps(static_cast<size_t>(count) * size * size * size * size);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < taps.size(); ++i)
    taps[i] = u(rng) * std::pow(10.0f, -static_cast<float>(i % 4));
  p.w = tensor_core_weights(p.g, taps.data());
  // Weights in [-1, 1) from a multiplicative hash (the big problem's 900 M are too many for the
  // generator), 1 for filter 0.
  p.weights.resize(static_cast<size_t>(p.g.voxels() * count));
  for (size_t i = 0; i < p.weights.size(); ++i)
    p.weights[i] = i < static_cast<size_t>(p.g.voxels())
                       ? 1.0f
                       : static_cast<float>((static_cast<uint32_t>(i * 2654435761u) >> 8) *
                                            (2.0 / (1 << 24))) -
                             1.0f;
  if (expect) {
    p.expected.resize(static_cast<size_t>(p.g.voxels()));
    emulate_tensor_core_weighted_sum(p.g, p.bytes.data(), p.w, p.weights.data(), p.expected.data());
  }
  return p;
}

struct WeightedDevice {
  uint8_t* bytes = nullptr;
  int32_t* fragments = nullptr;
  float *scales = nullptr, *weights = nullptr, *sum = nullptr;
};

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class Tile, int ChunkUnroll = 1>
void weighted_variant(const char* name, const WeightedProblem& small, const WeightedProblem& big,
                      int sms) {
  auto run = [&](const WeightedProblem& p, int repeats, std::vector<float>* out) -> double {
    WeightedDevice d;
    d.bytes = device_copy(p.bytes);
    d.fragments = device_copy(p.w.fragments);
    d.scales = device_copy(p.w.scales);
    d.weights = device_copy(p.weights);
    CHECK(cudaMalloc(&d.sum, static_cast<size_t>(p.g.voxels()) * 4));
    CHECK(cudaMemset(d.sum, 0xff, static_cast<size_t>(p.g.voxels()) * 4));  // NaN
    TensorCoreArgs a = tensor_core_args<Tile>(p.g, d.bytes, d.fragments, d.scales, nullptr);
    a.weights = d.weights;
    a.sum = d.sum;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    bool fits = true;
    for (int r = 0; r < repeats && fits; ++r) {
      CHECK(cudaEventRecord(e0));
      fits = launch_tensor_core_kernel<Tile, 1, false, ChunkUnroll, true>(a, 1, sms, nullptr);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    if (out != nullptr && fits) {
      out->resize(static_cast<size_t>(p.g.voxels()));
      CHECK(cudaMemcpy(out->data(), d.sum, out->size() * 4, cudaMemcpyDeviceToHost));
    }
    cudaFree(d.bytes);
    cudaFree(d.fragments);
    cudaFree(d.scales);
    cudaFree(d.weights);
    cudaFree(d.sum);
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    if (!fits)
      return -1;
    if (ms.size() > 1)
      ms.erase(ms.begin());  // the warm-up
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  std::vector<float> got;
  if (run(small, 1, &got) < 0) {
    std::printf("%-44s does not fit\n", name);
    return;
  }
  if (std::memcmp(got.data(), small.expected.data(), got.size() * 4) != 0) {
    std::printf("%-44s WRONG: differs from the host emulation\n", name);
    return;
  }
  const double median = run(big, 6, nullptr);
  const double voxels = static_cast<double>(big.g.voxels());
  const double taps =
      static_cast<double>(big.g.filter[0] * big.g.filter[1] * big.g.filter[2] * big.g.filter[3]);
  const double useful = 2.0 * voxels * taps * big.g.count;
  const double executed =
      2.0 * voxels * Tile::kChunks * 32.0 * big.g.frames() * TensorCoreShape::kColumns;
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, tensor_core_bank_kernel<Tile, 1, false, ChunkUnroll, true>));
  std::printf(
      "%-44s %8.2f ms  %6.1f useful TFLOP/s  %6.0f int8 TOPS  (%d regs, %zu B local, %d B "
      "shared)\n",
      name, median, useful / median * 1e-9, executed / median * 1e-9, attr.numRegs,
      static_cast<size_t>(attr.localSizeBytes), Tile::shared_bytes(big.g.frames()));
}

void sweep_recon(int sms) {
  const WeightedProblem small = make_weighted({70, 13, 2, 2}, 11, 11, 5, true);
  const WeightedProblem big = make_weighted({160, 160, 160, 20}, 11, 11, 6, false);
  std::printf("adaptive_4d's reconstruction: 160^3 x 20, 11 filters of 11^4, weighted sum\n");
  using C = TensorCoreCopies;
  using T11 = TensorCoreReconstructionTaps11;
  weighted_variant<TensorCoreWideFramesTile11>("recon: 2 M, 16 warps, funnel (product)", small, big,
                                               sms);
  weighted_variant<TensorCoreTile<2, 20, C::Funnel, 1, T11, true>>("recon: 2 M, 20 warps, funnel",
                                                                   small, big, sms);
  weighted_variant<TensorCoreTile<2, 24, C::Funnel, 1, T11, true>>("recon: 2 M, 24 warps, funnel",
                                                                   small, big, sms);
  weighted_variant<TensorCoreWideFramesTile11, 2>("recon: 2 M, 16 warps, funnel, unroll 2", small,
                                                  big, sms);
  weighted_variant<TensorCoreTile<4, 12, C::Funnel, 1, T11, true>>(
      "recon: 4 M, 12 warps, funnel (round 2's)", small, big, sms);
}

int main(int argc, char** argv) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (argc > 1 && std::strcmp(argv[1], "4d") == 0) {
    sweep_4d(sms);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "recon") == 0) {
    sweep_recon(sms);
    return 0;
  }
  const Problem small = make_problem({70, 45, 1, 13}, 13, 1, true);
  const Problem big = make_problem({256, 256, 1, 256}, 12, 2, false);
  const double peak = mma_peak_tops(sms);
  std::printf(
      "bank_3d_tc problem: 256^3, 12 filters of 7^3, 8-bit input (int8 TOPS below against "
      "the %.0f TOPS above)\n",
      peak);
  using C = TensorCoreCopies;
  variant<TensorCoreTile<4, 4, C::Funnel>, 3, false>("4 M, 4 warps, funnel, 3/SM", small, big, sms);
  variant<TensorCoreTile<4, 4, C::Funnel>, 4, false>("4 M, 4 warps, funnel, 4/SM", small, big, sms);
  variant<TensorCoreTile<4, 4, C::Funnel>, 3, false, 2>("4 M, 4 warps, funnel, 3/SM, unroll 2",
                                                        small, big, sms);
  variant<TensorCoreTile<2, 4, C::Funnel, 2>, 3, false, 2>("2 M, 4 warps x 2 rows, 3/SM, unroll 2",
                                                           small, big, sms);
  variant<TensorCoreTile<4, 4, C::Funnel>, 2, true>("4 M, 4 warps, funnel, 2/SM, prefetch", small,
                                                    big, sms);
  variant<TensorCoreTile<4, 4, C::Global>, 3, false>("4 M, 4 warps, global copies, 3/SM", small,
                                                     big, sms);
  variant<TensorCoreTile<4, 4, C::Shared>, 3, false>("4 M, 4 warps, shared copies, 3/SM", small,
                                                     big, sms);
  variant<TensorCoreTile<4, 2, C::Funnel>, 6, false>("4 M, 2 warps, funnel, 6/SM", small, big, sms);
  variant<TensorCoreTile<4, 2, C::Global>, 4, false>("4 M, 2 warps, global copies, 4/SM", small,
                                                     big, sms);
  variant<TensorCoreTile<2, 4, C::Funnel>, 4, false>("2 M, 4 warps, funnel, 4/SM", small, big, sms);
  variant<TensorCoreTile<2, 4, C::Funnel, 2>, 3, false>("2 M, 4 warps x 2 rows, funnel, 3/SM",
                                                        small, big, sms);
  variant<TensorCoreTile<2, 4, C::Funnel, 2>, 4, false>("2 M, 4 warps x 2 rows, funnel, 4/SM",
                                                        small, big, sms);
  variant<TensorCoreTile<2, 4, C::Global, 2>, 3, false>(
      "2 M, 4 warps x 2 rows, global copies, 3/SM", small, big, sms);
  variant<TensorCoreTile<2, 8, C::Funnel>, 2, false>("2 M, 8 warps, funnel, 2/SM", small, big, sms);
  return 0;
}
