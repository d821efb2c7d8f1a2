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

/// The products of `t`'s A tile into its accumulators (tiles as in bank_int8.h: the A tile of
/// plane j3 at t.a[j3] + x_tile KiB, rows 64 bytes apart): accumulators 0-2, A 3, B 4-6. Seven
/// tile registers, 4 loads for 3 products; orders that use all eight registers (two A tiles
/// sharing each B load) or load B once per several A tiles measured slower or no faster on the
/// Xeon (docs/adaptive.md).
template <class Ops>
inline void int8_tile_products(Ops& ops, const Int8Tile& t) {
  using S = Int8BankShape;
  static_assert(S::kNTiles == 3, "the walk is written for three B tiles");
  constexpr int64_t kCStride = S::kColumns * sizeof(int32_t);  // bytes between C rows
  constexpr int64_t kA = S::kTileRows * S::kTileBytes;         // one A tile's bytes
  constexpr int kB = S::kBTileBytes;
  const int64_t x = t.x_tile * kA;
  const int8_t* b = t.b;
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
