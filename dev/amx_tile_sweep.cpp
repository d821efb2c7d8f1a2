// Orders of the 8-bit bank's AMX tiles (src/cpu/bank_int8.h) on the 160^3 bank of 12 7^3 filters,
// each first checked bit for bit against emulate_tile, then timed with every thread doing 1600
// output rows (10 tiles of 16 outputs, 21 TDPBUSD a tile): main's order on A tiles 8 bytes apart
// (`old`), the product's on expanded A tiles, the A tiles staged per use, two A tiles sharing each
// B load (six accumulators), four or five A tiles per B column tile, with the combination; then
// probes of the tile unit itself (TDPBUSD without loads on 6, 3 and 1 accumulators, tile loads
// alone, reloads into the same or alternating registers), which pairs of CPUs share a tile unit,
// the outputs' write bandwidth, and run_bank_int8 against the whole filter_bank call. -DSOFT_AMX
// builds it with the tile instructions in plain C++ (checks only: the harness without AMX).
// A development probe, not a benchmark. Built with the tile flags (runs only where AMX is):
//   g++ -O2 -std=c++17 -mamx-tile -mamx-int8 -mavx512f -mavx2 -mfma -I src
//       dev/amx_tile_sweep.cpp build-cpu/src/libndconv_core.a -lpthread -o amx_tile_sweep
//   ./amx_tile_sweep [all|variants|probes|call|<variant>] [threads,...]
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu/bank_int8.h"
#include "cpu/isa_dispatch.h"
#include "cpu/tuning.h"
#include "core/bank_problem.h"
#include "ndconv/adaptive.h"

#ifdef SOFT_AMX
// The tile instructions in plain C++ (to check the variants' indexing where there is no AMX:
// -DSOFT_AMX, then only the check runs).
#undef _tile_loadconfig
#undef _tile_release
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbusd
namespace soft {
thread_local uint8_t tmm[8][1024];
inline void load(int t, const void* base, int64_t stride) {
  for (int r = 0; r < 16; ++r)
    std::memcpy(tmm[t] + 64 * r, static_cast<const uint8_t*>(base) + r * stride, 64);
}
inline void store(int t, void* base, int64_t stride) {
  for (int r = 0; r < 16; ++r)
    std::memcpy(static_cast<uint8_t*>(base) + r * stride, tmm[t] + 64 * r, 64);
}
inline void dpbusd(int c, int a, int b) {
  int32_t* acc = reinterpret_cast<int32_t*>(tmm[c]);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      int32_t sum = 0;
      for (int k = 0; k < 64; ++k)
        sum += int32_t{tmm[a][64 * m + k]} *
               int32_t{static_cast<int8_t>(tmm[b][64 * (k / 4) + 4 * n + k % 4])};
      acc[16 * m + n] += sum;
    }
}
}  // namespace soft
#define _tile_loadconfig(c) ((void)(c))
#define _tile_release() ((void)0)
#define _tile_loadd(t, base, stride) soft::load(t, base, stride)
#define _tile_stored(t, base, stride) soft::store(t, base, stride)
#define _tile_zero(t) std::memset(soft::tmm[t], 0, 1024)
#define _tile_dpbusd(c, a, b) soft::dpbusd(c, a, b)
#endif

