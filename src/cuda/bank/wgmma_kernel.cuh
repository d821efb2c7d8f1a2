// The filter bank on the tensor cores for 8-bit inputs through Hopper's warpgroup MMA:
// wgmma.m64nNk32.s32.u8.s8 (sm_90a only), the GEMM and layouts of wgmma_layout.h. Compiled for
// sm_90a alone (wgmma.cu); the mma.sync kernel (tensor_core_kernel.cuh) runs everywhere else.
//
// The block as the mma.sync kernel's (TensorCoreTile: 16 MTiles outputs along x, Warps x Rows
// rows along axis 1, one position along axes 2 and 3, kFilters filters of one pass), its staged
// rows and A fragments the same; the warps in warpgroups of 4. Per K chunk each warp builds the A
// fragments of its M tiles from the staged rows and its warpgroup issues one wgmma per M tile: M =
// the 4 warps' 16 outputs of that tile, N = the pass's 48 columns (96 with two output rows per
// warp: each row's own B columns, the A fragments shared), B the chunk's weights in shared memory:
// every tap frame's, loaded once per block, or (Stream) each (tile, frame)'s streamed in with its
// rows, two frames' room. Group chunks' A fragments are loaded, their wgmmas issued as one group
// and waited for; the tensor cores stay busy with the other warpgroups' groups on the SM meanwhile.
// The accumulators come back in the mma.sync C fragments' layout per n8 tile, so the epilogue is
// the mma.sync kernel's.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/bank/tensor_core_tile.h"
#include "cuda/bank/wgmma_layout.h"

namespace ndconv::cuda_bank {

namespace wgmma_steps {

/// D (N / 2 registers per thread) = A (registers, the mma.sync A fragment per warp) x B (shared
/// memory, descriptor `b`) + D where `accumulate`, else A x B.
template <int N>
__device__ __forceinline__ void wgmma_u8s8(int32_t (&d)[N / 2], const uint32_t (&a)[4], uint64_t b,
                                           int accumulate);

template <>
__device__ __forceinline__ void wgmma_u8s8<48>(int32_t (&d)[24], const uint32_t (&a)[4], uint64_t b,
                                               int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n48k32.s32.u8.s8 {%0, %1, %2, %3, %4, "
      "%5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23}, {%24, %25, %26, %27}, %28, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
        "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),
        "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]),
        "+r"(d[21]), "+r"(d[22]), "+r"(d[23])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
#else
  __trap();  // dispatched only to sm_90a code
#endif
}

template <>
__device__ __forceinline__ void wgmma_u8s8<96>(int32_t (&d)[48], const uint32_t (&a)[4], uint64_t b,
                                               int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %53, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n96k32.s32.u8.s8 {%0, %1, %2, %3, %4, "
      "%5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "
      "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "
      "{%48, %49, %50, %51}, %52, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
        "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),
        "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]),
        "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),
        "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]),
        "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]),
        "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
#else
  __trap();  // dispatched only to sm_90a code
#endif
}

__device__ __forceinline__ void fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int Pending>
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}
/// Ordinary shared-memory writes (the weights' asynchronous copies) made visible to the tensor
/// cores' reads (the async proxy); before the barrier that orders them.
__device__ __forceinline__ void proxy_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
/// Named barrier `id` (1 to 15; 0 is __syncthreads) of `threads` threads.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/// An mbarrier in shared memory (`bar`): set up for `count` arrivals a phase; arrive (a release
/// of this thread's earlier writes); wait until the phase of parity `parity` has completed (an
/// acquire).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
               "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
               : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(parity)
      : "memory");
}
/// The warpgroup's registers per thread from here on (setmaxnreg: the producers give theirs to the
/// MMA warpgroups).
template <int Registers>
__device__ __forceinline__ void raise_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}
template <int Registers>
__device__ __forceinline__ void lower_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}
/// Keeps the compiler from moving accesses of `r` across the asynchronous MMAs (CUTLASS's
/// warpgroup_fence_operand).
__device__ __forceinline__ void pin(int32_t& r) {
  asm volatile("" : "+r"(r)::"memory");
}

}  // namespace wgmma_steps

