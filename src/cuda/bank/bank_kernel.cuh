// The filter bank's kernels: register blocking along x (TX outputs), along the last canonical axis
// (KO outputs) and across filters (FP filters per pass), so that every input value a thread takes
// from shared memory feeds up to FP x KO x TX multiply-adds and every tap it takes feeds TX.
// Two kernels share the steps (kernel_steps: a staged plane's multiply-adds, a plane's copy, the
// outputs' stores) and differ in how planes reach shared memory.
//
// The plane kernel (bank_kernel, every shape): a block owns a tile of BX * TX outputs along x, BY
// along axis 1, one position along axis 2 and KO along axis 3. It walks the input planes (x,
// axis 1) its tile needs, one (axis 2, axis 3) position at a time: the plane and the taps that meet
// it (one (j3, j2) slice per output along axis 3, FP filters interleaved so that one 128-bit load
// gives a tap of four filters) are copied to shared memory asynchronously, the next plane's copies
// in flight while this one is used (two stages, one barrier after each plane's copies and one after
// its use; or three, whose buffer reuse is ordered by the first barrier alone); each thread then
// takes, per tap row j1, its TX + K0 - 1 inputs into registers and runs every tap of the row over
// them. K0 (taps along x) is a compile-time constant, so the row and the tap offsets are registers
// and immediates, not address arithmetic.
//
// The ring kernel (bank_ring_kernel, filters one tap deep along axis 2 with K0 tap rows along axis
// 1, a 3D volume's cube): the planes KO outputs meet stay in shared memory as a ring while a block
// walks a run of outputs along axis 3, so each plane is copied once per block, not once per tile.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstdint>

