// The tensor-core dense filter's host side (tensor_dense_layout.h): plain C++, built with or
// without CUDA, so that CI's host emulation checks the kernel's index arithmetic without a GPU.
#include "cuda/tensor_dense/tensor_dense_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/parallel_for.h"
#include "core/problem.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_tensor_dense {

namespace {

template <class Tile>
TensorDenseGeometry geometry_of(const int64_t (&outputs)[3]) {
  TensorDenseGeometry g;
  g.taps = Tile::kTaps;
  for (int a = 0; a < 3; ++a)
    g.outputs[a] = outputs[a];
  const int64_t tiles_x = (outputs[0] + Tile::kBX - 1) / Tile::kBX;
  const int64_t tiles_y = (outputs[1] + Tile::kBY - 1) / Tile::kBY;
  // The last tile's staged words and rows, and the last block's planes.
  g.row_bytes = (tiles_x - 1) * Tile::kBX + 4 * Tile::kWords;
  g.rows = (tiles_y - 1) * Tile::kBY + Tile::kRows;
  g.planes = outputs[2] + Tile::kTaps - 1;
  return g;
}

template <int T>
TensorDenseWeights weights_of(const float* filter) {
  using S = TensorDenseShape<T>;
  constexpr int taps = T * T * T;
  const detail::SplitFilter split = detail::split_filter(filter, taps, S::kSlices);
  TensorDenseWeights w;
  w.scale = split.scale;
  w.fragments.assign(static_cast<size_t>(T * S::kBRegs * 32), 0);
  for (int c = 0; c < T; ++c)
    for (int r = 0; r < S::kBRegs; ++r)
      for (int lane = 0; lane < 32; ++lane) {
        // B register r of the lane: K bytes 16 (r % 2) + 4 t + i of chunk r / 2 (the k16's: 4 t +
        // i), column g.
        const int t = lane % 4, n = lane / 4, j = n / 4, s = n % 4;
        const int gp = r < 2 * S::kFull ? 8 * (r / 2) + 4 * (r % 2) + t : 8 * S::kFull + t;
        uint32_t word = 0;
        for (int i = 0; i < 4; ++i) {
          const int ax = 4 * group_col<T>(gp) + i, ay = group_row<T>(gp) - j;
          int8_t d = 0;
          if (ax < T && ay >= 0 && ay < T && !split.digits.empty())
            d = split.digits[static_cast<size_t>(s * taps + (c * T + ay) * T + ax)];
          word |= uint32_t{static_cast<uint8_t>(d)} << (8 * i);
        }
        w.fragments[static_cast<size_t>((c * S::kBRegs + r) * 32 + lane)] =
            static_cast<int32_t>(word);
      }
  return w;
}

uint32_t funnel(uint32_t lo, uint32_t hi, int shift) {
  return static_cast<uint32_t>(((uint64_t{hi} << 32 | lo) >> shift) & 0xffffffffu);
}
int byte_of(uint32_t w, int i, bool is_signed) {
  const int b = (w >> (8 * i)) & 0xff;
  return is_signed && b > 127 ? b - 256 : b;
}

// D += A B for one warp, the PTX ISA's fragments of mma.m16n8k32 (k32: A 4 registers, B 2) or
// m16n8k16 (A 2, B 1) with 8-bit operands: A register q of lane (g, t) holds row g + 8 (q & 1),
// K 16 (q >> 1) + 4 t + i; B register q K 16 q + 4 t + i, column g; C register q row g + 8 (q >>
// 1), column 2 t + (q & 1).
void warp_mma(int32_t (&c)[32][4], const uint32_t (&a)[32][4], const uint32_t (&b)[32][2],
              bool k32) {
  int am[16][32] = {}, bm[32][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      for (int q = 0; q < (k32 ? 4 : 2); ++q)
        am[g + 8 * (q & 1)][16 * (q >> 1) + 4 * t + i] = byte_of(a[lane][q], i, false);
      for (int q = 0; q < (k32 ? 2 : 1); ++q)
        bm[16 * q + 4 * t + i][g] = byte_of(b[lane][q], i, true);
    }
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q) {
      const int row = lane / 4 + 8 * (q >> 1), col = 2 * (lane % 4) + (q & 1);
      for (int k = 0; k < (k32 ? 32 : 16); ++k)
        c[lane][q] += am[row][k] * bm[k][col];
    }
}

