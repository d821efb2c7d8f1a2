// The 8-bit bank's tile instructions (the mapping of bank_int8.h) as one sequence for the AMX tiles
// (bank_amx.cpp) and for their emulation in plain C++ (bank_int8.cpp, what CI checks without AMX),
// so that the emulation runs the same loads, strides, products and stores in the same order.
//
// `Ops` supplies the instructions on tile registers given by number: zero(t), load(t, base,
// stride), dpbusd(c, a, b), store(t, base, stride), and stage(a, s): the 16 rows of 64 bytes 8
// bytes apart from a into 16 rows 64 bytes apart at s. Each unit instantiates the sequence with its
// own Ops type from an unnamed namespace, so no function here is shared between the unit built
// with the AMX and AVX-512 flags and the generic one (see row_kernel.h).
#pragma once

#include <cstdint>

#include "cpu/bank_int8.h"

namespace ndconv::cpu {

/// The products of `t`'s A tiles (1 to 4) into their accumulators (tiles and strides as in
/// bank_int8.h), in one of three orders by the count:
///   one A tile: accumulators 0-2, A in 3 and 4 by turns (plane by plane), B 5-7;
///   two: six accumulators 0-5 (A tile m, B tile n in 3 m + n), A 6, B 7, the B tiles walked
///     0 1 2 for the first A tile and 2 1 0 for the second (each B load serves both);
///   four: one B column tile at a time over the planes, an accumulator per A tile (0-3), A in 4
///     and 5 by turns, B in 6 and 7 by turns (plane by plane): every load goes to a register
///     whose last reader is at least one product back; the A tiles are loaded once per B column
///     tile (three: the pair's order, then the one's).
template <class Ops>
inline void int8_tile_products(Ops& ops, const Int8Tile& t) {
  using S = Int8BankShape;
  static_assert(S::kNTiles == 3, "the walks are written for three B tiles");
  constexpr int64_t kCStride = S::kColumns * sizeof(int32_t);  // bytes between C rows
  constexpr int64_t kTileInts = S::kTileRows * S::kColumns;    // one A tile's accumulators
  constexpr int64_t kNextA = S::kTileRows * S::kGroup;         // bytes to the next A tile
  constexpr int64_t kA = S::kTileRows * S::kTileBytes;         // a staged A tile
  constexpr int kB = S::kBTileBytes;
  const int m_tiles = t.tiles;
  if (m_tiles == 3) {  // the pair, then the one left
    Int8Tile pair = t, one = t;
    pair.tiles = 2;
    one.tiles = 1;
    one.x_tile = t.x_tile + 2;
    one.c = t.c + 2 * kTileInts;
    if (t.stage != nullptr)
      one.stage = t.stage + 2 * S::kMaxK3 * kA;
    int8_tile_products(ops, pair);
    int8_tile_products(ops, one);
    return;
  }
  // A tile m of plane j3: from the interleaved rows (8 bytes apart), or copied into 64-byte rows.
  const uint8_t* a[Int8Tile::kMaxTiles][S::kMaxK3];
  int64_t a_stride = S::kGroup;
  for (int m = 0; m < m_tiles; ++m)
    for (int j3 = 0; j3 < t.k3; ++j3) {
      a[m][j3] = t.a[j3] + (t.x_tile + m) * kNextA;
      if (t.stage != nullptr) {
        uint8_t* s = t.stage + (m * S::kMaxK3 + j3) * kA;
        ops.stage(a[m][j3], s);
        a[m][j3] = s;
      }
    }
  if (t.stage != nullptr)
    a_stride = S::kTileBytes;
  if (m_tiles == 1) {
    ops.zero(0);
    ops.zero(1);
    ops.zero(2);
    const int8_t* b = t.b;
    for (int j3 = 0; j3 < t.k3; ++j3, b += S::kNTiles * kB) {
      const int ar = 3 + j3 % 2;
      ops.load(ar, a[0][j3], a_stride);
      ops.load(5, b, S::kTileBytes);
      ops.dpbusd(0, ar, 5);
      ops.load(6, b + kB, S::kTileBytes);
      ops.dpbusd(1, ar, 6);
      ops.load(7, b + 2 * kB, S::kTileBytes);
      ops.dpbusd(2, ar, 7);
    }
    ops.store(0, t.c, kCStride);
    ops.store(1, t.c + 16, kCStride);
    ops.store(2, t.c + 32, kCStride);
    return;
  }
  if (m_tiles == 2) {
    ops.zero(0);
    ops.zero(1);
    ops.zero(2);
    ops.zero(3);
    ops.zero(4);
    ops.zero(5);
    const int8_t* b = t.b;
    for (int j3 = 0; j3 < t.k3; ++j3, b += S::kNTiles * kB) {
      ops.load(6, a[0][j3], a_stride);
      ops.load(7, b, S::kTileBytes);
      ops.dpbusd(0, 6, 7);
      ops.load(7, b + kB, S::kTileBytes);
      ops.dpbusd(1, 6, 7);
      ops.load(7, b + 2 * kB, S::kTileBytes);
      ops.dpbusd(2, 6, 7);
      ops.load(6, a[1][j3], a_stride);
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
  for (int n = 0; n < S::kNTiles; ++n) {
    ops.zero(0);
    ops.zero(1);
    ops.zero(2);
    ops.zero(3);
    const int8_t* b = t.b + n * kB;
    for (int j3 = 0; j3 < t.k3; j3 += 2, b += 2 * S::kNTiles * kB) {
      ops.load(6, b, S::kTileBytes);
      ops.load(4, a[0][j3], a_stride);
      ops.dpbusd(0, 4, 6);
      ops.load(5, a[1][j3], a_stride);
      ops.dpbusd(1, 5, 6);
      ops.load(4, a[2][j3], a_stride);
      ops.dpbusd(2, 4, 6);
      ops.load(5, a[3][j3], a_stride);
      ops.dpbusd(3, 5, 6);
      if (j3 + 1 == t.k3)
        break;
      ops.load(7, b + S::kNTiles * kB, S::kTileBytes);
      ops.load(4, a[0][j3 + 1], a_stride);
      ops.dpbusd(0, 4, 7);
      ops.load(5, a[1][j3 + 1], a_stride);
      ops.dpbusd(1, 5, 7);
      ops.load(4, a[2][j3 + 1], a_stride);
      ops.dpbusd(2, 4, 7);
      ops.load(5, a[3][j3 + 1], a_stride);
      ops.dpbusd(3, 5, 7);
    }
    ops.store(0, t.c + n * 16, kCStride);
    ops.store(1, t.c + kTileInts + n * 16, kCStride);
    ops.store(2, t.c + 2 * kTileInts + n * 16, kCStride);
    ops.store(3, t.c + 3 * kTileInts + n * 16, kCStride);
  }
}

}  // namespace ndconv::cpu