namespace ndconv::cuda_bank {

/// The padded input (rows of row_length floats, e1 x e2 x e3 rows, the boundary already applied;
/// row_length a multiple of 4 that holds every tile's 16-byte chunks, BankShape::row_length), the
/// filter extents along axes 1 to 3 and the outputs per canonical axis.
struct BankGeometry {
  int64_t row_length, e1, e2;
  int k1, k2, k3;
  int64_t n0, n1, n2, n3;
};

/// The kernel's fixed shape: 4 x 32 threads, 8 outputs along x per thread, 4 filters per pass.
struct BankShape {
  static constexpr int kTx = 8;
  static constexpr int kBx = 4;  // a warp is 4 threads along x by 8 rows
  static constexpr int kBy = 32;
  static constexpr int kThreads = kBx * kBy;
  static constexpr int kFilters = 4;  // FP: one 128-bit tap load per (tap, four filters)
  /// Inputs along x a block stages per plane row.
  static constexpr int plane_width(int k0) { return kBx * kTx + k0 - 1; }
  /// 16-byte chunks a block copies per plane row.
  static constexpr int plane_chunks(int k0) { return (plane_width(k0) + 3) / 4; }
  /// The padded row length for n0 outputs along x: every tile's chunks inside the row.
  static int64_t row_length(int64_t n0, int k0) {
    return ((n0 + kBx * kTx - 1) / (kBx * kTx) - 1) * (kBx * kTx) + 4 * plane_chunks(k0);
  }
  /// The row pitch: a multiple of 4 floats (128-bit loads) and 4 modulo 8, so that the 8 threads
  /// of a quarter warp (4 along x, 2 rows) read distinct banks.
  static constexpr int pitch(int k0) {
    const int p = (plane_width(k0) + 3) / 4 * 4;
    return p % 8 == 0 ? p + 4 : p;
  }
  /// Floats of one stage (a plane and its tap slices) for k1 tap rows and KO outputs along axis 3;
  /// a multiple of 4, so every stage starts on 16 bytes.
  __host__ __device__ static int64_t stage_floats(int k0, int k1, int ko) {
    return int64_t{kBy + k1 - 1} * pitch(k0) + int64_t{ko} * k1 * k0 * kFilters;
  }
  /// Floats of shared memory of a launch of `stages` stages.
  __host__ __device__ static int64_t shared_floats(int k0, int k1, int ko, int stages) {
    return stages * stage_floats(k0, k1, ko);
  }
};

/// The tiles of a launch: tiles_x x tiles_y along x and axis 1, n2 x tiles_3 along axes 2 and 3.
struct BankTiles {
  int64_t tiles_x, tiles_y, tiles_3;
  __host__ __device__ int64_t count(int64_t n2) const { return tiles_x * tiles_y * n2 * tiles_3; }
};

/// `passes` passes of BankShape::kFilters filters each, `filters` of them real in all (a last
/// pass's others have zero taps); pass q's taps at taps + q * pass_taps, as [j3][j2][j1][jx]
/// [filter]. Without weights, out + f * filter_stride receives filter f's response (f counted
/// over all passes); with them (one pass), sum (+)= sum_f weights[f * filter_stride + voxel] *
/// response_f. The passes are the slowest index of the tiles, so that one launch runs them all
/// and only the last of all tiles leaves SMs idle, not the last of each pass.
/// The grid is the blocks the device holds at once; each walks tiles blockIdx.x + i * gridDim.x
/// and copies the next tile's first plane while it finishes one.
/// Compile-time choices of the kernel's inner loop: whether the next tap row's inputs are loaded
/// while this row's multiply-adds run (PrefetchRows), the blocks per SM the registers must allow
/// (MinBlocks), and the planes in shared memory at once (Stages: 2 or 3). The defaults are the
/// fastest measured (dev/bank_sweep.cu, H200, share of the FMA peak on the 3D / 4D bench
/// problems): rows prefetched with 3 stages 71.1 / 77.5%, with 2 stages 70.2 / 77.1%; rows one
/// at a time 68.3 / 74.7%; prefetched at 3 blocks per SM 66.0 / 73.5%; the tap rows fully
/// unrolled (dropped) 55.8 / 62.7%.
template <bool PrefetchRows = true, int MinBlocks = 4, int Stages = 3>
struct BankPolicy {
  static_assert(Stages == 2 || Stages == 3, "two or three stages");
  static constexpr bool kPrefetchRows = PrefetchRows;
  static constexpr int kMinBlocks = MinBlocks;
  static constexpr int kStages = Stages;
};

namespace kernel_steps {

/// The multiply-adds of one staged plane (rows BankShape::pitch(K0) floats apart) for the thread
/// at (tx, ty) of the block's threads: output b along axis 3 meets the plane with tap slice
/// j3 = j3r - b, whose k1 rows of K0 taps (FP filters interleaved) start at tap0 + b * b_stride,
/// where 0 <= j3 < k3. (The row's address is formed from the plane's for each row: ptxas then
/// keeps the shorter code; a per-thread row pointer measured 3 points slower.)
// Which outputs b along axis 3 a plane meets: checked at run time (kCheckedB), all (kAllB), or
// only output B >= 0.
constexpr int kCheckedB = -2, kAllB = -1;

template <int K0, int KO, bool kPrefetchRows, int kMeets = kCheckedB, int K1 = 0>
__device__ __forceinline__ void accumulate_plane(
    float (&acc)[BankShape::kFilters][KO][BankShape::kTx], const float* plane, int tx, int ty,
    const float* tap0, int b_stride, int j3r, int k3, int k1_runtime) {
  const int k1 = K1 > 0 ? K1 : k1_runtime;
  constexpr int TX = BankShape::kTx, FP = BankShape::kFilters, P = BankShape::pitch(K0);
  constexpr int R = (TX + K0 - 1 + 3) / 4 * 4;  // row registers, a whole number of float4
  static_assert(FP == 4, "one 128-bit load per tap of the pass's filters");
  // The inputs of tap row j1 that this thread's outputs meet, and every tap of the row over them.
  auto load_row = [&](float(&r)[R], int j1) {
    const float4* row = reinterpret_cast<const float4*>(plane + (ty + j1) * P + tx * TX);
#pragma unroll
    for (int q = 0; q < R / 4; ++q) {
      const float4 v = row[q];
      r[4 * q] = v.x;
      r[4 * q + 1] = v.y;
      r[4 * q + 2] = v.z;
      r[4 * q + 3] = v.w;
    }
  };
  auto run_row = [&](const float(&r)[R], int j1) {
#pragma unroll
    for (int b = 0; b < KO; ++b) {
      const int j3 = j3r - b;
      if (kMeets == kCheckedB ? (j3 < 0 || j3 >= k3) : kMeets != kAllB && b != kMeets)
        continue;
      const float4* t4 = reinterpret_cast<const float4*>(tap0 + b * b_stride + j1 * K0 * FP);
#pragma unroll
      for (int jx = 0; jx < K0; ++jx) {
        const float4 t = t4[jx];
#pragma unroll
        for (int i = 0; i < TX; ++i) {
          acc[0][b][i] = fmaf(t.x, r[i + jx], acc[0][b][i]);
          acc[1][b][i] = fmaf(t.y, r[i + jx], acc[1][b][i]);
          acc[2][b][i] = fmaf(t.z, r[i + jx], acc[2][b][i]);
          acc[3][b][i] = fmaf(t.w, r[i + jx], acc[3][b][i]);
        }
      }
    }
  };
  if constexpr (kPrefetchRows) {
    float ra[R], rb[R];
    load_row(ra, 0);
    for (int j1 = 0; j1 < k1; j1 += 2) {
      const bool second = j1 + 1 < k1;
      if (second)
        load_row(rb, j1 + 1);
      run_row(ra, j1);
      if (second) {
        if (j1 + 2 < k1)
          load_row(ra, j1 + 2);
        run_row(rb, j1 + 1);
      }
    }
  } else {
    for (int j1 = 0; j1 < k1; ++j1) {
      float r[R];
      load_row(r, j1);
      run_row(r, j1);
    }
  }
}

/// Writes one thread's outputs: TX along x from x, at row m1 of axis 1, position m2 of axis 2 and
/// KO along axis 3 from m3; `valid` of the pass's FP filters are real. Without weights, out + f *
/// filter_stride receives filter f's response (out at the pass's first filter); with them, sum
/// (+)= sum_f weights[f * filter_stride + voxel] * response_f.
template <int KO, bool kWeighted>
__device__ __forceinline__ void store_outputs(
    const float (&acc)[BankShape::kFilters][KO][BankShape::kTx], const BankGeometry& g, int64_t x,
    int64_t m1, int64_t m2, int64_t m3, int valid, float* __restrict__ out, int64_t filter_stride,
    const float* __restrict__ weights, float* __restrict__ sum, bool accumulate) {
  constexpr int TX = BankShape::kTx, FP = BankShape::kFilters;
  if (m1 >= g.n1)
    return;
  // 128-bit accesses where the thread's 8 outputs lie in the row and start on 16 bytes.
  const bool vector = g.n0 % 4 == 0 && x + TX <= g.n0;
#pragma unroll
  for (int b = 0; b < KO; ++b) {
    if (m3 + b >= g.n3)
      break;
    const int64_t first = (((m3 + b) * g.n2 + m2) * g.n1 + m1) * g.n0 + x;
    if (vector) {
#pragma unroll
      for (int h = 0; h < TX / 4; ++h) {
        const int64_t v = first + 4 * h;
        if constexpr (kWeighted) {
          float4 s = accumulate ? *reinterpret_cast<const float4*>(sum + v)
                                : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
          for (int f = 0; f < FP; ++f)
            if (f < valid) {
              const float4 w =
                  __ldg(reinterpret_cast<const float4*>(weights + f * filter_stride + v));
              s.x = fmaf(w.x, acc[f][b][4 * h], s.x);
              s.y = fmaf(w.y, acc[f][b][4 * h + 1], s.y);
              s.z = fmaf(w.z, acc[f][b][4 * h + 2], s.z);
              s.w = fmaf(w.w, acc[f][b][4 * h + 3], s.w);
            }
          *reinterpret_cast<float4*>(sum + v) = s;
        } else {
#pragma unroll
          for (int f = 0; f < FP; ++f)
            if (f < valid)
              *reinterpret_cast<float4*>(out + f * filter_stride + v) =
                  make_float4(acc[f][b][4 * h], acc[f][b][4 * h + 1], acc[f][b][4 * h + 2],
                              acc[f][b][4 * h + 3]);
        }
      }
      continue;
    }
#pragma unroll
    for (int i = 0; i < TX; ++i) {
      if (x + i >= g.n0)
        break;
      const int64_t v = first + i;
      if constexpr (kWeighted) {
        float s = accumulate ? sum[v] : 0.0f;
#pragma unroll
        for (int f = 0; f < FP; ++f)
          if (f < valid)
            s = fmaf(__ldg(weights + f * filter_stride + v), acc[f][b][i], s);
        sum[v] = s;
      } else {
#pragma unroll
        for (int f = 0; f < FP; ++f)
          if (f < valid)
            out[f * filter_stride + v] = acc[f][b][i];
      }
    }
  }
}

/// Copies the rows of one plane (x0 .. x0 + plane width, rows m1 .. m1 + rows - 1 of axis 1) from
/// `src` (the plane's first row at m1, x0) into `buffer` (rows `P` floats apart) by 16-byte
/// asynchronous copies, the block's `threads` threads together; rows past e1 become zeros.
template <int K0, int Threads>
__device__ __forceinline__ void stage_rows(float* buffer, const float* src, int64_t m1, int rows,
                                           const BankGeometry& g, const float* in) {
  constexpr int C = BankShape::plane_chunks(K0), P = BankShape::pitch(K0);
  for (int i = threadIdx.x; i < rows * C; i += Threads) {
    const int r = i / C, c = i % C;
    const bool inside = m1 + r < g.e1;
    __pipeline_memcpy_async(buffer + r * P + 4 * c, inside ? src + r * g.row_length + 4 * c : in,
                            16, inside ? 0 : 16);
  }
}

template <class T>
__device__ __forceinline__ void zero(T& acc) {
  float* a = &acc[0][0][0];
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T) / sizeof(float)); ++i)
    a[i] = 0.0f;
}

}  // namespace kernel_steps

