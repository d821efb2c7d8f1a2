// The input of a dense tiled launch with its boundary resolved into a padded copy along x and
// axis 1, so that the tiled kernel reads every plane by bulk tensor copy with no halo to rewrite.
//
// Why: the bulk copy fills zeros outside the volume; for the other boundaries the tiles at the
// volume's faces would rewrite the halo of every plane they walk (global loads and a block barrier
// per plane), and most tiles of 3D and 4D volumes touch a face. Padded once, the halo costs one
// read and one write of the volume, whatever the number of planes a tile walks. Axes 2 and 3 need
// no padding: the bulk copy's box picks the boundary-resolved plane.
//
// Each thread writes kPadQuads groups of 4 consecutive padded columns with 128-bit stores (the
// padded rows are a multiple of 4 floats, the buffer 16-byte aligned) after reading them all:
// 128-bit loads inside the volume, element by element through the boundary map outside it.
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

/// A padded copy of a geometry's input: extent[0] columns (a multiple of 4) and extent[1] rows,
/// the first before[0] (a multiple of 4) columns and before[1] rows outside the volume on the low
/// side; axes 2 and 3 as in the input. Contiguous: stride[0] = 1, stride[1] = extent[0], and so
/// on. With `vector_reads` (x contiguous, rows and the input 16-byte aligned, as the bulk copy
/// needs anyway) four columns inside the volume are read with one 128-bit load.
struct PadLayout {
  int64_t extent[2];
  int64_t before[2];
  int64_t stride[kAxes];
  int vector_reads;
};

/// Four consecutive floats (one 128-bit access on the GPU).
struct PadQuad {
  float v[4];
};

/// Padded columns 4 * quad .. 4 * quad + 3 of padded row `row` of plane (i2, i3): the input
/// elements they read under g's boundary (zero where the boundary gives none).
NDCONV_HD PadQuad pad_read(const Geometry& g, const PadLayout& p, const float* in, int64_t quad,
                           int64_t row, int64_t i2, int64_t i3) {
  const int64_t y = boundary_index_hd(row - p.before[1], g.in_extent[1], g.boundary);
  const float* src = in + y * g.in_stride[1] + i2 * g.in_stride[2] + i3 * g.in_stride[3];
  const int64_t x0 = 4 * quad - p.before[0];
  PadQuad q;
#ifdef __CUDA_ARCH__
  if (p.vector_reads && y >= 0 && x0 >= 0 && x0 + 4 <= g.in_extent[0]) {
    const float4 f = __ldg(reinterpret_cast<const float4*>(src + x0));
    q.v[0] = f.x, q.v[1] = f.y, q.v[2] = f.z, q.v[3] = f.w;
    return q;
  }
#endif
  NDCONV_UNROLL
  for (int m = 0; m < 4; ++m) {
    const int64_t x = boundary_index_hd(x0 + m, g.in_extent[0], g.boundary);
    q.v[m] = y >= 0 && x >= 0 ? src[x * g.in_stride[0]] : 0.0f;
  }
  return q;
}

/// Writes pad_read's quad to its place in the padded buffer.
NDCONV_HD void pad_write(const PadLayout& p, float* out, const PadQuad& q, int64_t quad,
                         int64_t row, int64_t i2, int64_t i3) {
  float* dst = out + row * p.stride[1] + i2 * p.stride[2] + i3 * p.stride[3] + 4 * quad;
#ifdef __CUDA_ARCH__
  *reinterpret_cast<float4*>(dst) = make_float4(q.v[0], q.v[1], q.v[2], q.v[3]);
#else
  for (int m = 0; m < 4; ++m)
    dst[m] = q.v[m];
#endif
}

/// Quads per thread of the pad kernel: all their loads are issued before the first store, so
/// that each thread keeps 64 bytes in flight.
inline constexpr int kPadQuads = 4;

}  // namespace ndconv::kernels