template <class Tile>
void emulate_tile(const TensorDenseGeometry& g, const uint8_t* padded, const TensorDenseWeights& w,
                  int zs, float* out) {
  using S = typename Tile::S;
  constexpr int T = Tile::kTaps, MT = Tile::kMTiles, WX = Tile::kWarpsX, WY = Tile::kWarpsY;
  const int64_t n0 = g.outputs[0], n1 = g.outputs[1], n2 = g.outputs[2];
  std::vector<uint32_t> plane(Tile::kPlaneWords);
  // acc[warp][slot][m][lane][4]
  std::vector<int32_t> acc(static_cast<size_t>(WX * WY * T * MT * 32 * 4));
  auto slot = [&](int warp, int u, int m) {
    return reinterpret_cast<int32_t(*)[32][4]>(
        &acc[static_cast<size_t>(((warp * T + u) * MT + m) * 32 * 4)]);
  };
  for (int64_t z_b = 0; z_b < n2; z_b += zs)
    for (int64_t y_b = 0; y_b < n1; y_b += Tile::kBY)
      for (int64_t x_b = 0; x_b < n0; x_b += Tile::kBX) {
        const int64_t planes = std::min<int64_t>(zs, n2 - z_b) + T - 1;
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t p = 0; p < planes; ++p) {
          for (int r = 0; r < Tile::kRows; ++r)
            for (int wd = 0; wd < Tile::kWords; ++wd) {
              uint32_t word = 0;
              for (int i = 0; i < 4; ++i)
                word |= uint32_t{padded[static_cast<size_t>(
                            ((z_b + p) * g.rows + y_b + r) * g.row_bytes + x_b + 4 * wd + i)]}
                        << (8 * i);
              plane[static_cast<size_t>(r * Tile::kStride + wd)] = word;
            }
          const int u = static_cast<int>(p % T);
          for (int warp = 0; warp < WX * WY; ++warp) {
            const int wx = warp % WX, wy = warp / WX;
            for (int m = 0; m < MT; ++m)
              std::memset(slot(warp, u, m), 0, sizeof(int32_t) * 32 * 4);  // output plane p
            for (int ch = 0; ch < S::kFull + (S::kHalf ? 1 : 0); ++ch) {
              const bool k32 = ch < S::kFull;
              for (int m = 0; m < MT; ++m) {
                uint32_t fa[32][4] = {};
                for (int lane = 0; lane < 32; ++lane)
                  for (int q = 0; q < (k32 ? 4 : 2); ++q) {
                    const int off = a_offset<Tile>(lane, wx, wy, ch, q, m);
                    fa[lane][q] = funnel(plane[static_cast<size_t>(off)],
                                         plane[static_cast<size_t>(off + 1)], a_shift(lane));
                  }
                for (int c = 0; c < T; ++c) {
                  uint32_t fb[32][2] = {};
                  for (int lane = 0; lane < 32; ++lane)
                    for (int q = 0; q < (k32 ? 2 : 1); ++q)
                      fb[lane][q] = static_cast<uint32_t>(w.fragments[static_cast<size_t>(
                          (c * S::kBRegs + 2 * ch + q) * 32 + lane)]);
                  warp_mma(*slot(warp, (u - c + T) % T, m), fa, fb, k32);
                }
              }
            }
            const int64_t o = p - (T - 1);  // complete: slot (u + 1) mod T
            if (o < 0)
              continue;
            for (int m = 0; m < MT; ++m) {
              int32_t(*c)[4] = *slot(warp, (u + 1) % T, m);
              for (int lane = 0; lane < 32; ++lane) {
                const bool odd = lane & 1;
                int32_t d[4];
                lane_digits(c[lane], sent(c[lane ^ 1], !odd, 0), sent(c[lane ^ 1], !odd, 1), odd,
                            d);
                const int64_t x = x_b + out_x<Tile>(lane, wx, m), y = y_b + out_y(lane, wy);
                if (x < n0 && y < n1)
                  out[static_cast<size_t>(((z_b + o) * n1 + y) * n0 + x)] =
                      combine_digits<T>(d, w.scale);
              }
            }
          }
        }
      }
}

}  // namespace

TensorDenseGeometry tensor_dense_geometry(int taps, const int64_t (&outputs)[3]) {
  if (taps == 7)
    return geometry_of<TensorDenseTile7>(outputs);
  if (taps == 11)
    return geometry_of<TensorDenseTile11>(outputs);
  throw InvalidArgument("the tensor-core dense kernel takes 7^3 and 11^3 filters");
}

