// Experiment: the wgmma filter bank's block shapes (src/cuda/bank/wgmma_kernel.cuh: M tiles per
// warp, warps per block in warpgroups of 4, where the A windows come from, blocks per SM the
// registers must allow), timed side by side with the mma.sync product kernel
// (tensor_core_kernel.cuh, TensorCoreDefaultTile / TensorCoreFramesTile) on the bench's
// bank_3d_tc problem (256^3 8-bit input, 12 real 7^3 filters: random taps with the quadrature
// filters' spread are enough for timing) and bank_4d_tc problem (128^3 x 32, 24 real 7^4 filters,
// 7 tap frames), data on the device. Each variant is first checked bit for bit against the host
// emulation (emulate_tensor_core_bank) on a small volume with two passes; a wrong one is not timed.
// Prints per shape ms, useful TFLOP/s (2 x 343 x 12 per voxel; x 7 frames in 4D), executed int8
// TOPS and the speed-up over the mma.sync kernel (whose share of the FP32 FMA peak the bench
// gives); with "swap", the descriptor's other reading too (wgmma_b_descriptor).
//
// run: wgmma_bank_sweep [3d|4d|swap|profile] [first variant] [repeats of the list]
// build: nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a
//   -I src -I dev dev/wgmma_bank_sweep.cu src/cuda/bank/tensor_core_layout.cpp
//   src/cuda/bank/wgmma_layout.cpp src/core/parallel_for.cpp src/core/int8_digits.cpp
//   -o wgmma_bank_sweep
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cuda/bank/tensor_core_kernel.cuh"
#include "cuda/bank/wgmma_kernel.cuh"
#include "cuda_check.h"

using namespace ndconv;
using namespace ndconv::cuda_bank;

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
  int32_t* weights = nullptr;
  float* scales = nullptr;
  float* out = nullptr;
};

// The problem on the device: the weights laid out for the wgmma kernel (wgmma; `pair`: as
// wgmma_pair_tails) or the mma.sync kernel of `rows` rows per warp.
Device upload(const Problem& p, bool wgmma, int rows, bool pair = false) {
  Device d;
  const TensorCoreWeights w = tensor_core_weights(p.g, p.taps.data(), rows);
  std::vector<uint8_t> b;
  if (wgmma) {
    WgmmaWeights wb = wgmma_weights(p.g, w, rows);
    if (pair)
      wgmma_pair_tails(p.g, wb);
    b = std::move(wb.b);
  } else
    b.assign(reinterpret_cast<const uint8_t*>(w.fragments.data()),
             reinterpret_cast<const uint8_t*>(w.fragments.data() + w.fragments.size()));
  CHECK(cudaMalloc(&d.bytes, p.bytes.size()));
  CHECK(cudaMalloc(&d.weights, b.size()));
  CHECK(cudaMalloc(&d.scales, w.scales.size() * 4));
  CHECK(cudaMalloc(&d.out, static_cast<size_t>(p.g.voxels() * p.g.count) * 4));
  CHECK(cudaMemcpy(d.bytes, p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.weights, b.data(), b.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.scales, w.scales.data(), w.scales.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d.out, 0xff, static_cast<size_t>(p.g.voxels() * p.g.count) * 4));  // NaN
  return d;
}

void release(Device& d) {
  CHECK(cudaFree(d.bytes));
  CHECK(cudaFree(d.weights));
  CHECK(cudaFree(d.scales));
  CHECK(cudaFree(d.out));
}

// The variants in order (0: the reference); a run starts at g_first (0 always runs) and a kernel
// that does not finish within its deadline ends the program with code 3 after printing its index
// (a deadlock), so that the next run can start after it.
int g_index = 0, g_first = 0;