namespace {

using namespace ndconv;
using S = cpu::Int8BankShape;
using Clock = std::chrono::steady_clock;

constexpr int64_t kN = 160, kK = 7, kXTiles = 10;
const int64_t kGroups = cpu::int8_x_groups(kN);  // 168 positions
const int64_t kRowBytes = kGroups * S::kGroup;   // 1344 = 21 x 64
const int64_t kPlaneBytes = kN * kRowBytes;
constexpr int kCTile = 16 * 48;  // int32 per A tile's accumulators

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
constexpr TileConfig make_config() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.bytes_per_row[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}
constexpr TileConfig kConfig = make_config();

void tiles_on() {
  cpu::request_amx_tile_permission();
  _tile_loadconfig(&kConfig);
}

template <class T>
T* aligned_new(size_t n) {
  void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
  std::memset(p, 0, (n * sizeof(T) + 63) / 64 * 64);
  return static_cast<T*>(p);
}

// One output row's work: the interleaved row y of the k3 planes, the pass's B tiles, the
// accumulators of its 10 A tiles ([xt][16][48], 64-byte aligned) and scratch.
struct Row {
  const uint8_t* a[8];
  const int8_t* b;
  int32_t* c;
  uint8_t* stage;           // 64-byte aligned, 2 x 8 x 2 KiB
  const uint8_t* tiles[8];  // row y of plane j3 as the product's A tiles (expand_a_tiles)
};

// ---- A staging: the 16 rows of 64 bytes 8 bytes apart into 16 aligned rows ----------------------
#define ROW_LO(m) _mm512_store_si512(dst + 64 * (m), _mm512_maskz_alignr_epi64(0xFF, v1, v0, m))
#define ROW_HI(m) \
  _mm512_store_si512(dst + 64 * (8 + (m)), _mm512_maskz_alignr_epi64(0xFF, v2, v1, m))
inline void stage_a(const uint8_t* src, uint8_t* dst) {
  const __m512i v0 = _mm512_loadu_si512(src), v1 = _mm512_loadu_si512(src + 64),
                v2 = _mm512_loadu_si512(src + 128);
  _mm512_store_si512(dst, v0);
  ROW_LO(1);
  ROW_LO(2);
  ROW_LO(3);
  ROW_LO(4);
  ROW_LO(5);
  ROW_LO(6);
  ROW_LO(7);
  _mm512_store_si512(dst + 64 * 8, v1);
  ROW_HI(1);
  ROW_HI(2);
  ROW_HI(3);
  ROW_HI(4);
  ROW_HI(5);
  ROW_HI(6);
  ROW_HI(7);
}

inline const uint8_t* a_at(const Row& r, int j3, int64_t xt) {
  return r.a[j3] + xt * S::kTileRows * S::kGroup;
}

constexpr int64_t kC = S::kColumns * 4;  // accumulator row stride, bytes
constexpr int kB = S::kBTileBytes;

// ---- the variants ------------------------------------------------------------------------------

// The product's tile (bank_amx.cpp) with the B tiles the caller gives.
void v_product(const Row& r) {
  cpu::Int8Tile t;
  for (int j = 0; j < kK; ++j)
    t.a[j] = r.tiles[j];
  t.b = r.b;
  t.k3 = kK;
  for (int64_t xt = 0; xt < kXTiles; ++xt) {
    t.x_tile = xt;
    t.c = r.c + xt * kCTile;
    cpu::amx_tile(t);
  }
}

// main's tile (before this branch): C 0-2, A 3, B 4-6, every register reloaded each plane.
void v_old(const Row& r) {
  for (int64_t xt = 0; xt < kXTiles; ++xt) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    const int8_t* b = r.b;
    for (int j = 0; j < kK; ++j, b += 3 * kB) {
      _tile_loadd(3, a_at(r, j, xt), S::kGroup);
      _tile_loadd(4, b, 64);
      _tile_dpbusd(0, 3, 4);
      _tile_loadd(5, b + kB, 64);
      _tile_dpbusd(1, 3, 5);
      _tile_loadd(6, b + 2 * kB, 64);
      _tile_dpbusd(2, 3, 6);
    }
    int32_t* c = r.c + xt * kCTile;
    _tile_stored(0, c, kC);
    _tile_stored(1, c + 16, kC);
    _tile_stored(2, c + 32, kC);
  }
}

// M A tiles (M <= 4) x 1 B column tile at a time: accumulators 0..M-1, A in 4 and 5 by turns, B
// in 6 and 7 by turns (plane by plane): no load waits for the product just before it.
template <int M>
void four_group(const Row& r, int64_t x0) {
  static_assert(M >= 1 && M <= 4, "four accumulators");
  for (int n = 0; n < 3; ++n) {
    _tile_zero(0);
    if (M > 1)
      _tile_zero(1);
    if (M > 2)
      _tile_zero(2);
    if (M > 3)
      _tile_zero(3);
    const int8_t* b = r.b + n * kB;
    for (int j = 0; j < kK; j += 2, b += 6 * kB) {
      _tile_loadd(6, b, 64);
      _tile_loadd(4, a_at(r, j, x0), S::kGroup);
      _tile_dpbusd(0, 4, 6);
      if (M > 1) {
        _tile_loadd(5, a_at(r, j, x0 + 1), S::kGroup);
        _tile_dpbusd(1, 5, 6);
      }
      if (M > 2) {
        _tile_loadd(4, a_at(r, j, x0 + 2), S::kGroup);
        _tile_dpbusd(2, 4, 6);
      }
      if (M > 3) {
        _tile_loadd(5, a_at(r, j, x0 + 3), S::kGroup);
        _tile_dpbusd(3, 5, 6);
      }
      if (j + 1 < kK) {
        _tile_loadd(7, b + 3 * kB, 64);
        _tile_loadd(5, a_at(r, j + 1, x0), S::kGroup);
        _tile_dpbusd(0, 5, 7);
        if (M > 1) {
          _tile_loadd(4, a_at(r, j + 1, x0 + 1), S::kGroup);
          _tile_dpbusd(1, 4, 7);
        }
        if (M > 2) {
          _tile_loadd(5, a_at(r, j + 1, x0 + 2), S::kGroup);
          _tile_dpbusd(2, 5, 7);
        }
        if (M > 3) {
          _tile_loadd(4, a_at(r, j + 1, x0 + 3), S::kGroup);
          _tile_dpbusd(3, 4, 7);
        }
      }
    }
    int32_t* c = r.c + x0 * kCTile + n * 16;
    _tile_stored(0, c, kC);
    if (M > 1)
      _tile_stored(1, c + kCTile, kC);
    if (M > 2)
      _tile_stored(2, c + 2 * kCTile, kC);
    if (M > 3)
      _tile_stored(3, c + 3 * kCTile, kC);
  }
}

