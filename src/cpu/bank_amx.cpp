// The 8-bit filter bank's hot parts on AMX-INT8 and AVX-512 (bank_int8.h): the tile row, the
// interleaving of the padded planes and the digits' combination. Built with the AMX and AVX-512
// flags (sources.cmake) and called only where amx_int8_support() says the CPU and the OS allow
// the tiles; the interleaving and the combination need only AVX-512F (the tests run both against
// the plain versions wherever AVX-512F is). No inline function from a header is called here (see
// row_kernel.h: the linker could pick this unit's AVX-512 copy for the whole program).
#include <immintrin.h>

#include "cpu/bank_int8.h"
#include "cpu/bank_int8_tiles.h"

namespace ndconv::cpu {

namespace {

using S = Int8BankShape;

// The tile registers of the mapping (bank_int8_tiles.h): accumulators 0-2, A 3, B 4-6.
constexpr int kTilesUsed = 7;

// Every lane: the masked forms of the conversions, whose unmasked ones GCC 12 warns about.
constexpr __mmask16 kAll = 0xFFFF;

// LDTILECFG's 64-byte operand (palette 1): 16 rows of 64 bytes in the tiles the mapping uses.
struct alignas(64) TileConfig {
  uint8_t palette = 0;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "LDTILECFG reads 64 bytes");

constexpr TileConfig tile_config() {
  TileConfig config;
  config.palette = 1;
  for (int t = 0; t < kTilesUsed; ++t) {
    config.bytes_per_row[t] = S::kTileBytes;
    config.rows[t] = S::kTileRows;
  }
  return config;
}

// In static storage, not built on the stack: GCC's _tile_loadconfig tells the compiler that it
// reads 8 bytes of its operand, so the stores of the rest of a stack copy may be dropped (which
// leaves the tiles unconfigured, and the first tile instruction faults).
constexpr TileConfig kTileConfig = tile_config();

}  // namespace

void amx_configure_tiles() {
  _tile_loadconfig(&kTileConfig);
}

void amx_release_tiles() {
  _tile_release();
}

namespace {

// The tile instructions by number for int8_tile_products (GCC's tile intrinsics take literal
// numbers: each call below is inlined with constant arguments and its switch folds away).
// clang-format off
struct AmxTiles {
  __attribute__((always_inline)) void zero(int t) {
    switch (t) {
      case 0: _tile_zero(0); break;
      case 1: _tile_zero(1); break;
      case 2: _tile_zero(2); break;
      default: __builtin_trap();
    }
  }
  __attribute__((always_inline)) void load(int t, const void* base, int64_t stride) {
    switch (t) {
      case 3: _tile_loadd(3, base, stride); break;
      case 4: _tile_loadd(4, base, stride); break;
      case 5: _tile_loadd(5, base, stride); break;
      case 6: _tile_loadd(6, base, stride); break;
      default: __builtin_trap();
    }
  }
  __attribute__((always_inline)) void store(int t, void* base, int64_t stride) {
    switch (t) {
      case 0: _tile_stored(0, base, stride); break;
      case 1: _tile_stored(1, base, stride); break;
      case 2: _tile_stored(2, base, stride); break;
      default: __builtin_trap();
    }
  }
  __attribute__((always_inline)) void dpbusd(int c, int a, int b) {
    switch (c * 100 + a * 10 + b) {
      case 34: _tile_dpbusd(0, 3, 4); break;
      case 135: _tile_dpbusd(1, 3, 5); break;
      case 236: _tile_dpbusd(2, 3, 6); break;
      default: __builtin_trap();
    }
  }
};
// clang-format on

}  // namespace

void amx_tile(const Int8Tile& t) {
  AmxTiles tiles;
  int8_tile_products(tiles, t);
}

bool bytes_from_rows_avx512(const float* rows, int64_t row_length, int64_t x_count, int64_t count,
                            int64_t x_groups, uint8_t* bytes) {
  // Whole vectors, then the rest one by one, checking every value.
  const int64_t whole = (row_length < x_groups ? row_length : x_groups) / 16 * 16;
  for (int64_t y = 0; y < count; ++y) {
    const float* in = rows + y * row_length;
    uint8_t* row = bytes + y * x_groups;
    int64_t q = 0;
    for (; q < whole; q += 16) {
      const __m512 v = _mm512_loadu_ps(in + q);
      // Not 8-bit: outside [0, 255] (NaN included) or not an integer.
      const __mmask16 in_range = _mm512_cmp_ps_mask(v, _mm512_set1_ps(0.0f), _CMP_GE_OQ) &
                                 _mm512_cmp_ps_mask(v, _mm512_set1_ps(255.0f), _CMP_LE_OQ);
      const __m512i i = _mm512_maskz_cvttps_epi32(kAll, v);
      const __mmask16 whole_value =
          _mm512_cmp_ps_mask(_mm512_maskz_cvtepi32_ps(kAll, i), v, _CMP_EQ_OQ);
      if (static_cast<__mmask16>(in_range & whole_value) != 0xFFFF)
        return false;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + q), _mm512_maskz_cvtepi32_epi8(kAll, i));
    }
    for (; q < x_groups; ++q) {
      const float v = q < row_length ? in[q] : 0.0f;
      if (!(v >= 0.0f && v <= 255.0f) || v != __builtin_floorf(v))
        return false;
      row[q] = q < x_count ? static_cast<uint8_t>(v) : 0;
    }
    // Positions from x_count on are zero in the padded rows already.
  }
  return true;
}