void finish_or_exit(const char* name, int index, double seconds) {
  cudaEvent_t e;
  CHECK(cudaEventCreate(&e));
  CHECK(cudaEventRecord(e));
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaEventQuery(e);
    if (q == cudaSuccess)
      break;
    if (q != cudaErrorNotReady)
      CHECK(q);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) {
      std::printf("[%d] %-44s HANG (not done after %.0f s)\n", index, name, seconds);
      std::fflush(stdout);
      std::_Exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(cudaEventDestroy(e));
}

// Launches one kernel on a problem's device data; false where its block does not fit.
using Launch = bool (*)(const TensorCoreArgs&, int, int, cudaStream_t);

struct Timing {
  double ms = 0;
  bool ok = false;
};

template <class Tile>
Timing run_variant(const char* name, Launch launch, bool wgmma, const void* kernel, int shared,
                   const Problem& small, const Problem& big, int sms, double reference_ms,
                   int threads = Tile::kThreads, bool pair = false) {
  Timing t;
  const int index = g_index++;
  if (index > 0 && index < g_first)
    return t;
  {
    Device d = upload(small, wgmma, Tile::kRows, pair);
    const TensorCoreArgs a = tensor_core_args<Tile>(small.g, d.bytes, d.weights, d.scales, d.out);
    if (!launch(a, small.g.passes(), sms, nullptr)) {
      std::printf("[%d] %-44s does not fit\n", index, name);
      release(d);
      return t;
    }
    CHECK(cudaGetLastError());
    finish_or_exit(name, index, 3);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(small.expected.size());
    CHECK(cudaMemcpy(got.data(), d.out, got.size() * 4, cudaMemcpyDeviceToHost));
    release(d);
    if (std::memcmp(got.data(), small.expected.data(), got.size() * 4) != 0) {
      int64_t wrong = 0, first = -1;
      for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &small.expected[i], 4) != 0) {
          if (first < 0)
            first = static_cast<int64_t>(i);
          ++wrong;
        }
      std::printf(
          "[%d] %-44s WRONG: %lld of %zu outputs differ from the host emulation; first %lld: "
          "%g, want %g\n",
          index, name, static_cast<long long>(wrong), got.size(), static_cast<long long>(first),
          got[first], small.expected[first]);
      return t;
    }
  }
  Device d = upload(big, wgmma, Tile::kRows, pair);
  const TensorCoreArgs a = tensor_core_args<Tile>(big.g, d.bytes, d.weights, d.scales, d.out);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  const int repeats = big.g.frames() > 1 ? 6 : 12;
  for (int r = 0; r < repeats; ++r) {
    CHECK(cudaEventRecord(e0));
    launch(a, big.g.passes(), sms, nullptr);
    CHECK(cudaEventRecord(e1));
    finish_or_exit(name, index, 3);
    CHECK(cudaEventSynchronize(e1));
    float v = 0;
    CHECK(cudaEventElapsedTime(&v, e0, e1));
    if (r >= 2)
      ms.push_back(v);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  t.ms = ms[ms.size() / 2];
  t.ok = true;
  const double voxels = static_cast<double>(big.g.voxels());
  const double useful = 2.0 * voxels * 343 * big.g.frames() * big.g.count;
  const double executed = 2.0 * voxels * TensorCoreShape::kMaxTapRows * TensorCoreShape::kRowTaps *
                          big.g.frames() * TensorCoreShape::kColumns * big.g.passes();
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
  std::printf(
      "[%d] %-44s %7.3f ms %6.1f useful TFLOP/s %5.0f int8 TOPS  x%.2f  (%d regs, %zu B "
      "local, %d B shared, %d/SM)\n",
      index, name, t.ms, useful / t.ms * 1e-9, executed / t.ms * 1e-9,
      reference_ms > 0 ? reference_ms / t.ms : 1.0, attr.numRegs,
      static_cast<size_t>(attr.localSizeBytes), shared, per_sm);
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  release(d);
  return t;
}