namespace wgmma_steps {

/// Int32 accumulators of a warp of Tile: per M tile, per output row v of the warp's, the mma.sync
/// C fragments of 6 n tiles (r = 24 v + 4 n + q).
template <class Tile>
using Accumulators = int32_t[Tile::kMTiles][WgmmaShape::accumulators(Tile::kRows)];

/// frame_mma's default `loaded`: nothing.
struct NoHook {
  __device__ void operator()() const {}
};

/// One tap frame of the warp's warpgroup: every K chunk's A fragments loaded from the staged rows
/// (`words`: the buffer at the warp's row and the lane's word) and multiplied by the frame's B
/// (descriptor `frame_b`) into `acc`, Group chunks a wgmma group: their A fragments loaded, their
/// wgmmas issued as one group and waited for before the registers are loaded again (ptxas
/// serializes the wgmmas of a group whose A registers are written while an earlier group is in
/// flight, C7513). Returns with no wgmma in flight.
/// Chunks: K chunks from the row table's first (Tile::kChunks: the frame's). `loaded` runs once the
/// first group's A fragments are in registers (the rows they came from may be released then).
template <class Tile, int Group, bool Overlap = false, int Chunks = Tile::kChunks,
          class Loaded = NoHook>
__device__ __forceinline__ void frame_mma(Accumulators<Tile>& acc, const uint32_t* words,
                                          const int2* row_table, uint64_t frame_b, int lane,
                                          Loaded loaded = {}) {
  using W = WgmmaShape;
  constexpr int kN = W::n(Tile::kRows), kAcc = W::accumulators(Tile::kRows);
  constexpr int kChunkBytes = W::chunk_bytes(Tile::kRows);
  using Fragments = uint32_t[Tile::kMTiles][4];
  const int t = lane % 4, shift = Tile::lane_shift(lane);
  auto load_a = [&](Fragments& frag, int c) {
    const int2 rows = row_table[4 * c + t];
#pragma unroll
    for (int m = 0; m < Tile::kMTiles; ++m)
      Tile::a_fragment(words, rows.x, rows.y, m, shift, frag[m]);
  };
  auto chunks = [&](auto size, int c) {
    constexpr int kSize = decltype(size)::value;
    Fragments frag[kSize];
#pragma unroll
    for (int g = 0; g < kSize; ++g)
      load_a(frag[g], c + g);
#pragma unroll
    for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
      for (int r = 0; r < kAcc; ++r)
        pin(acc[m][r]);
    fence();
#pragma unroll
    for (int g = 0; g < kSize; ++g) {
      const uint64_t b = frame_b + static_cast<uint64_t>((c + g) * kChunkBytes / 16);
#pragma unroll
      for (int m = 0; m < Tile::kMTiles; ++m)
        wgmma_u8s8<kN>(acc[m], frag[g][m], b, 1);
    }
    commit();
    wait<0>();
  };
  // Group chunks a group, the remainder in a last one.
  constexpr int kGroups = Chunks / Group, kLast = Chunks % Group;
  if constexpr (!Overlap) {
#pragma unroll 1
    for (int i = 0; i < kGroups; ++i) {
      chunks(std::integral_constant<int, Group>{}, i * Group);
      if (i == 0)
        loaded();
    }
    if constexpr (kLast > 0)
      chunks(std::integral_constant<int, kLast>{}, kGroups * Group);
  } else {
    // Two sets of A registers: group i + 1's loaded while group i multiplies (the wait before
    // the loads is for group i - 1, which read the set they overwrite).
    static_assert(kLast == 0, "whole groups");
    Fragments frag[2][Group];
#pragma unroll
    for (int g = 0; g < Group; ++g)
      load_a(frag[0][g], g);
    loaded();
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
#pragma unroll
      for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
        for (int r = 0; r < kAcc; ++r)
          pin(acc[m][r]);
      fence();
#pragma unroll
      for (int g = 0; g < Group; ++g) {
        const uint64_t b = frame_b + static_cast<uint64_t>((i * Group + g) * kChunkBytes / 16);
#pragma unroll
        for (int m = 0; m < Tile::kMTiles; ++m)
          wgmma_u8s8<kN>(acc[m], frag[i % 2][g][m], b, 1);
      }
      commit();
      if (i + 1 < kGroups) {
        wait<1>();
#pragma unroll
        for (int g = 0; g < Group; ++g)
          load_a(frag[(i + 1) % 2][g], (i + 1) * Group + g);
      }
    }
    wait<0>();
  }
#pragma unroll
  for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
    for (int r = 0; r < kAcc; ++r)
      pin(acc[m][r]);
}