void v_four(const Row& r) {
  four_group<4>(r, 0);
  four_group<4>(r, 4);
  four_group<2>(r, 8);
}

// 1 A x 3 B, the A tile staged into aligned rows (one tile ahead).
void v_stage(const Row& r) {
  auto stage = [&](int64_t xt) {
    uint8_t* s = r.stage + (xt % 2) * 8 * 1024;
    for (int j = 0; j < kK; ++j)
      stage_a(a_at(r, j, xt), s + j * 1024);
  };
  stage(0);
  for (int64_t xt = 0; xt < kXTiles; ++xt) {
    const uint8_t* s = r.stage + (xt % 2) * 8 * 1024;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    const int8_t* b = r.b;
    for (int j = 0; j < kK; ++j, b += 3 * kB) {
      _tile_loadd(3, s + j * 1024, 64);
      _tile_loadd(4, b, 64);
      _tile_dpbusd(0, 3, 4);
      _tile_loadd(5, b + kB, 64);
      _tile_dpbusd(1, 3, 5);
      _tile_loadd(6, b + 2 * kB, 64);
      _tile_dpbusd(2, 3, 6);
    }
    if (xt + 1 < kXTiles)
      stage(xt + 1);
    int32_t* c = r.c + xt * kCTile;
    _tile_stored(0, c, kC);
    _tile_stored(1, c + 16, kC);
    _tile_stored(2, c + 32, kC);
  }
}

// 2 A x 3 B: six accumulators (0-5: A tile m, B tile n at 3 m + n), one A (6) and one B (7)
// register; the B tiles walked 0 1 2 for the first A tile and 2 1 0 for the second, so that each
// plane takes 2 A and 5 B loads for 6 TDPBUSD. `staged`: the A tiles from aligned rows.
template <bool staged>
void stage_pair(const Row& r, int64_t xt) {
  uint8_t* s = r.stage + (xt / 2 % 2) * 16 * 1024;
  for (int m = 0; m < 2; ++m)
    for (int j = 0; j < kK; ++j)
      stage_a(a_at(r, j, xt + m), s + (m * 8 + j) * 1024);
}

// A tiles xt and xt + 1 (staged: already in the stage; the next pair's staged after the products).
template <bool staged>
void pair_tiles(const Row& r, int64_t xt) {
  const uint8_t* s = r.stage + (xt / 2 % 2) * 16 * 1024;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  const int8_t* b = r.b;
  for (int j = 0; j < kK; ++j, b += 3 * kB) {
    if (staged)
      _tile_loadd(6, s + j * 1024, 64);
    else
      _tile_loadd(6, a_at(r, j, xt), S::kGroup);
    _tile_loadd(7, b, 64);
    _tile_dpbusd(0, 6, 7);
    _tile_loadd(7, b + kB, 64);
    _tile_dpbusd(1, 6, 7);
    _tile_loadd(7, b + 2 * kB, 64);
    _tile_dpbusd(2, 6, 7);
    if (staged)
      _tile_loadd(6, s + (8 + j) * 1024, 64);
    else
      _tile_loadd(6, a_at(r, j, xt + 1), S::kGroup);
    _tile_dpbusd(5, 6, 7);
    _tile_loadd(7, b + kB, 64);
    _tile_dpbusd(4, 6, 7);
    _tile_loadd(7, b, 64);
    _tile_dpbusd(3, 6, 7);
  }
  if (staged && xt + 2 < kXTiles)
    stage_pair<staged>(r, xt + 2);
  int32_t* c = r.c + xt * kCTile;
  _tile_stored(0, c, kC);
  _tile_stored(1, c + 16, kC);
  _tile_stored(2, c + 32, kC);
  _tile_stored(3, c + kCTile, kC);
  _tile_stored(4, c + kCTile + 16, kC);
  _tile_stored(5, c + kCTile + 32, kC);
}