void interleave_rows_avx512(const uint8_t* bytes, int64_t x_groups, int k1, int64_t y0, int64_t y1,
                            uint8_t* out) {
  // Eight rows of 16 bytes into 16 positions of 8 bytes: a byte transpose by unpacking.
  const __m128i zero = _mm_setzero_si128();
  for (int64_t y = y0; y < y1; ++y) {
    const uint8_t* src[S::kGroup];
    for (int i = 0; i < S::kGroup; ++i)
      src[i] = i < k1 ? bytes + (y + i) * x_groups : nullptr;
    uint8_t* dst = out + y * x_groups * S::kGroup;
    int64_t q = 0;
    for (; q + 16 <= x_groups; q += 16) {
      __m128i r[S::kGroup];
      for (int i = 0; i < S::kGroup; ++i)
        r[i] = src[i] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i] + q)) : zero;
      const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
      const __m128i a2 = _mm_unpacklo_epi8(r[2], r[3]), a3 = _mm_unpackhi_epi8(r[2], r[3]);
      const __m128i a4 = _mm_unpacklo_epi8(r[4], r[5]), a5 = _mm_unpackhi_epi8(r[4], r[5]);
      const __m128i a6 = _mm_unpacklo_epi8(r[6], r[7]), a7 = _mm_unpackhi_epi8(r[6], r[7]);
      // 16-bit pairs (rows 0-1, 2-3, ...) per position; then 32-bit quads, then 64-bit octets.
      const __m128i b0 = _mm_unpacklo_epi16(a0, a2), b1 = _mm_unpackhi_epi16(a0, a2);
      const __m128i b2 = _mm_unpacklo_epi16(a1, a3), b3 = _mm_unpackhi_epi16(a1, a3);
      const __m128i b4 = _mm_unpacklo_epi16(a4, a6), b5 = _mm_unpackhi_epi16(a4, a6);
      const __m128i b6 = _mm_unpacklo_epi16(a5, a7), b7 = _mm_unpackhi_epi16(a5, a7);
      const __m128i o[16 / 2] = {_mm_unpacklo_epi32(b0, b4), _mm_unpackhi_epi32(b0, b4),
                                 _mm_unpacklo_epi32(b1, b5), _mm_unpackhi_epi32(b1, b5),
                                 _mm_unpacklo_epi32(b2, b6), _mm_unpackhi_epi32(b2, b6),
                                 _mm_unpacklo_epi32(b3, b7), _mm_unpackhi_epi32(b3, b7)};
      for (int j = 0; j < 8; ++j)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (q + 2 * j) * S::kGroup), o[j]);
    }
    for (; q < x_groups; ++q)
      for (int i = 0; i < S::kGroup; ++i)
        dst[q * S::kGroup + i] = src[i] ? src[i][q] : 0;
  }
}