/// The warp's outputs of tile `o` from its accumulators: the mma.sync kernel's epilogue.
template <class Tile>
__device__ __forceinline__ void store_outputs(const TensorCoreArgs& a,
                                              const Accumulators<Tile>& acc,
                                              const TensorCoreOrigin& o, int pass, int warp,
                                              int lane) {
  using S = TensorCoreShape;
  using namespace tensor_core_epilogue;
#pragma unroll
  for (int v = 0; v < Tile::kRows; ++v) {
    const int64_t m1 = o.y0 + Tile::kRows * warp + v;
    const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
#pragma unroll
    for (int p = 0; p < S::kNTiles / 2; ++p) {
      const int f = pass * S::kFilters + kept_filter(lane, p);
      if (f < a.count && m1 < a.n1) {
        const float scale = a.scales[f];
        float* const out = a.out + f * a.stride + first;
        constexpr int kRowAcc = S::kColumns / 2;
#pragma unroll
        for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = kRowAcc * v + 8 * p;
            const int32_t even[4] = {acc[m][r], acc[m][r + 1], acc[m][r + 2], acc[m][r + 3]};
            const int32_t odd[4] = {acc[m][r + 4], acc[m][r + 5], acc[m][r + 6], acc[m][r + 7]};
            int32_t digits[4];
            lane_digits(even, odd, half, digits);
            const int64_t x = o.x0 + 16 * m + kept_x(lane, half);
            if (x < a.n0)
              out[x] = detail::combine_slices(digits, S::kSlices, scale);
          }
      }
    }
  }
}

}  // namespace wgmma_steps