template <int K0, int KO, bool kWeighted, class Policy = BankPolicy<>>
__global__ void __launch_bounds__(BankShape::kThreads, Policy::kMinBlocks)
    bank_kernel(BankGeometry g, BankTiles tiles, const float* __restrict__ in,
                const float* __restrict__ taps, int passes, int64_t pass_taps, int filters,
                float* __restrict__ out, int64_t filter_stride, const float* __restrict__ weights,
                float* __restrict__ sum, bool accumulate) {
  using S = BankShape;
  constexpr int TX = S::kTx, FP = S::kFilters, P = S::pitch(K0);
  extern __shared__ float4 shared4[];
  float* const shared = reinterpret_cast<float*>(shared4);
  const int rows = S::kBy + g.k1 - 1;
  const int slice = g.k1 * K0 * FP;  // the taps of one (j3, j2)
  const int64_t stage_floats = S::stage_floats(K0, g.k1, KO);
  const int tx = threadIdx.x % S::kBx, ty = threadIdx.x / S::kBx;
  const int64_t pass_tiles = tiles.count(g.n2), tile_count = pass_tiles * passes;
  const int planes = (KO + g.k3 - 1) * g.k2;

  struct Origin {
    int64_t x0, m1, m2, m3;  // the tile's first output
    int pass;
  };
  auto origin_of = [&](int64_t t) {
    Origin o;
    o.pass = static_cast<int>(t / pass_tiles);
    t -= o.pass * pass_tiles;
    o.x0 = (t % tiles.tiles_x) * (S::kBx * TX);
    t /= tiles.tiles_x;
    o.m1 = (t % tiles.tiles_y) * S::kBy;
    t /= tiles.tiles_y;
    o.m2 = t % g.n2;
    o.m3 = (t / g.n2) * KO;
    return o;
  };

  // Plane p of a tile is the input at (axis 2, axis 3) = (m2 + j2, m3 + j3r), p = j3r * k2 + j2,
  // with the tap slices (j3 = j3r - b, j2) of the outputs b that it meets.
  auto stage = [&](const Origin& o, int j3r, int j2, float* buffer) {
    kernel_steps::stage_rows<K0, S::kThreads>(
        buffer, in + (((o.m3 + j3r) * g.e2 + (o.m2 + j2)) * g.e1 + o.m1) * g.row_length + o.x0,
        o.m1, rows, g, in);
    float* tap_slices = buffer + rows * P;
#pragma unroll
    for (int b = 0; b < KO; ++b) {
      const int j3 = j3r - b;
      if (j3 < 0 || j3 >= g.k3)
        continue;
      const float* t = taps + o.pass * pass_taps + static_cast<int64_t>(j3 * g.k2 + j2) * slice;
      for (int i = 4 * threadIdx.x; i < slice; i += 4 * S::kThreads)
        __pipeline_memcpy_async(tap_slices + b * slice + i, t + i, 16);
    }
  };

  int64_t tile = blockIdx.x;
  if (tile >= tile_count)
    return;
  Origin o = origin_of(tile);
  stage(o, 0, 0, shared);
  __pipeline_commit();
  int stage_index = 0;  // the buffer that holds the plane in use
  for (; tile < tile_count; tile += gridDim.x) {
    float acc[FP][KO][TX];
    kernel_steps::zero(acc);

    int j3r = 0, j2 = 0;  // plane p's position (p = j3r * k2 + j2), counted without divisions
    for (int p = 0; p < planes; ++p) {
      const int next_index = stage_index + 1 == Policy::kStages ? 0 : stage_index + 1;
      const int next_j2 = j2 + 1 == g.k2 ? 0 : j2 + 1;
      const int next_j3r = next_j2 == 0 ? j3r + 1 : j3r;
      float* const next = shared + next_index * stage_floats;
      if (p + 1 < planes) {
        stage(o, next_j3r, next_j2, next);
      } else if (tile + gridDim.x < tile_count) {
        stage(origin_of(tile + gridDim.x), 0, 0, next);
      }
      __pipeline_commit();  // possibly empty, so that the wait below counts the same
      __pipeline_wait_prior(1);
      // Plane p is in place for every thread. With three stages this barrier also orders the
      // copies into `next` (issued after it by any thread) after every thread's use of that
      // buffer, two planes ago.
      __syncthreads();
      const float* plane = shared + stage_index * stage_floats;
      kernel_steps::accumulate_plane<K0, KO, Policy::kPrefetchRows>(
          acc, plane, tx, ty, plane + rows * P, slice, j3r, g.k3, g.k1);
      if constexpr (Policy::kStages == 2)
        __syncthreads();  // every thread is done with this buffer before the next plane's copies
      stage_index = next_index;
      j3r = next_j3r;
      j2 = next_j2;
    }

    kernel_steps::store_outputs<KO, kWeighted>(
        acc, g, o.x0 + tx * TX, o.m1 + ty, o.m2, o.m3, min(FP, filters - o.pass * FP),
        out + int64_t{o.pass} * FP * filter_stride, filter_stride, weights, sum, accumulate);
    if (tile + gridDim.x < tile_count)
      o = origin_of(tile + gridDim.x);
  }
}

