// The filter bank's kernel: register blocking along x (TX outputs), along the last canonical axis
// (KO outputs) and across filters (FP filters per pass), so that every input value a thread takes
// from shared memory feeds up to FP x KO x TX multiply-adds and every tap it takes feeds TX.
//
// A block owns a tile of BX * TX outputs along x, BY along axis 1, one position along axis 2 and
// KO along axis 3. It walks the input planes (x, axis 1) its tile needs, one (axis 2, axis 3)
// position at a time: the plane and the taps that meet it (one (j3, j2) slice per output along
// axis 3, FP filters interleaved so that one 128-bit load gives a tap of four filters) are copied
// to shared memory asynchronously, the next plane's copies in flight while this one is used (two
// stages, one barrier after each plane's copies and one after its use; or three, whose buffer
// reuse is ordered by the first barrier alone); each
// thread then takes, per tap row j1, its TX + K0 - 1 inputs into registers and runs every tap of
// the row over them. K0 (taps along x) is a compile-time constant, so the row and the tap offsets
// are registers and immediates, not address arithmetic.
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

template <int K0, int KO, bool kWeighted, class Policy = BankPolicy<>>
__global__ void __launch_bounds__(BankShape::kThreads, Policy::kMinBlocks)
    bank_kernel(BankGeometry g, BankTiles tiles, const float* __restrict__ in,
                const float* __restrict__ taps, int passes, int64_t pass_taps, int filters,
                float* __restrict__ out, int64_t filter_stride, const float* __restrict__ weights,
                float* __restrict__ sum, bool accumulate) {
  using S = BankShape;
  constexpr int TX = S::kTx, FP = S::kFilters, C = S::plane_chunks(K0), P = S::pitch(K0);
  constexpr int R = (TX + K0 - 1 + 3) / 4 * 4;  // row registers, a whole number of float4
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
  // with the tap slices (j3 = j3r - b, j2) of the outputs b that it meets; zeros outside the rows.
  auto stage = [&](const Origin& o, int j3r, int j2, float* buffer) {
    const float* src =
        in + (((o.m3 + j3r) * g.e2 + (o.m2 + j2)) * g.e1 + o.m1) * g.row_length + o.x0;
    for (int i = threadIdx.x; i < rows * C; i += S::kThreads) {
      const int r = i / C, c = i % C;
      const bool inside = o.m1 + r < g.e1;
      __pipeline_memcpy_async(buffer + r * P + 4 * c, inside ? src + r * g.row_length + 4 * c : in,
                              16, inside ? 0 : 16);
    }
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
#pragma unroll
    for (int f = 0; f < FP; ++f)
#pragma unroll
      for (int b = 0; b < KO; ++b)
#pragma unroll
        for (int i = 0; i < TX; ++i)
          acc[f][b][i] = 0.0f;

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
      const float* tap_slices = plane + rows * P;
      // The inputs of tap row j1 that this thread's outputs meet, and every tap of the row over
      // them.
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
          if (j3 < 0 || j3 >= g.k3)
            continue;
          const float4* t4 = reinterpret_cast<const float4*>(tap_slices + b * slice + j1 * K0 * FP);
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
      if constexpr (Policy::kPrefetchRows) {
        float ra[R], rb[R];
        load_row(ra, 0);
        for (int j1 = 0; j1 < g.k1; j1 += 2) {
          const bool second = j1 + 1 < g.k1;
          if (second)
            load_row(rb, j1 + 1);
          run_row(ra, j1);
          if (second) {
            if (j1 + 2 < g.k1)
              load_row(ra, j1 + 2);
            run_row(rb, j1 + 1);
          }
        }
      } else {
        for (int j1 = 0; j1 < g.k1; ++j1) {
          float r[R];
          load_row(r, j1);
          run_row(r, j1);
        }
      }
      if constexpr (Policy::kStages == 2)
        __syncthreads();  // every thread is done with this buffer before the next plane's copies
      stage_index = next_index;
      j3r = next_j3r;
      j2 = next_j2;
    }

    const int64_t m1 = o.m1 + ty;
    const int valid = min(FP, filters - o.pass * FP);  // real filters of this tile's pass
    float* const pass_out = out + int64_t{o.pass} * FP * filter_stride;
    if (m1 < g.n1) {
      const int64_t x = o.x0 + tx * TX;
      // 128-bit accesses where the thread's 8 outputs lie in the row and start on 16 bytes.
      const bool vector = g.n0 % 4 == 0 && x + TX <= g.n0;
#pragma unroll
      for (int b = 0; b < KO; ++b) {
        const int64_t m3 = o.m3 + b;
        if (m3 >= g.n3)
          break;
        const int64_t first = ((m3 * g.n2 + o.m2) * g.n1 + m1) * g.n0 + x;
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
                  *reinterpret_cast<float4*>(pass_out + f * filter_stride + v) =
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
                pass_out[f * filter_stride + v] = acc[f][b][i];
          }
        }
      }
    }
    if (tile + gridDim.x < tile_count)
      o = origin_of(tile + gridDim.x);
  }
}

}  // namespace ndconv::cuda_bank