template <class Tile, int MinBlocks, int Group = 1, bool Stream = false, bool Swap = false>
__global__ void __launch_bounds__(Tile::kThreads, MinBlocks) wgmma_bank_kernel(TensorCoreArgs a) {
  using W = WgmmaShape;
  static_assert(Tile::kWarps % 4 == 0, "whole warpgroups");
  constexpr int kFrameBytes = W::frame_bytes(Tile::kRows);
  static_assert(W::chunks(Tile::kRows) == Tile::kChunks, "the tile's K chunks");
  extern __shared__ uint4 shared16[];
  const int frames = a.frames;
  uint8_t* const weights = reinterpret_cast<uint8_t*>(shared16);
  int2* const row_table = reinterpret_cast<int2*>(weights + (Stream ? 2 : frames) * kFrameBytes);
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(row_table) + Tile::kRowTableBytes;
  const int pass = blockIdx.y;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  const uint8_t* const pass_weights =
      reinterpret_cast<const uint8_t*>(a.fragments) + int64_t{pass} * frames * kFrameBytes;
  // A (tile, frame)'s rows into buffer `b`; streamed weights: the frame's weights with them.
  auto stage = [&](const TensorCoreOrigin& o, int frame, int b) {
    uint8_t* const rows = tiles + b * Tile::kTileBytes;
    for (int i = threadIdx.x; i < Tile::kStageItems; i += Tile::kThreads) {
      const int64_t source = Tile::staged_source(a, o, frame, i);
      __pipeline_memcpy_async(rows + Tile::staged_offset(i), a.padded + (source < 0 ? 0 : source),
                              16, source < 0 ? 16 : 0);
    }
    if constexpr (Stream)
      for (int i = threadIdx.x; i < kFrameBytes / 16; i += Tile::kThreads)
        __pipeline_memcpy_async(weights + b * kFrameBytes + 16 * i,
                                pass_weights + int64_t{frame} * kFrameBytes + 16 * i, 16);
  };

  int64_t tile = blockIdx.x;
  if (tile >= pass_tiles)
    return;
  for (int i = threadIdx.x; i < Tile::kRowTableEntries; i += Tile::kThreads)
    Tile::chunk_rows(i / 4, i % 4, row_table[i].x, row_table[i].y);
  if constexpr (!Stream) {
    for (int i = threadIdx.x; i < frames * kFrameBytes / 16; i += Tile::kThreads)
      __pipeline_memcpy_async(weights + 16 * i, pass_weights + 16 * i, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    wgmma_steps::proxy_fence();  // the weights, read by the tensor cores
    __syncthreads();
  }
  const uint64_t b0 =
      wgmma_b_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(weights)), Swap);

  TensorCoreOrigin o = Tile::origin(a, tile);
  stage(o, 0, 0);
  __pipeline_commit();
  int buffer = 0;
  for (; tile < pass_tiles; tile += gridDim.x) {
    const bool more = tile + gridDim.x < pass_tiles;
    wgmma_steps::Accumulators<Tile> acc;
#pragma unroll
    for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
      for (int r = 0; r < W::accumulators(Tile::kRows); ++r)
        acc[m][r] = 0;
#pragma unroll 1
    for (int frame = 0; frame < frames; ++frame) {
      if (frame + 1 < frames)
        stage(o, frame + 1, buffer ^ 1);
      else if (more)
        stage(Tile::origin(a, tile + gridDim.x), 0, buffer ^ 1);
      __pipeline_commit();
      __pipeline_wait_prior(1);
      if constexpr (Stream)
        wgmma_steps::proxy_fence();  // this frame's weights, read by the tensor cores
      __syncthreads();
      uint32_t* const tile_words = reinterpret_cast<uint32_t*>(tiles + buffer * Tile::kTileBytes);
      if constexpr (Tile::kBuildItems > 0) {
        for (int i = threadIdx.x; i < Tile::kBuildItems; i += Tile::kThreads)
          Tile::build_shifted(tile_words, i);
        __syncthreads();
      }
      // This frame's B: every frame's in turn, or (Stream) the buffer it was staged into.
      const uint64_t frame_b =
          b0 + static_cast<uint64_t>((Stream ? buffer : frame) * kFrameBytes / 16);
      wgmma_steps::frame_mma<Tile, Group>(
          acc, tile_words + Tile::warp_word(warp) + Tile::lane_word(lane), row_table, frame_b,
          lane);
      __syncthreads();  // every warp is done with this buffer before the next copies into it
      buffer ^= 1;
    }
    wgmma_steps::store_outputs<Tile>(a, acc, o, pass, warp, lane);
    if (more)
      o = Tile::origin(a, tile + gridDim.x);
  }
}

/// Registers per thread that ptxas gives the warp-specialised kernel of Teams teams of Tile (its
/// launch bounds: one block per SM of Teams Tile::kThreads + 128 threads), in the 8-register steps
/// of the allocation; the block holds that many for each of its threads.
template <class Tile, int Teams>
constexpr int ws_launch_registers() {
  return std::min(255, 65536 / (Teams * Tile::kThreads + 128)) / 8 * 8;
}
/// With setmaxnreg (Registers > 0 per MMA thread), the producers' registers: what the block holds
/// less the MMA warpgroups' (setmaxnreg.inc waits until the block's own pool has them, so the two
/// must add up to it exactly or the MMA warpgroups wait forever).
template <class Tile, int Registers, int Teams>
constexpr int ws_producer_registers() {
  constexpr int kMmaGroups = Teams * Tile::kWarps / 4;
  return (kMmaGroups + 1) * ws_launch_registers<Tile, Teams>() - kMmaGroups * Registers;
}