/// The ring kernel's compile-time choices: `By` rows of outputs per block along axis 1 (By / 8
/// warps), the blocks per SM the registers must allow, and whether the next tap row's inputs are
/// loaded while this row's multiply-adds run. The defaults are the fastest measured
/// (dev/bank_sweep.cu, H100, bank_3d, share of the FMA peak, one run): 3 blocks of 4 warps, which
/// the 7^3 ring's 59 KB of shared memory allows, with up to 168 registers 74.4%; held to 128
/// registers 71.8%; rows one at a time 69.9%; 8 warps a block (2 blocks) 70.3%; the plane kernel
/// 65.8%.
template <int By = 32, int MinBlocks = 3, bool PrefetchRows = true>
struct BankRingPolicy {
  static constexpr int kBy = By;
  static constexpr int kThreads = BankShape::kBx * By;
  static constexpr int kMinBlocks = MinBlocks;
  static constexpr bool kPrefetchRows = PrefetchRows;
  /// Floats of shared memory: KO + k3 - 1 planes of (By + k1 - 1) rows, and a pass's taps.
  __host__ __device__ static int64_t shared_floats(int k0, int k1, int k3, int ko) {
    return int64_t{ko + k3 - 1} * (By + k1 - 1) * BankShape::pitch(k0) +
           int64_t{k3} * k1 * k0 * BankShape::kFilters;
  }
};

