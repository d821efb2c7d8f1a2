// The CPU filter bank on 8-bit inputs through AMX-INT8 tiles (TDPBUSD, u8 x s8 -> s32), with the
// GPU tensor-core bank's precision scheme (core/int8_digits.h): the same digits, exact int32 sums
// and combine_slices, so the CPU's responses equal the GPU's bit for bit.
//
// The mapping. Each boundary-padded plane of the input (padded as the FP32 bank pads it) is
// converted to bytes; row y of a plane is interleaved: position q holds the 8 bytes of the plane's
// rows y .. y + 7 at q (row i past the filter's k1 rows: zero),
//   interleaved[q * 8 + i] = padded(row y + i)[q].
// The 64 bytes from position x on are then the K vector of output x for tap plane j3 (K index
// k = dx * 8 + i: tap dx along x, tap row i along y). The row is expanded into A tiles of 16 rows
// of 64 bytes, row m of tile xt being the 64 bytes from position 16 xt + m on, each on its own
// cache line (a tile loaded from the interleaved row itself, rows 8 bytes apart, has 14 of its 16
// rows split across two lines: 5x an aligned load on 16 threads of the Xeon).
//   A = 16 outputs x 64 K (u8), one per tap plane j3;
//   B = 64 K x 16 columns (s8, AMX's VNNI layout: row k / 4, byte 4 n + k % 4), three per tap
//       plane: the pass's 48 columns, column c = digit * 12 + filter (digit-major);
//   C = 16 outputs x 16 columns (s32), three accumulators per 16 outputs.
// Per 16 outputs and tap plane: 1 A and 3 B loads for 3 TDPBUSD in seven tile registers
// (bank_int8_tiles.h). The weights and the accumulators are 64-byte aligned. The digits of each
// output's 12 filters are then combined in AVX-512 lanes (12 filters a vector). K holds
// k0 x k1 <= 8 x 8 taps per plane (49 of 64 for 7^3).
//
// The work: each thread takes a run of consecutive output planes and converts its planes (the
// k3 - 1 planes of its halo included) to bytes, so that no padded copy of the volume is made.
// For each output row y it expands row y of every plane of the run into A tiles, then walks one
// column of A tiles (16 outputs) down the run's output planes: output (y, z) reads the A tiles of
// planes z .. z + k3 - 1, k3 - 1 of which output (y, z - 1) has just read (in L1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "core/bank_problem.h"
#include "core/int8_digits.h"
#include "core/padding.h"
#include "ndconv/types.h"

namespace ndconv::cpu_backend {
struct Tuning;
}

namespace ndconv::cpu {

struct Int8BankShape {
  static constexpr int kTileRows = 16;   ///< outputs along x per A tile
  static constexpr int kTileBytes = 64;  ///< K per tile
  static constexpr int kGroup = 8;       ///< rows interleaved (taps along y) = taps along x per K
  static constexpr int kDigits =
      4;  ///< weight digits per tap: the slice test's choice, as on the GPU
  static constexpr int kFilters = 12;  ///< per pass
  static constexpr int kColumns = kFilters * kDigits;
  static constexpr int kNTiles = kColumns / 16;
  static constexpr int kBTileBytes = kTileRows * kTileBytes;  ///< 1 KiB
  static constexpr int kMaxK3 = 8;
};

static_assert(Int8BankShape::kColumns % 16 == 0, "whole B tiles");
// The accumulators' bound: 255 x 127 per tap, 64 taps per plane, kMaxK3 planes, below 2^24.
static_assert(int64_t{255} * 127 * Int8BankShape::kTileBytes * Int8BankShape::kMaxK3 <
                  (int64_t{1} << 24),
              "exact accumulators");

/// Storage on 64-byte boundaries (a cache line): the tiles' rows of 64 bytes never straddle two.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const {
    return false;
  }
};
template <class T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

/// Why the 8-bit bank cannot take a bank of filters with canonical extents `k` on a volume of
/// `dims` axes (empty when it can): 3D only, k0 <= 8, k1 <= 8, k3 <= 8.
std::string int8_bank_cannot_implement(int dims, const Index& k);

/// A pass's B tiles, [pass][j3][n tile][kBTileBytes], and the filters' scales [pass * 12 + local].
struct Int8BankWeights {
  int passes = 0;
  int k3 = 0;
  CacheLineVector<int8_t> tiles;
  std::vector<float> scales;
  double worst_split_error = 0;  ///< the largest split_error over the filters
  const int8_t* pass_tiles(int pass) const {
    return tiles.data() +
           static_cast<size_t>(pass) * k3 * Int8BankShape::kNTiles * Int8BankShape::kBTileBytes;
  }
};

/// `count` filters of canonical extents `k` (contiguous, correlation order, x fastest) split into
/// digits and laid out as B tiles.
Int8BankWeights int8_bank_weights(const Index& k, int count, const float* taps);