/// Warp-specialised: Teams teams of Tile::kWarps MMA warps (whole warpgroups) that only load A
/// fragments, issue wgmma groups and store their outputs, and one producer warpgroup after them
/// that stages each (tile, frame)'s rows (Stream: and the frame's weights) into one of its team's
/// Buffers buffers and builds the rows' shifted copies there, so that no MMA warpgroup waits for
/// copies or builds. The block's tiles go to the teams in turn (tile j to team j % Teams), the
/// producers filling their buffers frame by frame in turn. A team's buffers pass between it and the
/// producers through mbarriers: full (the producers arrive when the buffer holds the team's next
/// (tile, frame), the team waits) and empty (the team arrives when done with it, the producers wait
/// before copying into it again). Registers (> 0): setmaxnreg gives the MMA warpgroups that many
/// per thread and the producers the rest of what the block holds (ws_producer_registers). Overlap:
/// frame_mma's two A register sets. Narrow: the MMA warps' loop counters in 32 bits. PairTails:
/// frames 2p and 2p + 1 share one tail chunk (wgmma_pair_chunk).
template <class Tile, int Group, int Buffers, bool Stream = false, int Registers = 0,
          bool Overlap = false, int Teams = 1, bool Narrow = false, bool PairTails = false>
__global__ void __launch_bounds__(Teams* Tile::kThreads + 128, 1)
    wgmma_ws_bank_kernel(TensorCoreArgs a) {
  using W = WgmmaShape;
  static_assert(Tile::kWarps % 4 == 0, "whole warpgroups");
  static_assert(Buffers >= 2, "the producers fill one buffer while a team reads another");
  constexpr int kTeam = Tile::kThreads, kProducers = 128;
  constexpr int kFrameBytes = W::frame_bytes(Tile::kRows);
  static_assert(W::chunks(Tile::kRows) == Tile::kChunks, "the tile's K chunks");
  constexpr int kProducerRegisters = ws_producer_registers<Tile, Registers, Teams>();
  static_assert(Registers == 0 || (Registers % 8 == 0 && Registers <= 256 &&
                                   kProducerRegisters >= 24 && kProducerRegisters % 8 == 0),
                "setmaxnreg counts");
  // Team k's buffer b full (the producers' 128 arrivals) and empty (the team's): mbarriers,
  // waited for by the phase's parity; the producers' own named barrier.
  constexpr int kStaged = 1;
  extern __shared__ uint4 shared16[];
  const int frames = a.frames;
  uint8_t* const weights = reinterpret_cast<uint8_t*>(shared16);
  int2* const row_table =
      reinterpret_cast<int2*>(weights + (Stream ? Teams * Buffers : frames) * kFrameBytes);
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(row_table) + Tile::kRowTableBytes;
  uint64_t* const bars = reinterpret_cast<uint64_t*>(tiles + Teams * Buffers * Tile::kTileBytes);
  auto wait_full = [&](int k, int b, auto l) {  // team k's item l, in its buffer b
    wgmma_steps::mbarrier_wait(bars + k * Buffers + b, static_cast<int>(l / Buffers % 2));
  };
  auto arrive_full = [&](int k, int b) { wgmma_steps::mbarrier_arrive(bars + k * Buffers + b); };
  auto wait_empty = [&](int k, int b, int64_t l) {  // team k done with its item l - Buffers
    wgmma_steps::mbarrier_wait(bars + (Teams + k) * Buffers + b,
                               static_cast<int>((l / Buffers - 1) % 2));
  };
  auto arrive_empty = [&](int k, int b) {
    wgmma_steps::mbarrier_arrive(bars + (Teams + k) * Buffers + b);
  };
  const int pass = blockIdx.y;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  if (blockIdx.x >= pass_tiles)
    return;
  const uint8_t* const pass_weights =
      reinterpret_cast<const uint8_t*>(a.fragments) + int64_t{pass} * frames * kFrameBytes;
  if (threadIdx.x == 0)
    for (int i = 0; i < Teams * Buffers; ++i) {
      wgmma_steps::mbarrier_init(bars + i, kProducers);
      wgmma_steps::mbarrier_init(bars + Teams * Buffers + i, kTeam);
    }
  for (int i = threadIdx.x; i < Tile::kRowTableEntries; i += Teams * kTeam + kProducers)
    Tile::chunk_rows(i / 4, i % 4, row_table[i].x, row_table[i].y);
  // PairTails: the second frame of a pair runs the pair's tail chunk first, its rows from both
  // buffers (wgmma_pair_chunk_rows): a row table for each buffer of the second frame.
  constexpr int kPairEntries = PairTails ? 4 * Tile::kChunks : 1;
  __shared__ int2 pair_table[2][kPairEntries];
  if constexpr (PairTails) {
    static_assert(Teams == 1 && Buffers == 2 && !Stream, "a pair's frames in the team's buffers");
    for (int i = threadIdx.x; i < 2 * kPairEntries; i += Teams * kTeam + kProducers) {
      const int second = i / kPairEntries, e = i % kPairEntries;
      wgmma_pair_chunk_rows<Tile>((1 - 2 * second) * (Tile::kTileBytes / 4), e / 4, e % 4,
                                  pair_table[second][e].x, pair_table[second][e].y);
    }
  }
  if constexpr (!Stream) {
    for (int i = threadIdx.x; i < frames * kFrameBytes / 16; i += Teams * kTeam + kProducers)
      __pipeline_memcpy_async(weights + 16 * i, pass_weights + 16 * i, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    wgmma_steps::proxy_fence();  // the weights, read by the tensor cores
  }
  __syncthreads();
  // The block's tiles: j = 0 .. block_tiles - 1, tile blockIdx.x + j gridDim.x, team j % Teams;
  // team k's (tile, frame) items in order, item l in its buffer l % Buffers.
  const int64_t block_tiles = (pass_tiles - 1 - blockIdx.x) / gridDim.x + 1;
  auto team_items = [&](int k) { return (block_tiles - k + Teams - 1) / Teams * frames; };

  if (threadIdx.x >= Teams * kTeam) {  // the producer warpgroup
    if constexpr (Registers > 0)
      wgmma_steps::lower_registers<kProducerRegisters>();
    const int p = threadIdx.x - Teams * kTeam;
    // The producers' item g: round r of Teams tiles, frame f of each of its n tiles in turn.
    struct Item {
      int team, buffer;
      int64_t local, tile;
      int frame;
    };
    auto item = [&](int64_t g) {
      const int64_t r = g / (int64_t{frames} * Teams), w = g - r * frames * Teams;
      const int n = static_cast<int>(std::min<int64_t>(Teams, block_tiles - r * Teams));
      Item it;
      it.frame = static_cast<int>(w / n);
      it.team = static_cast<int>(w % n);
      it.local = r * frames + it.frame;
      it.buffer = static_cast<int>(it.local % Buffers);
      it.tile = blockIdx.x + (r * Teams + it.team) * gridDim.x;
      return it;
    };
    auto issue = [&](int64_t g) {
      const Item it = item(g);
      if (it.local >= Buffers)  // the team is done with its item local - Buffers
        wait_empty(it.team, it.buffer, it.local);
      const TensorCoreOrigin o = Tile::origin(a, it.tile);
      const int b = it.team * Buffers + it.buffer;
      uint8_t* const rows = tiles + b * Tile::kTileBytes;
      for (int k = p; k < Tile::kStageItems; k += kProducers) {
        const int64_t source = Tile::staged_source(a, o, it.frame, k);
        __pipeline_memcpy_async(rows + Tile::staged_offset(k), a.padded + (source < 0 ? 0 : source),
                                16, source < 0 ? 16 : 0);
      }
      if constexpr (Stream)
        for (int k = p; k < kFrameBytes / 16; k += kProducers)
          __pipeline_memcpy_async(weights + b * kFrameBytes + 16 * k,
                                  pass_weights + int64_t{it.frame} * kFrameBytes + 16 * k, 16);
      __pipeline_commit();
    };
    const int64_t items = block_tiles * frames;
    // With three buffers a team or more, item g + 1's copies are in flight while g is built.
    constexpr int kAhead = Buffers > 2 ? 1 : 0;
    if (kAhead > 0)
      issue(0);
#pragma unroll 1
    for (int64_t g = 0; g < items; ++g) {
      if (g + kAhead < items)
        issue(g + kAhead);
      else
        __pipeline_commit();  // an empty group: wait_prior counts the same
      __pipeline_wait_prior(kAhead);
      if constexpr (Stream)
        wgmma_steps::proxy_fence();  // this thread's copies of the weights, read by the tensor
                                     // cores
      wgmma_steps::named_sync(kStaged, kProducers);  // every producer's copies of item g landed
      const Item it = item(g);
      if constexpr (Tile::kBuildItems > 0) {
        uint32_t* const tile_words =
            reinterpret_cast<uint32_t*>(tiles + (it.team * Buffers + it.buffer) * Tile::kTileBytes);
        for (int k = p; k < Tile::kBuildItems; k += kProducers)
          Tile::build_shifted(tile_words, k);
      }
      arrive_full(it.team, it.buffer);
    }
    return;
  }

  // The MMA warpgroups: team k, its warp `warp`.
  if constexpr (Registers > 0)
    wgmma_steps::raise_registers<Registers>();
  const int k = threadIdx.x / kTeam, lane = threadIdx.x % 32, warp = threadIdx.x % kTeam / 32;
  const uint64_t b0 = wgmma_b_descriptor(static_cast<uint32_t>(__cvta_generic_to_shared(weights)));
  // Narrow: the loop's counters in 32 bits (a pass's items are below 2^31: the launch checks it).
  using Count = std::conditional_t<Narrow, int, int64_t>;
  const Count items = static_cast<Count>(team_items(k)), tiles_k = static_cast<Count>(block_tiles);
  Count l = 0;
#pragma unroll 1
  for (Count j = k; j < tiles_k; j += Teams) {
    wgmma_steps::Accumulators<Tile> acc;
#pragma unroll
    for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
      for (int r = 0; r < W::accumulators(Tile::kRows); ++r)
        acc[m][r] = 0;
#pragma unroll 1
    for (int frame = 0; frame < frames; ++frame, ++l) {
      const int buffer = static_cast<int>(l % Buffers), b = k * Buffers + buffer;
      wait_full(k, buffer, l);
      const uint32_t* const tile_words =
          reinterpret_cast<const uint32_t*>(tiles + b * Tile::kTileBytes);
      const uint32_t* const words = tile_words + Tile::warp_word(warp) + Tile::lane_word(lane);
      if constexpr (PairTails) {
        // Frames 2p and 2p + 1: 12 chunks, then the pair's tail chunk and 12; an odd last frame
        // its 13 (B in wgmma_pair_chunk's order).
        constexpr int kC = Tile::kChunks;
        const uint64_t frame_b =
            b0 + static_cast<uint64_t>(wgmma_pair_chunk(frame) * W::chunk_bytes(1) / 16);
        if (frame % 2 == 0 && frame + 1 < frames) {
          wgmma_steps::frame_mma<Tile, Group, Overlap, kC - 1>(acc, words, row_table, frame_b,
                                                               lane);
          continue;  // its buffer released in the next frame's tail chunk
        }
        if (frame % 2 == 1) {
          const Count first = l - 1;
          wgmma_steps::frame_mma<Tile, Group, Overlap, kC>(
              acc, words, pair_table[buffer], frame_b, lane, [&] {
                if (first + Buffers < items)
                  arrive_empty(k, static_cast<int>(first % Buffers));
              });
        } else {
          wgmma_steps::frame_mma<Tile, Group, Overlap>(acc, words, row_table, frame_b, lane);
        }
      } else {
        const uint64_t frame_b =
            b0 + static_cast<uint64_t>((Stream ? b : frame) * kFrameBytes / 16);
        wgmma_steps::frame_mma<Tile, Group, Overlap>(acc, words, row_table, frame_b, lane);
      }
      if (l + Buffers < items)
        arrive_empty(k, buffer);
    }
    wgmma_steps::store_outputs<Tile>(a, acc, Tile::origin(a, blockIdx.x + j * gridDim.x), pass,
                                     warp, lane);
  }
}

/// Shared bytes of Tile's wgmma block for `frames` tap frames: every frame's B (Stream: one a
/// buffer), the row table and the buffers' rows (Buffers a team).
template <class Tile, bool Stream = false, int Buffers = 2, int Teams = 1>
constexpr int wgmma_shared_bytes(int frames) {
  return (Stream ? Teams * Buffers : frames) * WgmmaShape::frame_bytes(Tile::kRows) +
         Tile::kRowTableBytes + Teams * Buffers * Tile::kTileBytes;
}

/// The warp-specialised block's: wgmma_shared_bytes and its buffers' two mbarriers each.
template <class Tile, bool Stream, int Buffers, int Teams>
constexpr int wgmma_ws_shared_bytes(int frames) {
  return wgmma_shared_bytes<Tile, Stream, Buffers, Teams>(frames) + 16 * Teams * Buffers;
}

/// Enqueues `kernel` (a wgmma bank kernel of `threads` threads and `shared` bytes of dynamic shared
/// memory) over `passes` passes on `stream` with as many blocks as `sms` SMs hold at once.
/// Returns false, launching nothing, where a block does not fit on an SM.
template <class Kernel>
bool launch_wgmma_blocks(Kernel kernel, int threads, int shared, const TensorCoreArgs& a,
                         int passes, int sms, cudaStream_t stream) {
  if (shared > 48 * 1024 &&
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared) !=
          cudaSuccess ||
      per_sm < 1)
    return false;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int64_t per_pass = std::max<int64_t>(1, int64_t{per_sm} * sms / passes);
  const dim3 grid(static_cast<unsigned>(std::min(pass_tiles, per_pass)),
                  static_cast<unsigned>(passes));
  kernel<<<grid, threads, shared, stream>>>(a);
  return true;
}