void expand_a_tiles_avx512(const uint8_t* interleaved, int64_t x_tiles, uint8_t* out) {
  // A tile's 16 rows (64 bytes, 8 apart) from three vectors: the rows between by shifting
  // quadwords across each pair.
  for (int64_t xt = 0; xt < x_tiles; ++xt) {
    const uint8_t* a = interleaved + xt * S::kTileRows * S::kGroup;
    uint8_t* s = out + xt * S::kTileRows * S::kTileBytes;
    const __m512i v0 = _mm512_loadu_si512(a), v1 = _mm512_loadu_si512(a + 64),
                  v2 = _mm512_loadu_si512(a + 128);
    _mm512_store_si512(s, v0);
    _mm512_store_si512(s + 64, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 1));
    _mm512_store_si512(s + 128, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 2));
    _mm512_store_si512(s + 192, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 3));
    _mm512_store_si512(s + 256, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 4));
    _mm512_store_si512(s + 320, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 5));
    _mm512_store_si512(s + 384, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 6));
    _mm512_store_si512(s + 448, _mm512_maskz_alignr_epi64(0xFF, v1, v0, 7));
    _mm512_store_si512(s + 512, v1);
    _mm512_store_si512(s + 576, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 1));
    _mm512_store_si512(s + 640, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 2));
    _mm512_store_si512(s + 704, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 3));
    _mm512_store_si512(s + 768, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 4));
    _mm512_store_si512(s + 832, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 5));
    _mm512_store_si512(s + 896, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 6));
    _mm512_store_si512(s + 960, _mm512_maskz_alignr_epi64(0xFF, v2, v1, 7));
  }
}

bool interleave_plane_avx512(const float* plane, int64_t row_length, int64_t x_count, int64_t n1,
                             int k1, int64_t x_groups, uint8_t* bytes, uint8_t* out) {
  if (!bytes_from_rows_avx512(plane, row_length, x_count, n1 + k1 - 1, x_groups, bytes))
    return false;
  interleave_rows_avx512(bytes, x_groups, k1, 0, n1, out);
  return true;
}

void combine_tile_avx512(const int32_t* c, int filters, const float* scales, int count,
                         float* const* out) {
  // Per output, its filters' digits in the lanes (columns digit * 12 + filter): combine_slices
  // with one vector operation a step, the same fused multiply-adds. Then the 16 outputs x 16 lanes
  // transposed in registers (four rounds of shuffles; faster than a stage and gathers) into the
  // filters' rows.
  static_assert(S::kDigits == 4 && S::kTileRows == 16,
                "the steps are written for 4 digits, 16 rows");
  const __mmask16 lanes = static_cast<__mmask16>((1u << filters) - 1);
  const __m512 step = _mm512_set1_ps(1.0f / (1 << detail::kDigitBits));
  const __m512 scale = _mm512_maskz_loadu_ps(lanes, scales);
  auto digit = [&](const int32_t* row, int d) {
    return _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_loadu_epi32(lanes, row + d * S::kFilters));
  };
  __m512 r[16], t[16];
  for (int m = 0; m < 16; ++m) {
    const int32_t* row = c + m * S::kColumns;
    __m512 v = digit(row, 3);
    v = _mm512_fmadd_ps(v, step, digit(row, 2));
    v = _mm512_fmadd_ps(v, step, digit(row, 1));
    v = _mm512_fmadd_ps(v, step, digit(row, 0));
    r[m] = _mm512_mul_ps(v, scale);
  }
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(kAll, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_maskz_shuffle_ps(kAll, t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_maskz_shuffle_ps(kAll, t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_maskz_shuffle_ps(kAll, t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_maskz_shuffle_ps(kAll, t[i + 1], t[i + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_maskz_shuffle_f32x4(kAll, r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_maskz_shuffle_f32x4(kAll, r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_maskz_shuffle_f32x4(kAll, t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_maskz_shuffle_f32x4(kAll, t[i], t[i + 8], 0xdd);
  }
  // r[f] is now filter f's responses at the 16 outputs.
  const __mmask16 outputs = static_cast<__mmask16>((1u << count) - 1);
  for (int f = 0; f < filters; ++f)
    _mm512_mask_storeu_ps(out[f], outputs, r[f]);
}

}  // namespace ndconv::cpu