/// One A tile of a pass (16 outputs from x = 16 x_tile on in row y of plane z): its accumulators.
struct Int8Tile {
  /// Row y of plane z + j3 as A tiles (x_tiles tiles of 16 rows of 64 bytes, 64-byte aligned),
  /// for j3 < k3.
  const uint8_t* a[Int8BankShape::kMaxK3] = {};
  int64_t x_tile = 0;
  const int8_t* b = nullptr;  ///< the pass's B tiles (64-byte aligned)
  int k3 = 0;
  int32_t* c = nullptr;  ///< [16][kColumns], 64-byte aligned
};

/// The tile in plain C++: the same tile instructions (bank_int8_tiles.h) on emulated tiles.
void emulate_tile(const Int8Tile& tile);

/// Positions per interleaved row for n0 outputs along x: whole A tiles and their windows.
inline int64_t int8_x_groups(int64_t n0) {
  using S = Int8BankShape;
  return (n0 + S::kTileRows - 1) / S::kTileRows * S::kTileRows + S::kGroup;
}

/// `count` rows of a padded plane (row_length floats apart: x_count values, zeros after) as bytes
/// (rows x_groups apart, zeros from x_count on). Returns false when a value is not an integer in
/// 0..255 (NaN included).
bool bytes_from_rows(const float* rows, int64_t row_length, int64_t x_count, int64_t count,
                     int64_t x_groups, uint8_t* bytes);

/// Interleaves output rows y0 .. y1 - 1 of a plane for filters of k1 rows from the plane's rows as
/// bytes (x_groups apart; rows y0 .. y1 + k1 - 2 read) into `out` (row y at y x_groups 8 bytes:
/// x_groups positions of 8 bytes).
void interleave_rows(const uint8_t* bytes, int64_t x_groups, int k1, int64_t y0, int64_t y1,
                     uint8_t* out);

/// One interleaved output row (x_tiles A tiles' windows: 16 x_tiles + 8 positions of 8 bytes) as
/// x_tiles A tiles of 16 rows of 64 bytes (row m of tile xt: the 64 bytes from position
/// 16 xt + m on), so that no tile row straddles two cache lines.
void expand_a_tiles(const uint8_t* interleaved, int64_t x_tiles, uint8_t* out);

/// bytes_from_rows and interleave_rows over a whole plane (`plane`: n1 + k1 - 1 rows; `bytes`:
/// scratch for them).
bool interleave_plane(const float* plane, int64_t row_length, int64_t x_count, int64_t n1, int k1,
                      int64_t x_groups, uint8_t* bytes, uint8_t* out);

/// The responses of `filters` filters (<= 12) at outputs [x0, x0 + count) from an A tile's
/// accumulators c ([16][kColumns]): out[f][x - x0] = combine_slices of filter f's digits.
void combine_tile(const int32_t* c, int filters, const float* scales, int count, float* const* out);

/// Which implementation of the tile rows and the helpers the driver uses.
enum class Int8Engine {
  Amx,       ///< the AMX tiles (requires amx_int8_support().usable)
  Emulated,  ///< plain C++ (tests: the mapping's arithmetic without AMX)
};

/// Runs the bank (no weighted sum) through the 8-bit path when `problem` fits it and its padded
/// input is 8-bit; returns false, with the reason in `why_not` and the outputs unspecified, when
/// it does not. Fills the report's notes on success.
bool run_bank_int8(const detail::BankProblem& problem, const Options& options, RunReport& report,
                   const cpu_backend::Tuning& tuning, Int8Engine engine, std::string& why_not);

#if defined(__x86_64__)  // built where sources.cmake builds the x86 kernels
/// The AMX and AVX-512 versions (bank_amx.cpp; call only where the CPU has them): the tiles on the
/// AMX tiles, between amx_configure_tiles and amx_release_tiles on the same thread.
void amx_configure_tiles();
void amx_release_tiles();
void amx_tile(const Int8Tile& tile);
bool bytes_from_rows_avx512(const float* rows, int64_t row_length, int64_t x_count, int64_t count,
                            int64_t x_groups, uint8_t* bytes);
void interleave_rows_avx512(const uint8_t* bytes, int64_t x_groups, int k1, int64_t y0, int64_t y1,
                            uint8_t* out);
void expand_a_tiles_avx512(const uint8_t* interleaved, int64_t x_tiles, uint8_t* out);
bool interleave_plane_avx512(const float* plane, int64_t row_length, int64_t x_count, int64_t n1,
                             int k1, int64_t x_groups, uint8_t* bytes, uint8_t* out);
void combine_tile_avx512(const int32_t* c, int filters, const float* scales, int count,
                         float* const* out);
#endif

}  // namespace ndconv::cpu