/// Enqueues wgmma_bank_kernel<Tile, MinBlocks, Group, Stream, Swap> (`a.fragments`: the
/// WgmmaWeights' B bytes on the device); false where a block does not fit on an SM.
template <class Tile, int MinBlocks, int Group = 1, bool Stream = false, bool Swap = false>
bool launch_wgmma_kernel(const TensorCoreArgs& a, int passes, int sms, cudaStream_t stream) {
  return launch_wgmma_blocks(wgmma_bank_kernel<Tile, MinBlocks, Group, Stream, Swap>,
                             Tile::kThreads, wgmma_shared_bytes<Tile, Stream>(a.frames), a, passes,
                             sms, stream);
}

/// Enqueues wgmma_ws_bank_kernel<Tile, Group, Buffers, Stream, Registers, Overlap, Teams, Narrow,
/// PairTails>, one block per SM.
template <class Tile, int Group, int Buffers, bool Stream = false, int Registers = 0,
          bool Overlap = false, int Teams = 1, bool Narrow = false, bool PairTails = false>
bool launch_wgmma_ws_kernel(const TensorCoreArgs& a, int passes, int sms, cudaStream_t stream) {
  const auto kernel = wgmma_ws_bank_kernel<Tile, Group, Buffers, Stream, Registers, Overlap, Teams,
                                           Narrow, PairTails>;
  // Narrow counts a block's (tile, frame) items in 32 bits: refused where a pass has 2^31 or more
  // (some 10^11 outputs, more than a device holds).
  if (Narrow && (a.tiles_x * a.tiles_y * a.n2 * a.n3) * a.frames >= (int64_t{1} << 31))
    return false;
  if constexpr (Registers > 0) {
    // setmaxnreg's counts assume the registers the block holds (ws_producer_registers).
    cudaFuncAttributes attributes{};
    if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    if (attributes.numRegs != ws_launch_registers<Tile, Teams>())
      return false;
  }
  return launch_wgmma_blocks(kernel, Teams * Tile::kThreads + 128,
                             wgmma_ws_shared_bytes<Tile, Stream, Buffers, Teams>(a.frames), a,
                             passes, sms, stream);
}

}  // namespace ndconv::cuda_bank