// 2 A x 3 B: six accumulators (0-5: A tile m, B tile n at 3 m + n), one A (6) and one B (7)
// register; the B tiles walked 0 1 2 for the first A tile and 2 1 0 for the second, so that each
// plane takes 2 A and 5 B loads for 6 TDPBUSD. `staged`: the A tiles from aligned rows.
template <bool staged>
void v_pair(const Row& r) {
  if (staged)
    stage_pair<staged>(r, 0);
  for (int64_t xt = 0; xt < kXTiles; xt += 2)
    pair_tiles<staged>(r, xt);
}

// The digits' combination (the product's AVX-512 one) for the weights' scales, into a row of
// responses per filter: set by main.
const float* g_scales = nullptr;
thread_local float g_responses[12 * kN];

void combine_pair(const Row& r, int64_t xt) {
  float* dst[12];
  for (int m = 0; m < 2; ++m) {
    for (int f = 0; f < 12; ++f)
      dst[f] = g_responses + f * kN + (xt + m) * 16;
    cpu::combine_tile_avx512(r.c + (xt + m) * kCTile, 12, g_scales, 16, dst);
  }
}

// v_pair with the combination of each pair's digits after the next pair's products are issued,
// as a row of the product would run.
template <bool staged>
void v_pair_combine(const Row& r) {
  if (staged)
    stage_pair<staged>(r, 0);
  for (int64_t xt = 0; xt < kXTiles; xt += 2) {
    pair_tiles<staged>(r, xt);
    if (xt > 0)
      combine_pair(r, xt - 2);
  }
  combine_pair(r, kXTiles - 2);
}

// The product's tile with its combination one tile behind (the product's row loop).
void v_product_combine(const Row& r) {
  cpu::Int8Tile t;
  for (int j = 0; j < kK; ++j)
    t.a[j] = r.tiles[j];
  t.b = r.b;
  t.k3 = kK;
  float* dst[12];
  for (int64_t xt = 0; xt <= kXTiles; ++xt) {
    if (xt < kXTiles) {
      t.x_tile = xt;
      t.c = r.c + xt * kCTile;
      cpu::amx_tile(t);
    }
    if (xt > 0) {
      for (int f = 0; f < 12; ++f)
        dst[f] = g_responses + f * kN + (xt - 1) * 16;
      cpu::combine_tile_avx512(r.c + (xt - 1) * kCTile, 12, g_scales, 16, dst);
    }
  }
}

// 5 A x 1 B: five accumulators (0-4) over 5 A tiles for one B column tile at a time, the A tiles
// alternating between registers 5 and 6, B in 7: 6 loads for 5 TDPBUSD; every A tile loaded once
// per B column tile.
void v_five(const Row& r) {
  for (int64_t x0 = 0; x0 < kXTiles; x0 += 5)
    for (int n = 0; n < 3; ++n) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      _tile_zero(4);
      const int8_t* b = r.b + n * kB;
      for (int j = 0; j < kK; ++j, b += 3 * kB) {
        _tile_loadd(7, b, 64);
        _tile_loadd(5, a_at(r, j, x0), S::kGroup);
        _tile_dpbusd(0, 5, 7);
        _tile_loadd(6, a_at(r, j, x0 + 1), S::kGroup);
        _tile_dpbusd(1, 6, 7);
        _tile_loadd(5, a_at(r, j, x0 + 2), S::kGroup);
        _tile_dpbusd(2, 5, 7);
        _tile_loadd(6, a_at(r, j, x0 + 3), S::kGroup);
        _tile_dpbusd(3, 6, 7);
        _tile_loadd(5, a_at(r, j, x0 + 4), S::kGroup);
        _tile_dpbusd(4, 5, 7);
      }
      int32_t* c = r.c + x0 * kCTile + n * 16;
      _tile_stored(0, c, kC);
      _tile_stored(1, c + kCTile, kC);
      _tile_stored(2, c + 2 * kCTile, kC);
      _tile_stored(3, c + 3 * kCTile, kC);
      _tile_stored(4, c + 4 * kCTile, kC);
    }
}

