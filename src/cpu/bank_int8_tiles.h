// The 8-bit bank's tile instructions (the mapping of bank_int8.h) as one sequence for the AMX tiles
// (bank_amx.cpp) and for their emulation in plain C++ (bank_int8.cpp, what CI checks without AMX),
// so that the emulation runs the same loads, strides, products and stores in the same order.
//
// `Ops` supplies the instructions on tile registers given by number: zero(t), load(t, base,
// stride), dpbusd(c, a, b), store(t, base, stride). Each unit instantiates the sequence with its
// own Ops type from an unnamed namespace, so no function here is shared between the unit built
// with the AMX and AVX-512 flags and the generic one (see row_kernel.h).
#pragma once

#include <cstdint>

#include "cpu/bank_int8.h"

namespace ndconv::cpu {

/// The products of `t`'s one, two or four A tiles into their accumulators (tiles as in
/// bank_int8.h: A tile m of plane j3 at t.a[j3] + (x_tile + m) KiB, rows 64 bytes apart), in one
/// of three orders:
///   one A tile: accumulators 0-2, A 3, B 4-6 (seven tile registers; 4 loads for 3 products);
///   two: six accumulators 0-5 (A tile m, B tile n in 3 m + n), A 6, B 7, the B tiles walked
///     0 1 2 for the first A tile and 2 1 0 for the second (all eight registers; 7 for 6);
///   four: B tiles 0 and 1 for two A tiles at a time, then B tile 2 for all four (seven
///     registers; 13 loads for 12 products).
template <class Ops>
inline void int8_tile_products(Ops& ops, const Int8Tile& t) {
  using S = Int8BankShape;
  static_assert(S::kNTiles == 3, "the walks are written for three B tiles");
  constexpr int64_t kCStride = S::kColumns * sizeof(int32_t);  // bytes between C rows
  constexpr int64_t kTileInts = S::kTileRows * S::kColumns;    // one A tile's accumulators
  constexpr int64_t kA = S::kTileRows * S::kTileBytes;         // one A tile's bytes
  constexpr int kB = S::kBTileBytes;
  const int64_t x = t.x_tile * kA;
  const int8_t* b = t.b;
  if (t.tiles == 2) {
    ops.zero(0);
    ops.zero(1);
    ops.zero(2);
    ops.zero(3);
    ops.zero(4);
    ops.zero(5);
    for (int j3 = 0; j3 < t.k3; ++j3, b += S::kNTiles * kB) {
      ops.load(6, t.a[j3] + x, S::kTileBytes);
      ops.load(7, b, S::kTileBytes);
      ops.dpbusd(0, 6, 7);
      ops.load(7, b + kB, S::kTileBytes);
      ops.dpbusd(1, 6, 7);
      ops.load(7, b + 2 * kB, S::kTileBytes);
      ops.dpbusd(2, 6, 7);
      ops.load(6, t.a[j3] + x + kA, S::kTileBytes);
      ops.dpbusd(5, 6, 7);
      ops.load(7, b + kB, S::kTileBytes);
      ops.dpbusd(4, 6, 7);
      ops.load(7, b, S::kTileBytes);
      ops.dpbusd(3, 6, 7);
    }
    ops.store(0, t.c, kCStride);
    ops.store(1, t.c + 16, kCStride);
    ops.store(2, t.c + 32, kCStride);
    ops.store(3, t.c + kTileInts, kCStride);
    ops.store(4, t.c + kTileInts + 16, kCStride);
    ops.store(5, t.c + kTileInts + 32, kCStride);
    return;
  }
  if (t.tiles == 4) {
    // B column tiles 0 and 1 for A tiles 0-1, then 2-3: accumulators 0-3 (A tile p of the two,
    // B tile n: 2 n + p), A 4, B 5 and 6.
    for (int pair = 0; pair < 4; pair += 2) {
      ops.zero(0);
      ops.zero(1);
      ops.zero(2);
      ops.zero(3);
      const int8_t* bp = t.b;
      for (int j3 = 0; j3 < t.k3; ++j3, bp += S::kNTiles * kB) {
        ops.load(5, bp, S::kTileBytes);
        ops.load(6, bp + kB, S::kTileBytes);
        ops.load(4, t.a[j3] + x + pair * kA, S::kTileBytes);
        ops.dpbusd(0, 4, 5);
        ops.dpbusd(2, 4, 6);
        ops.load(4, t.a[j3] + x + (pair + 1) * kA, S::kTileBytes);
        ops.dpbusd(1, 4, 5);
        ops.dpbusd(3, 4, 6);
      }
      int32_t* c = t.c + pair * kTileInts;
      ops.store(0, c, kCStride);
      ops.store(1, c + kTileInts, kCStride);
      ops.store(2, c + 16, kCStride);
      ops.store(3, c + kTileInts + 16, kCStride);
    }
    // B column tile 2 for A tiles 0-3: accumulators 0-3, B 5, A 4 and 6 by turns.
    ops.zero(0);
    ops.zero(1);
    ops.zero(2);
    ops.zero(3);
    for (int j3 = 0; j3 < t.k3; ++j3, b += S::kNTiles * kB) {
      ops.load(5, b + 2 * kB, S::kTileBytes);
      ops.load(4, t.a[j3] + x, S::kTileBytes);
      ops.dpbusd(0, 4, 5);
      ops.load(6, t.a[j3] + x + kA, S::kTileBytes);
      ops.dpbusd(1, 6, 5);
      ops.load(4, t.a[j3] + x + 2 * kA, S::kTileBytes);
      ops.dpbusd(2, 4, 5);
      ops.load(6, t.a[j3] + x + 3 * kA, S::kTileBytes);
      ops.dpbusd(3, 6, 5);
    }
    ops.store(0, t.c + 32, kCStride);
    ops.store(1, t.c + kTileInts + 32, kCStride);
    ops.store(2, t.c + 2 * kTileInts + 32, kCStride);
    ops.store(3, t.c + 3 * kTileInts + 32, kCStride);
    return;
  }
  ops.zero(0);
  ops.zero(1);
  ops.zero(2);
  for (int j3 = 0; j3 < t.k3; ++j3, b += S::kNTiles * kB) {
    ops.load(3, t.a[j3] + x, S::kTileBytes);
    ops.load(4, b, S::kTileBytes);
    ops.dpbusd(0, 3, 4);
    ops.load(5, b + kB, S::kTileBytes);
    ops.dpbusd(1, 3, 5);
    ops.load(6, b + 2 * kB, S::kTileBytes);
    ops.dpbusd(2, 3, 6);
  }
  ops.store(0, t.c, kCStride);
  ops.store(1, t.c + 16, kCStride);
  ops.store(2, t.c + 32, kCStride);
}

}  // namespace ndconv::cpu