template <class Tile, int MinBlocks, int Group = 1, bool Stream = false, bool Swap = false>
double wgmma_variant(const char* name, const Problem& small, const Problem& big, int sms,
                     double reference_ms) {
  return run_variant<Tile>(
             name, launch_wgmma_kernel<Tile, MinBlocks, Group, Stream, Swap>, true,
             reinterpret_cast<const void*>(wgmma_bank_kernel<Tile, MinBlocks, Group, Stream, Swap>),
             wgmma_shared_bytes<Tile, Stream>(big.g.frames()), small, big, sms, reference_ms)
      .ms;
}

// The warp-specialised kernel: Teams teams of Tile's warps for the MMAs and one producer
// warpgroup, Buffers staged (tile, frame)s a team, Registers per MMA thread through setmaxnreg (0:
// as launched), Overlap: two sets of A registers.
template <class Tile, int Group, int Buffers, bool Stream = false, int Registers = 0,
          bool Overlap = false, int Teams = 1, bool Narrow = false, bool PairTails = false>
double ws_variant(const char* name, const Problem& small, const Problem& big, int sms,
                  double reference_ms) {
  return run_variant<Tile>(name,
                           launch_wgmma_ws_kernel<Tile, Group, Buffers, Stream, Registers, Overlap,
                                                  Teams, Narrow, PairTails>,
                           true,
                           reinterpret_cast<const void*>(
                               wgmma_ws_bank_kernel<Tile, Group, Buffers, Stream, Registers,
                                                    Overlap, Teams, Narrow, PairTails>),
                           wgmma_ws_shared_bytes<Tile, Stream, Buffers, Teams>(big.g.frames()),
                           small, big, sms, reference_ms, Teams * Tile::kThreads + 128, PairTails)
      .ms;
}

template <class Tile, int MinBlocks>
double mma_sync_variant(const char* name, const Problem& small, const Problem& big, int sms) {
  return run_variant<Tile>(
             name, launch_tensor_core_kernel<Tile, MinBlocks, false>, false,
             reinterpret_cast<const void*>(tensor_core_bank_kernel<Tile, MinBlocks, false>),
             Tile::shared_bytes(big.g.frames()), small, big, sms, 0)
      .ms;
}

using C = TensorCoreCopies;

// Each sweep runs its list `reps` times over the same problems (the reference once), so that a
// candidate and the current default are timed side by side several times in one run.
void sweep_3d(int sms, bool swap, int reps) {
  // n1 37: the last tile along axis 1 leaves whole warpgroups without outputs (24-row tiles: the
  // third; 16-row tiles: the third and fourth), the case SkipIdle skips.
  const Problem small = make_problem({70, 37, 1, 13}, 13, 1, true);
  const Problem big = make_problem({256, 256, 1, 256}, 12, 2, false);
  std::printf("bank_3d_tc problem: 256^3, 12 filters of 7^3, 8-bit input\n");
  const double ref = mma_sync_variant<TensorCoreDefaultTile, 3>(
      "mma.sync product (2 M, 4 x 2 rows, 3/SM)", small, big, sms);
  if (swap)
    wgmma_variant<TensorCoreTile<4, 4, C::Funnel>, 3, 1, false, true>(
        "wgmma 4 M, 4 warps, funnel, SWAPPED descriptor", small, big, sms, ref);
  // Warp-specialised: MMA warps + 1 producer warpgroup, B buffers, one block per SM; R: the MMA
  // warps' registers through setmaxnreg (the producers get the rest); O: two sets of A registers,
  // the next group's loaded while one multiplies. (The wgmma-ws record's rounds 2-5 and the
  // tc-bank record's rounds 1-2 also timed: 2 M x 8 MMA warps N 96, 4 M x 8 or 12 N 48, N 48 2 M x
  // 16, without setmaxnreg or the second A set, 2 teams taking tiles in turn, named barriers
  // instead of mbarriers, 144 registers, warpgroups without outputs skipping their MMAs (0.90 ms),
  // 32-bit counts (0.86 ms), A register sets of 1 M tile (0.94-0.95 ms), warpgroups started 1.5
  // us apart (0.849-0.857 ms against 0.852-0.867: within the noise), the first wgmma kernel: all
  // slower or the same.)
  constexpr bool O = true;
  using N96 = TensorCoreTile<2, 12, C::Shared, 2>;
  for (int rep = 0; rep < reps; ++rep) {
    g_index = 1;
    ws_variant<N96, 1, 3, false, 152, O>("WS N96 2 M, 12 MW x 2, B3, G1, R152, O", small, big, sms,
                                         ref);
    ws_variant<N96, 1, 2, false, 152, O>("WS N96 2 M, 12 MW x 2, B2, G1, R152, O", small, big, sms,
                                         ref);
  }
}