/// The bank for filters one tap deep along axis 2 (3D volumes): the KO + k3 - 1 planes that KO
/// outputs along axis 3 meet stay in shared memory as a ring, so that a block walks a run of
/// outputs along axis 3 staging KO new planes per KO outputs (the plane kernel stages KO + k3 - 1)
/// with one barrier (it has one per plane), the pass's taps in shared memory all along.
/// Launched with at most as many blocks as the device holds at once: block i takes the i-th of
/// gridDim.x equal runs of (column, KO outputs) units, a column being one pass's outputs at one
/// (x tile, axis-1 tile, m2) along all of axis 3, passes slowest. At the barrier in the middle of
/// each walk, every warp is past the planes that only this unit meets, so their buffers take the
/// next unit's last KO planes, a walk of k3 - 1 planes ahead of their use. The tap rows along axis
/// 1 are K0 (the loop over them then has a fixed count), and the planes that meet every output
/// (all but the first and last KO - 1) run without the per-output check; with KO 2 the first and
/// last meet one output each, also known at compile time (H100, bank_3d, one sweep: 70.1% with
/// neither, 73.4% with the fixed rows and the middle planes apart, 74.7% with the edge planes
/// too). Requires k1 == K0, k2 == 1 and k3 > KO.
template <int K0, int KO, bool kWeighted, class Policy = BankRingPolicy<>>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocks)
    bank_ring_kernel(BankGeometry g, BankTiles tiles, const float* __restrict__ in,
                     const float* __restrict__ taps, int passes, int64_t pass_taps, int filters,
                     float* __restrict__ out, int64_t filter_stride,
                     const float* __restrict__ weights, float* __restrict__ sum, bool accumulate) {
  using S = BankShape;
  constexpr int By = Policy::kBy, TX = S::kTx, FP = S::kFilters, P = S::pitch(K0);
  extern __shared__ float4 shared4[];
  float* const ring = reinterpret_cast<float*>(shared4);
  const int k3 = g.k3;
  constexpr int rows = By + K0 - 1;
  const int depth = KO + k3 - 1;
  const int plane_floats = rows * P;
  float* const pass_taps_shared = ring + depth * plane_floats;
  constexpr int slice = K0 * K0 * FP;  // the taps of one j3
  const int tx = threadIdx.x % S::kBx, ty = threadIdx.x / S::kBx;
  const int64_t columns_per_pass = tiles.tiles_x * tiles.tiles_y * g.n2;
  const int64_t units = columns_per_pass * passes * tiles.tiles_3;
  const int64_t last = (blockIdx.x + 1) * units / gridDim.x;
  int64_t unit = blockIdx.x * units / gridDim.x;

  while (unit < last) {
    // A column starts: its origin, its pass's taps and its first unit's planes.
    int64_t column = unit / tiles.tiles_3, q = unit - column * tiles.tiles_3;
    const int64_t column_end = min(last, (column + 1) * tiles.tiles_3);
    const int pass = static_cast<int>(column / columns_per_pass);
    column -= pass * columns_per_pass;
    const int64_t x0 = (column % tiles.tiles_x) * (S::kBx * TX);
    column /= tiles.tiles_x;
    const int64_t m1 = (column % tiles.tiles_y) * By, m2 = column / tiles.tiles_y;
    const float* const column_in = in + (m2 * g.e1 + m1) * g.row_length + x0;
    const int64_t plane_stride = g.e2 * g.e1 * g.row_length;
    auto stage = [&](int64_t plane, int slot) {
      kernel_steps::stage_rows<K0, Policy::kThreads>(
          ring + slot * plane_floats, column_in + plane * plane_stride, m1, rows, g, in);
    };
    __syncthreads();  // every warp is done with the last column's ring and taps
    for (int i = 4 * threadIdx.x; i < slice * k3; i += 4 * Policy::kThreads)
      __pipeline_memcpy_async(pass_taps_shared + i, taps + pass * pass_taps + i, 16);
    for (int p = 0; p < depth; ++p)
      stage(q * KO + p, p);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    int first_slot = 0;  // the ring slot of the unit's first plane
    for (; unit < column_end; ++unit, ++q) {
      float acc[FP][KO][TX];
      kernel_steps::zero(acc);
      int slot = first_slot;
      for (int p = 0; p < depth; ++p) {
        if (p == depth - KO) {
          // Every plane is in place, and every warp is past planes 0 .. KO - 1, whose buffers
          // take the next unit's planes depth .. depth + KO - 1 (its last ones).
          __pipeline_wait_prior(0);
          __syncthreads();
          if (unit + 1 < column_end) {
            int s = first_slot;
            for (int b = 0; b < KO; ++b) {
              stage(q * KO + depth + b, s);
              s = s + 1 == depth ? 0 : s + 1;
            }
          }
          __pipeline_commit();
        }
        const float* const plane = ring + slot * plane_floats;
        const float* const t = pass_taps_shared + p * slice;
        constexpr bool kPrefetch = Policy::kPrefetchRows;
        if (p >= KO - 1 && p < k3) {
          kernel_steps::accumulate_plane<K0, KO, kPrefetch, kernel_steps::kAllB, K0>(
              acc, plane, tx, ty, t, -slice, p, k3, K0);
        } else if constexpr (KO == 2) {
          if (p == 0)
            kernel_steps::accumulate_plane<K0, KO, kPrefetch, 0, K0>(acc, plane, tx, ty, t, -slice,
                                                                     p, k3, K0);
          else
            kernel_steps::accumulate_plane<K0, KO, kPrefetch, 1, K0>(acc, plane, tx, ty, t, -slice,
                                                                     p, k3, K0);
        } else {
          kernel_steps::accumulate_plane<K0, KO, kPrefetch, kernel_steps::kCheckedB, K0>(
              acc, plane, tx, ty, t, -slice, p, k3, K0);
        }
        slot = slot + 1 == depth ? 0 : slot + 1;
      }
      kernel_steps::store_outputs<KO, kWeighted>(
          acc, g, x0 + tx * TX, m1 + ty, m2, q * KO, min(FP, filters - pass * FP),
          out + int64_t{pass} * FP * filter_stride, filter_stride, weights, sum, accumulate);
      first_slot += KO;
      if (first_slot >= depth)
        first_slot -= depth;
    }
  }
}

}  // namespace ndconv::cuda_bank