std::string tensor_dense_cannot_implement(int dims, const Index& filter_extent) {
  if (dims != 3)
    return "a " + std::to_string(dims) + "D volume (the tensor-core dense kernel is 3D)";
  const int64_t k = filter_extent[0];
  if ((k != 7 && k != 11) || filter_extent[1] != k || filter_extent[2] != k)
    return "a filter of " + std::to_string(filter_extent[0]) + "x" +
           std::to_string(filter_extent[1]) + "x" + std::to_string(filter_extent[2]) +
           " taps (the tensor-core dense kernel takes 7^3 and 11^3)";
  return "";
}

TensorDenseWeights tensor_dense_weights(int taps, const float* filter) {
  if (taps == 7)
    return weights_of<7>(filter);
  if (taps == 11)
    return weights_of<11>(filter);
  throw InvalidArgument("the tensor-core dense kernel takes 7^3 and 11^3 filters");
}

std::vector<uint8_t> tensor_dense_padded(const TensorDenseGeometry& g,
                                         const StoredVolumeView& input, const Index& offset,
                                         Boundary boundary, int threads) {
  if (input.type != ScalarType::UInt8 || input.dims != 3)
    throw InvalidArgument("internal: the tensor-core dense kernel reads a 3D 8-bit volume");
  std::vector<uint8_t> bytes(static_cast<size_t>(g.padded_bytes()), 0);
  const int64_t span[3] = {g.outputs[0] + g.taps - 1, g.outputs[1] + g.taps - 1,
                           g.outputs[2] + g.taps - 1};
  core::parallel_for(
      std::max(1, threads), span[2],
      [&](int64_t z0, int64_t z1, int) {
        std::vector<int64_t> xs(static_cast<size_t>(span[0]));
        for (int64_t x = 0; x < span[0]; ++x)
          xs[static_cast<size_t>(x)] =
              detail::boundary_index(x + offset[0], input.extent[0], boundary);
        for (int64_t z = z0; z < z1; ++z) {
          const int64_t iz = detail::boundary_index(z + offset[2], input.extent[2], boundary);
          for (int64_t y = 0; y < span[1]; ++y) {
            const int64_t iy = detail::boundary_index(y + offset[1], input.extent[1], boundary);
            if (iz < 0 || iy < 0)
              continue;  // zeros
            const unsigned char* row = input.data + iz * input.stride[2] + iy * input.stride[1];
            uint8_t* dst = bytes.data() + (z * g.rows + y) * g.row_bytes;
            for (int64_t x = 0; x < span[0]; ++x) {
              const int64_t ix = xs[static_cast<size_t>(x)];
              if (ix >= 0)
                dst[x] = row[ix * input.stride[0]];
            }
          }
        }
      },
      {});
  return bytes;
}

void emulate_tensor_dense(const TensorDenseGeometry& g, const uint8_t* padded,
                          const TensorDenseWeights& w, int planes_per_block, float* out) {
  if (g.taps == 7)
    emulate_tile<TensorDenseTile7>(g, padded, w, planes_per_block, out);
  else if (g.taps == 11)
    emulate_tile<TensorDenseTile11>(g, padded, w, planes_per_block, out);
  else
    throw InvalidArgument("the tensor-core dense kernel takes 7^3 and 11^3 filters");
}

void tensor_dense_exact(const TensorDenseGeometry& g, const uint8_t* padded, const float* filter,
                        float* out) {
  const int t = g.taps, taps = t * t * t;
  const detail::SplitFilter split = detail::split_filter(filter, taps, 4);
  for (int64_t z = 0; z < g.outputs[2]; ++z)
    for (int64_t y = 0; y < g.outputs[1]; ++y)
      for (int64_t x = 0; x < g.outputs[0]; ++x) {
        int32_t acc[4] = {0, 0, 0, 0};
        for (int c = 0; c < t; ++c)
          for (int ay = 0; ay < t; ++ay) {
            const uint8_t* row = padded + ((z + c) * g.rows + y + ay) * g.row_bytes + x;
            for (int ax = 0; ax < t; ++ax)
              for (int d = 0; d < 4 && !split.digits.empty(); ++d)
                acc[d] +=
                    row[ax] * split.digits[static_cast<size_t>(d * taps + (c * t + ay) * t + ax)];
          }
        out[static_cast<size_t>((z * g.outputs[1] + y) * g.outputs[0] + x)] =
            detail::combine_slices(acc, 4, split.scale);
      }
}

}  // namespace ndconv::cuda_tensor_dense