void sweep_4d(int sms, int reps) {
  const Problem small = make_problem({70, 13, 3, 4}, 13, 3, true);
  const Problem big = make_problem({128, 128, 128, 32}, 24, 4, false);
  std::printf("bank_4d_tc problem: 128^3 x 32, 24 filters of 7^4, 8-bit input\n");
  const double ref = mma_sync_variant<TensorCoreFramesTile, 1>(
      "mma.sync product (4 M, 12 warps, shared, 1/SM)", small, big, sms);
  // N: the MMA warps' loop counters in 32 bits (Narrow); P: frames paired, their tail chunks (one
  // tap row each) in one (PairTails: 88 chunks a tile instead of 91; the product's). (The tc-bank
  // record's rounds 1-2 also timed: warpgroups without outputs skipping their MMAs (40.2-43.3
  // ms), A register sets of 2 or 1 M tiles so that ptxas does not serialize the wgmmas (39.77,
  // 46.4 ms against 39.58), warpgroups started 2 us apart (39.70 ms), 2 M x 16 MMA warps (50.1
  // ms), N 96 streamed with 12 or 8 MMA warps (44.7, 46.3 ms): all slower.)
  constexpr bool O = true, N = true, P = true;
  using T4 = TensorCoreTile<4, 12, C::Shared>;
  for (int rep = 0; rep < reps; ++rep) {
    g_index = 1;
    ws_variant<T4, 1, 2, false, 152, O>("WS N48 4 M, 12 MMA warps, B2, G1, R152, O", small, big,
                                        sms, ref);
    ws_variant<T4, 1, 2, false, 152, O, 1, N, P>("WS N48 4 M, 12 MW, B2, G1, R152, O, N, P", small,
                                                 big, sms, ref);
    ws_variant<T4, 1, 2, false, 152, O, 1, !N, P>("WS N48 4 M, 12 MW, B2, G1, R152, O, P", small,
                                                  big, sms, ref);
  }
}

// One launch of a warp-specialised shape (the product's 3D) on the bench problem, for a profiler
// (ncu -k regex:wgmma_ws_bank_kernel).
template <class Tile, int Group, int Buffers, bool Stream, int Registers, bool Overlap>
void profile_ws(const Problem& big, int sms) {
  Device d = upload(big, true, Tile::kRows);
  launch_wgmma_ws_kernel<Tile, Group, Buffers, Stream, Registers, Overlap>(
      tensor_core_args<Tile>(big.g, d.bytes, d.weights, d.scales, d.out), 1, sms, nullptr);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  release(d);
}

void profile(int sms) {
  const Problem big = make_problem({256, 256, 1, 256}, 12, 2, false);
  profile_ws<TensorCoreTile<2, 12, C::Shared, 2>, 1, 3, false, 152, true>(big, sms);
}

int main(int argc, char** argv) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out before a deadlock ends the run
  const std::string mode = argc > 1 ? argv[1] : "3d";
  g_first = argc > 2 ? std::atoi(argv[2]) : 0;
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  if (mode == "profile")
    profile(sms);
  else if (mode == "4d")
    sweep_4d(sms, reps);
  else
    sweep_3d(sms, mode == "swap", reps);
  return 0;
}