// ---- probes -------------------------------------------------------------------------------------

// TDPBUSD alone on `acc` independent accumulators, tiles loaded once: n instructions.
void tmul_only(int acc, int64_t n) {
  alignas(64) static const uint8_t zeros[1024] = {};
  _tile_loadd(6, zeros, 64);
  _tile_loadd(7, zeros, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  if (acc == 6)
    for (int64_t i = 0; i < n; i += 6) {
      _tile_dpbusd(0, 6, 7);
      _tile_dpbusd(1, 6, 7);
      _tile_dpbusd(2, 6, 7);
      _tile_dpbusd(3, 6, 7);
      _tile_dpbusd(4, 6, 7);
      _tile_dpbusd(5, 6, 7);
    }
  else if (acc == 3)
    for (int64_t i = 0; i < n; i += 3) {
      _tile_dpbusd(0, 6, 7);
      _tile_dpbusd(1, 6, 7);
      _tile_dpbusd(2, 6, 7);
    }
  else
    for (int64_t i = 0; i < n; ++i)
      _tile_dpbusd(0, 6, 7);
  alignas(64) static thread_local int32_t sink[256];
  _tile_stored(0, sink, 64);
}

// Tile loads alone: n loads of 16 rows `stride` bytes apart from `base` (a few KiB, L1).
void loads_only(const uint8_t* base, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; i += 4) {
    _tile_loadd(4, base, stride);
    _tile_loadd(5, base + 1024, stride);
    _tile_loadd(6, base + 2048, stride);
    _tile_loadd(7, base + 3072, stride);
  }
}

// Whether a tile register's next load waits for the product reading it: n products, each after
// loading both its tiles (aligned, L1), into the same two registers or alternating between two
// pairs; four accumulators either way.
void reload_probe(const uint8_t* base, bool alternate, int64_t n) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  if (alternate)
    for (int64_t i = 0; i < n; i += 4) {
      _tile_loadd(4, base, 64);
      _tile_loadd(5, base + 1024, 64);
      _tile_dpbusd(0, 4, 5);
      _tile_loadd(6, base + 2048, 64);
      _tile_loadd(7, base + 3072, 64);
      _tile_dpbusd(1, 6, 7);
      _tile_loadd(4, base, 64);
      _tile_loadd(5, base + 1024, 64);
      _tile_dpbusd(2, 4, 5);
      _tile_loadd(6, base + 2048, 64);
      _tile_loadd(7, base + 3072, 64);
      _tile_dpbusd(3, 6, 7);
    }
  else
    for (int64_t i = 0; i < n; i += 4) {
      _tile_loadd(6, base, 64);
      _tile_loadd(7, base + 1024, 64);
      _tile_dpbusd(0, 6, 7);
      _tile_loadd(6, base + 2048, 64);
      _tile_loadd(7, base + 3072, 64);
      _tile_dpbusd(1, 6, 7);
      _tile_loadd(6, base, 64);
      _tile_loadd(7, base + 1024, 64);
      _tile_dpbusd(2, 6, 7);
      _tile_loadd(6, base + 2048, 64);
      _tile_loadd(7, base + 3072, 64);
      _tile_dpbusd(3, 6, 7);
    }
}

// ---- the harness --------------------------------------------------------------------------------

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

template <class Body>
double run_threads(const std::vector<int>& cpus, Body body) {
  std::vector<std::thread> pool;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point t0;
  for (size_t t = 0; t < cpus.size(); ++t)
    pool.emplace_back([&, t] {
      if (cpus[t] >= 0)
        pin(cpus[t]);
      tiles_on();
      ++ready;
      while (!go.load())
        ;
      body(static_cast<int>(t));
      _tile_release();
    });
  while (ready.load() != static_cast<int>(cpus.size()))
    ;
  t0 = Clock::now();
  go = true;
  for (std::thread& th : pool)
    th.join();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::vector<int> first_cpus(int n) {
  std::vector<int> c;
  for (int i = 0; i < n; ++i)
    c.push_back(i);
  return c;
}

struct Variant {
  const char* name;
  bool aligned_b;
  std::function<void(const Row&)> fn;
};

// Per thread: a ring of 7 interleaved random planes, accumulators, stage.
struct Part {
  uint8_t* ring = nullptr;
  int32_t* c = nullptr;
  uint8_t* stage = nullptr;
  uint8_t* tiles = nullptr;  // rows 0-15 of the 7 planes as the product's A tiles
};
constexpr int64_t kTilesRow = kXTiles * 1024;

void fill_ring(uint8_t* ring, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t row_length = 176, padded_rows = kN + kK - 1;
  std::vector<float> plane(padded_rows * row_length, 0.0f);
  std::vector<uint8_t> bytes(padded_rows * kGroups);
  for (int j = 0; j < kK; ++j) {
    for (int64_t y = 0; y < padded_rows; ++y)
      for (int64_t x = 0; x < kN + kK - 1; ++x)
        plane[y * row_length + x] = static_cast<float>(byte(rng));
    cpu::interleave_plane(plane.data(), row_length, kN + kK - 1, kN, kK, kGroups, bytes.data(),
                          ring + j * kPlaneBytes);
  }
}

Row row_of(const Part& p, int64_t y, const int8_t* b) {
  Row r;
  for (int j = 0; j < kK; ++j)
    r.a[j] = p.ring + j * kPlaneBytes + y * kRowBytes;
  for (int j = 0; j < kK; ++j)
    r.tiles[j] = p.tiles + (y % 16 * kK + j) * kTilesRow;
  r.b = b;
  r.c = p.c;
  r.stage = p.stage;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const cpu::AmxSupport& amx = cpu::amx_int8_support();
  (void)amx;
#ifdef SOFT_AMX
  const bool soft_only = true;
#else
  const bool soft_only = false;
  if (!amx.usable) {
    std::printf("no AMX: %s\n", amx.why_not.c_str());
    return 1;
  }
#endif
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // what printed before a crash stays
  const std::string which = argc > 1 ? argv[1] : "all";
  std::vector<int> thread_counts;
  {
    std::string list = argc > 2 ? argv[2] : "1,8,16";
    for (size_t i = 0; i < list.size();) {
      size_t j = list.find(',', i);
      if (j == std::string::npos)
        j = list.size();
      thread_counts.push_back(std::atoi(list.substr(i, j - i).c_str()));
      i = j + 1;
    }
  }
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> tap(-1, 1);
  std::vector<float> taps(12 * 343);
  for (float& t : taps)
    t = tap(rng);
  const cpu::Int8BankWeights w = cpu::int8_bank_weights({kK, kK, 1, kK}, 12, taps.data());
  int8_t* b_aligned = aligned_new<int8_t>(w.tiles.size());
  std::memcpy(b_aligned, w.tiles.data(), w.tiles.size());
  const int8_t* b_product = w.pass_tiles(0);
  std::printf("B tiles: the product's at %% 64 = %d, the aligned copy %% 64 = %d\n",
              static_cast<int>(reinterpret_cast<uintptr_t>(b_product) % 64),
              static_cast<int>(reinterpret_cast<uintptr_t>(b_aligned) % 64));

  const int max_threads =
      std::max(hw, *std::max_element(thread_counts.begin(), thread_counts.end()));
  std::vector<Part> parts(max_threads);
  for (Part& p : parts) {
    p.ring = aligned_new<uint8_t>(kK * kPlaneBytes);
    fill_ring(p.ring, rng);
    p.c = aligned_new<int32_t>(kXTiles * kCTile);
    p.stage = aligned_new<uint8_t>(2 * 16 * 1024);
    p.tiles = aligned_new<uint8_t>(16 * kK * kTilesRow);
    for (int64_t y = 0; y < 16; ++y)
      for (int j = 0; j < kK; ++j)
        cpu::expand_a_tiles(p.ring + j * kPlaneBytes + y * kRowBytes, kXTiles,
                            p.tiles + (y * kK + j) * kTilesRow);
  }

  std::vector<Variant> variants = {
      {"old", false, v_old},
      {"old_alignedB", true, v_old},
      {"product", false, v_product},
      {"stage", true, v_stage},
      {"pair", true, v_pair<false>},
      {"pair_stage", true, v_pair<true>},
      {"five", true, v_five},
      {"four", true, v_four},
      {"product+combine", false, v_product_combine},
      {"pair+combine", true, v_pair_combine<false>},
      {"pair_stage+combine", true, v_pair_combine<true>},
  };
  g_scales = w.scales.data();

  // Bit for bit against the emulation: every variant on 23 rows of part 0, all 10 tiles.
  int failures = 0;
  {
    std::vector<int32_t> want(kCTile);
    uint8_t* check_tiles = aligned_new<uint8_t>(kK * kTilesRow);
    bool ran_any = false;
    for (const Variant& v : variants) {
      if ((which != "all" && which != "variants" && which != v.name) ||
          (soft_only && std::string(v.name).find("product") == 0))
        continue;
      ran_any = true;
      int64_t bad = 0;
      run_threads({-1}, [&](int) {
        Part& p = parts[0];
        for (int64_t y = 0; y < kN; y += 7) {
          std::fill(p.c, p.c + kXTiles * kCTile, -1);
          Row r = row_of(p, y, v.aligned_b ? b_aligned : b_product);
          for (int j = 0; j < kK; ++j) {  // row y's A tiles, for the product and the reference
            cpu::expand_a_tiles(r.a[j], kXTiles, check_tiles + j * kTilesRow);
            r.tiles[j] = check_tiles + j * kTilesRow;
          }
          v.fn(r);
          for (int64_t xt = 0; xt < kXTiles; ++xt) {
            cpu::Int8Tile t;
            for (int j = 0; j < kK; ++j)
              t.a[j] = r.tiles[j];
            t.b = b_product;
            t.k3 = kK;
            t.x_tile = xt;
            t.c = want.data();
            cpu::emulate_tile(t);
            for (int i = 0; i < kCTile; ++i)
              bad += p.c[xt * kCTile + i] != want[i];
          }
        }
      });
      std::printf("check %-18s %s (%lld of %lld accumulators differ)\n", v.name,
                  bad == 0 ? "bit for bit" : "DIFFERS", static_cast<long long>(bad),
                  static_cast<long long>(23 * kXTiles * kCTile));
      failures += bad != 0;
    }
    (void)ran_any;
  }

  // Soft tiles: a few rows and instructions, to check the harness's memory (sanitizers).
  const int64_t kRowsPerThread = soft_only ? 2 : 1600;
  // Timing: every thread 1600 output rows; ns per TDPBUSD per thread; the 160^3 time projected
  // (16 x 1600 rows = 160^2 rows of one plane each... = the whole volume's rows).
  const double dp_per_thread = static_cast<double>(kRowsPerThread) * kXTiles * 21;
  std::printf("\n%-18s %7s %9s %10s %12s\n", "variant", "threads", "wall ms", "ns/TDPBUSD",
              "160^3 ms");
  for (const Variant& v : variants) {
    if ((which != "all" && which != "variants" && which != v.name) ||
        (soft_only && std::string(v.name).find("product") == 0))
      continue;
    for (int threads : thread_counts) {
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        const double ms = run_threads(first_cpus(threads), [&](int id) {
          Part& p = parts[id];
          const int8_t* b = v.aligned_b ? b_aligned : b_product;
          for (int64_t r = 0; r < kRowsPerThread; ++r)
            v.fn(row_of(p, r % kN, b));
        });
        best = std::min(best, ms);
      }
      std::printf("%-18s %7d %9.2f %10.2f %12.2f\n", v.name, threads, best,
                  best * 1e6 / dp_per_thread, best * 16.0 / threads);
    }
  }
  if (which == "all" || which == "probes") {
    std::printf("\nprobes (ns per instruction per thread)\n");
    const int64_t n = soft_only ? 12 : 600000;
    for (int acc : {6, 3, 1})
      for (int threads : thread_counts) {
        const double ms = run_threads(first_cpus(threads), [&](int) { tmul_only(acc, n); });
        std::printf("TDPBUSD alone, %d accumulators, %2d threads: %6.2f ns\n", acc, threads,
                    ms * 1e6 / n);
      }
    for (int64_t stride : {64, 8})
      for (int threads : thread_counts) {
        const double ms = run_threads(
            first_cpus(threads), [&](int id) { loads_only(parts[id].ring + 4096 * 3, stride, n); });
        std::printf("TILELOADD alone, stride %2lld, %2d threads: %6.2f ns\n",
                    static_cast<long long>(stride), threads, ms * 1e6 / n);
      }
    for (bool alternate : {false, true})
      for (int threads : thread_counts) {
        const double ms = run_threads(first_cpus(threads),
                                      [&](int id) { reload_probe(parts[id].stage, alternate, n); });
        std::printf("2 TILELOADD + TDPBUSD, %s registers, %2d threads: %6.2f ns per TDPBUSD\n",
                    alternate ? "alternating" : "the same", threads, ms * 1e6 / n);
      }
    // Which CPUs share a tile unit: TDPBUSD on CPU 0 and CPU k at once.
    std::printf("TDPBUSD (6 accumulators) on CPUs 0 and k at once, ns each:");
    for (int k = 1; k < hw; ++k) {
      const double ms = run_threads({0, k}, [&](int) { tmul_only(6, n / 2); });
      std::printf(" %d:%.1f", k, ms * 1e6 / (n / 2));
    }
    std::printf("\n");
  }

  if (which == "all" || which == "call") {
    // The outputs' write bandwidth: 12 x 160^3 floats over 16 threads, plain and streaming.
    const int64_t voxels = kN * kN * kN;
    std::vector<float> input(voxels);
    std::uniform_int_distribution<int> byte(0, 255);
    for (float& v : input)
      v = static_cast<float>(byte(rng));
    std::vector<std::vector<float>> outputs(12, std::vector<float>(voxels, 0.0f));
    for (int threads : {8, 16}) {
      for (int nt = 0; nt < 2; ++nt) {
        double best = 1e30;
        for (int rep = 0; rep < 3; ++rep)
          best = std::min(best, run_threads(first_cpus(threads), [&](int id) {
                            const int64_t share = voxels / threads;
                            for (int f = 0; f < 12; ++f) {
                              float* o = outputs[f].data() + id * share;
                              if (nt) {
                                // Streaming stores need 64-byte alignment: from the first line.
                                float* a = reinterpret_cast<float*>(
                                    (reinterpret_cast<uintptr_t>(o) + 63) & ~uintptr_t{63});
                                for (int64_t i = 0; i + 16 <= share - (a - o); i += 16)
                                  _mm512_stream_ps(a + i, _mm512_set1_ps(1.0f));
                              } else {
                                for (int64_t i = 0; i < share; i += 16)
                                  _mm512_storeu_ps(o + i, _mm512_set1_ps(1.0f));
                              }
                            }
                          }));
        std::printf(
            "writing the 12 outputs (%.0f MB), %2d threads, %s stores: %.2f ms (%.0f GB/s)\n",
            12.0 * voxels * 4 * 1e-6, threads, nt ? "streaming" : "plain", best,
            12.0 * voxels * 4 / best * 1e-6);
      }
    }
    detail::BankProblem p;
    p.input = make_view(static_cast<const float*>(input.data()), 3, {kN, kN, kN, 1});
    p.filter_extent = {kK, kK, kK, 1};
    p.count = 12;
    p.taps = taps.data();
    p.offset = {-3, -3, -3, 0};
    p.output_extent = {kN, kN, kN, 1};
    std::vector<VolumeView> views;
    for (int f = 0; f < 12; ++f)
      views.push_back(make_view(outputs[f].data(), 3, {kN, kN, kN, 1}));
    p.outputs = views;
    FilterBank bank;
    bank.dims = 3;
    bank.extent = {kK, kK, kK, 1};
    bank.count = 12;
    bank.taps = taps.data();
    // The product's run_bank_int8 and the whole call, interleaved.
    std::vector<cpu_backend::Tuning> orders(1);
    for (int threads : {16, 8}) {
      Options o;
      o.threads = threads;
      o.backend = Backend::Cpu;
      std::vector<std::vector<double>> ms(orders.size() + 1);
      for (int rep = 0; rep < 5; ++rep) {
        for (size_t i = 0; i < orders.size(); ++i) {
          RunReport report;
          std::string why_not;
          const auto t0 = Clock::now();
          if (!cpu::run_bank_int8(p, o, report, orders[i], cpu::Int8Engine::Amx, why_not))
            std::printf("run_bank_int8: %s\n", why_not.c_str());
          ms[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        const auto t0 = Clock::now();
        filter_bank(p.input, bank, views, o);
        ms.back().push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      for (size_t i = 0; i <= orders.size(); ++i) {
        std::vector<double>& v = ms[i];
        std::sort(v.begin(), v.end());
        const std::string name = i == orders.size() ? std::string("filter_bank (default tuning)")
                                                    : std::string("run_bank_int8");
        std::printf("%2d threads: %-30s median %7.2f ms, min %7.2f, max %7.2f\n", threads,
                    name.c_str(), v[v.size() / 2], v.front(), v.back());
      }
    }
  }
  std::printf("\n%s\n", failures == 0 ? "every variant bit for bit" : "SOME VARIANT DIFFERS");
  return failures == 0 ? 0 : 2;
}
