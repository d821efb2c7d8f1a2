// The border kernel: corrects, after a bulk-copied tiled launch that left the copy engine's zeros
// in the halo of its face tiles (kTiledBulkZeroFaces, tiled_thread.h), the outputs whose footprint
// leaves the volume along x or axis 1, for the launch's boundary condition.
//
// Why: the bulk copy fills a box with zeros wherever it reaches past the volume, and the other
// boundaries need those columns and rows from the boundary rule. Rewriting them in the tile
// costs global loads and a block barrier per plane at every face tile, and padding the input first
// (pad_thread.h) one read and one write of the volume: on a small filter either costs far more
// than the faces' share of the work. The outputs that read the zeros form a shell about K wide
// along the four faces, 4K/n of the outputs. Their sums lack exactly the terms of the taps whose
// input lies outside along x or axis 1 (the zeros stood there), so this kernel adds those terms,
// with the boundary's values: a fraction of the shell's taps.
// Axes 2 and 3 need nothing: the tiled kernel's boxes pick the boundary-resolved plane.
//
// Design: the shell is up to four boxes (the two faces along x over all of axis 1, the two faces
// along axis 1 between them), each over all of axes 2 and 3. A block of kBorderThreads owns
// 2^log_x x 2^log_y outputs along x and axis 1 (powers of two fitting the box, so that the lanes
// of a warp read distinct banks), one index of axis 2 and a chunk of axis 3 (kBorderKO outputs per
// thread, the block's remaining threads one chunk after another). It stages the input patch its
// outputs read, boundary resolved, in shared memory (asynchronous copies); each thread then sums
// the missing terms with the blocked kernel's arithmetic (blocked_accumulate over the tap rows that
// leave the volume), reading the patch as a volume of its own whose footprints all lie inside, and
// adds them to the tiled kernel's outputs (launched after it on the same stream).
#pragma once

#include "kernels/async_copy.h"
#include "kernels/blocked_rows.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

inline constexpr int kBorderThreads = 128;
inline constexpr int kBorderKO = 8;  ///< outputs along axis 3 per thread
inline constexpr int kBorderMaxBoxes = 4;

/// One box of the shell: outputs [first[a], first[a] + extent[a]) along x (a = 0) and axis 1,
/// every index of axes 2 and 3.
struct BorderBox {
  int64_t first[2];
  int64_t extent[2];
  int log_x, log_y;     ///< a block's threads along x and axis 1: 2^log_x, 2^log_y
  int64_t chunks[3];    ///< blocks along x, along axis 1, and over axes 2 and 3 together
  int64_t first_block;  ///< the blocks of the boxes before this one
};

/// A launch of the border kernel: its boxes (none where no footprint leaves the volume).
struct BorderPlan {
  BorderBox box[kBorderMaxBoxes];
  int boxes;
  int64_t blocks;    ///< of all boxes
  int patch_floats;  ///< the largest block's patch: the launch's dynamic shared memory / 4
};

/// The input patch of one block: extents along the four axes and strides, x contiguous.
struct BorderPatch {
  int extent[kAxes];
  int stride[kAxes];
  int floats;
};

/// The smallest l with 2^l >= n (n >= 1).
NDCONV_HD int border_log2_ceil(int64_t n) {
  int l = 0;
  while ((int64_t{1} << l) < n)
    ++l;
  return l;
}

/// Threads of a block one after another along axis 3 (each kBorderKO outputs).
NDCONV_HD int border_groups(int log_x, int log_y) {
  return kBorderThreads >> (log_x + log_y);
}

/// The patch a block with 2^log_x x 2^log_y threads along x and axis 1 reads. Its rows (along x)
/// are a pitch apart that is an odd multiple of the threads along x (below a warp), so that the
/// rows of one warp start in different banks.
NDCONV_HD BorderPatch border_patch(const Geometry& g, int log_x, int log_y) {
  const int cx = 1 << log_x, cy = 1 << log_y;
  BorderPatch p;
  p.extent[0] = cx + g.filter_extent[0] - 1;
  p.extent[1] = cy + g.filter_extent[1] - 1;
  p.extent[2] = g.filter_extent[2];
  p.extent[3] = border_groups(log_x, log_y) * kBorderKO + g.filter_extent[3] - 1;
  const int pitch =
      cx >= 32 ? p.extent[0] : cx + (p.extent[0] - cx + 2 * cx - 1) / (2 * cx) * (2 * cx);
  p.stride[0] = 1;
  p.stride[1] = pitch;
  p.stride[2] = pitch * p.extent[1];
  p.stride[3] = p.stride[2] * p.extent[2];
  p.floats = p.stride[3] * p.extent[3];
  return p;
}

/// The outputs [lo, hi) along axis a whose footprint lies inside the input along that axis.
NDCONV_HD void border_inside(const Geometry& g, int a, int64_t& lo, int64_t& hi) {
  const int64_t n = g.out_extent[a];
  const int64_t first = -g.offset[a];
  const int64_t end = g.in_extent[a] - g.offset[a] - g.filter_extent[a] + 1;
  lo = first < 0 ? 0 : (first > n ? n : first);
  hi = end < lo ? lo : (end > n ? n : end);
}

/// The border kernel's launch for geometry g (canonical axes, as the tiled kernel's).
NDCONV_HD BorderPlan border_plan(const Geometry& g) {
  BorderPlan plan{};
  int64_t lo0, hi0, lo1, hi1;
  border_inside(g, 0, lo0, hi0);
  border_inside(g, 1, lo1, hi1);
  const int64_t n0 = g.out_extent[0], n1 = g.out_extent[1];
  const int64_t first[kBorderMaxBoxes][2] = {{0, 0}, {hi0, 0}, {lo0, 0}, {lo0, hi1}};
  const int64_t extent[kBorderMaxBoxes][2] = {
      {lo0, n1}, {n0 - hi0, n1}, {hi0 - lo0, lo1}, {hi0 - lo0, n1 - hi1}};
  for (int k = 0; k < kBorderMaxBoxes; ++k) {
    if (extent[k][0] <= 0 || extent[k][1] <= 0 || g.out_extent[2] <= 0 || g.out_extent[3] <= 0)
      continue;
    BorderBox& b = plan.box[plan.boxes++];
    b.first[0] = first[k][0];
    b.first[1] = first[k][1];
    b.extent[0] = extent[k][0];
    b.extent[1] = extent[k][1];
    b.log_x = border_log2_ceil(b.extent[0] < 32 ? b.extent[0] : 32);
    const int64_t rows = kBorderThreads >> b.log_x;
    b.log_y = border_log2_ceil(b.extent[1] < rows ? b.extent[1] : rows);
    const int64_t per3 = int64_t{border_groups(b.log_x, b.log_y)} * kBorderKO;
    b.chunks[0] = (b.extent[0] + (1 << b.log_x) - 1) >> b.log_x;
    b.chunks[1] = (b.extent[1] + (1 << b.log_y) - 1) >> b.log_y;
    b.chunks[2] = g.out_extent[2] * ((g.out_extent[3] + per3 - 1) / per3);
    b.first_block = plan.blocks;
    plan.blocks += b.chunks[0] * b.chunks[1] * b.chunks[2];
    const int floats = border_patch(g, b.log_x, b.log_y).floats;
    plan.patch_floats = floats > plan.patch_floats ? floats : plan.patch_floats;
  }
  return plan;
}

/// Where block b of a plan works: its box, patch, and the first output of its chunk per axis.
struct BorderBlock {
  int box;
  BorderPatch patch;
  int64_t o[kAxes];
};

NDCONV_HD BorderBlock border_block(const Geometry& g, const BorderPlan& plan, int64_t b) {
  BorderBlock k;
  k.box = 0;
  while (k.box + 1 < plan.boxes && b >= plan.box[k.box + 1].first_block)
    ++k.box;
  const BorderBox& box = plan.box[k.box];
  k.patch = border_patch(g, box.log_x, box.log_y);
  int64_t r = b - box.first_block;
  const int64_t c0 = r % box.chunks[0];
  r /= box.chunks[0];
  const int64_t c1 = r % box.chunks[1];
  r /= box.chunks[1];
  const int64_t per3 = int64_t{border_groups(box.log_x, box.log_y)} * kBorderKO;
  const int64_t chunks3 = (g.out_extent[3] + per3 - 1) / per3;
  k.o[0] = box.first[0] + (c0 << box.log_x);
  k.o[1] = box.first[1] + (c1 << box.log_y);
  k.o[2] = r / chunks3;
  k.o[3] = r % chunks3 * per3;
  return k;
}

/// Patch elements of one plane that a thread stages from registers (border_stage): enough for
/// the patches of filters up to 9 wide on the boxes of 256^3 (the rule's range, tiled_border_pays);
/// a larger patch stages the rest through the general loop.
inline constexpr int kBorderSlots = 8;

/// Stage phase (every thread of the block): the patch of block k, patch index i holding the input
/// at the block's footprint position i with the boundary resolved (0 where a zero boundary reads
/// outside), by asynchronous copies (tiled_copy; the caller completes them, tiled_wait(0), before
/// its barrier). Thread tid takes the elements tid + s * kBorderThreads of every plane: their
/// source and destination within a plane are worked out once (kBorderSlots of them, in
/// registers), so that staging a plane costs a few instructions per element, where mapping every
/// element through the boundary rule made staging most of the kernel's time.
NDCONV_HD void border_stage(const Geometry& g, const BorderBlock& k, const float* in, float* patch,
                            int tid) {
  const BorderPatch& p = k.patch;
  const int per_plane = p.extent[0] * p.extent[1];
  // In-plane source offset (boundary resolved; -1: a zero) of patch element e = i1 * e0 + i0.
  auto source = [&](int e) -> int64_t {
    const int i0 = e % p.extent[0], i1 = e / p.extent[0];
    const int64_t m0 = boundary_index_hd(k.o[0] + g.offset[0] + i0, g.in_extent[0], g.boundary);
    const int64_t m1 = boundary_index_hd(k.o[1] + g.offset[1] + i1, g.in_extent[1], g.boundary);
    return m0 < 0 || m1 < 0 ? -1 : m0 * g.in_stride[0] + m1 * g.in_stride[1];
  };
  auto destination = [&](int e) { return e / p.extent[0] * p.stride[1] + e % p.extent[0]; };
  int64_t src[kBorderSlots];
  int dst[kBorderSlots];
  NDCONV_UNROLL
  for (int s = 0; s < kBorderSlots; ++s) {
    const int e = tid + s * kBorderThreads;
    src[s] = e < per_plane ? source(e) : -1;
    dst[s] = e < per_plane ? destination(e) : -1;
  }
  for (int i23 = 0; i23 < p.extent[2] * p.extent[3]; ++i23) {
    const int i2 = i23 % p.extent[2], i3 = i23 / p.extent[2];
    const int64_t m2 = boundary_index_hd(k.o[2] + g.offset[2] + i2, g.in_extent[2], g.boundary);
    const int64_t m3 = boundary_index_hd(k.o[3] + g.offset[3] + i3, g.in_extent[3], g.boundary);
    const bool plane_inside = m2 >= 0 && m3 >= 0;
    const float* plane = in + (plane_inside ? m2 * g.in_stride[2] + m3 * g.in_stride[3] : 0);
    float* const dst_plane = patch + i2 * p.stride[2] + i3 * p.stride[3];
    NDCONV_UNROLL
    for (int s = 0; s < kBorderSlots; ++s) {
      if (dst[s] >= 0)
        tiled_copy(dst_plane + dst[s], plane_inside && src[s] >= 0 ? plane + src[s] : nullptr, in);
    }
    for (int e = tid + kBorderSlots * kBorderThreads; e < per_plane; e += kBorderThreads) {
      const int64_t from = source(e);
      tiled_copy(dst_plane + destination(e), plane_inside && from >= 0 ? plane + from : nullptr,
                 in);
    }
  }
}

/// The first of thread tid's outputs in block k; false when it has none (past the box).
NDCONV_HD bool border_outputs(const Geometry& g, const BorderPlan& plan, const BorderBlock& k,
                              int tid, int64_t (&o)[kAxes]) {
  const BorderBox& box = plan.box[k.box];
  const int tx = tid & ((1 << box.log_x) - 1);
  const int ty = (tid >> box.log_x) & ((1 << box.log_y) - 1);
  const int group = tid >> (box.log_x + box.log_y);
  o[0] = k.o[0] + tx;
  o[1] = k.o[1] + ty;
  o[2] = k.o[2];
  o[3] = k.o[3] + group * kBorderKO;
  return o[0] < box.first[0] + box.extent[0] && o[1] < box.first[1] + box.extent[1] &&
         o[3] < g.out_extent[3];
}

/// The tap rows (j1, j0) of output o whose input lies outside the volume along x or axis 1: the
/// terms the tiled kernel's sum lacks (it multiplied zeros there).
struct BorderTapRows {
  int inside_lo[2], inside_hi[2];  ///< taps [lo, hi) along x and axis 1 read inside the volume

  NDCONV_HD BorderTapRows(const Geometry& g, const int64_t (&o)[kAxes]) {
    for (int a = 0; a < 2; ++a) {
      const int64_t first = o[a] + g.offset[a], k = g.filter_extent[a];
      const int64_t lo = -first, hi = g.in_extent[a] - first;
      inside_lo[a] = static_cast<int>(lo < 0 ? 0 : (lo > k ? k : lo));
      inside_hi[a] = static_cast<int>(hi < 0 ? 0 : (hi > k ? k : hi));
    }
  }
  NDCONV_HD bool operator()(int j1, int j0) const {
    return j0 < inside_lo[0] || j0 >= inside_hi[0] || j1 < inside_lo[1] || j1 >= inside_hi[1];
  }
};

/// Compute phase of one thread: the missing terms of its kBorderKO outputs along axis 3, from the
/// staged patch (the blocked kernel's interior arithmetic on the patch as a volume of its own,
/// over the tap rows BorderTapRows selects).
template <typename Taps>
NDCONV_HD void border_accumulate(const Geometry& g, const BorderBlock& k, const float* patch,
                                 const Taps& taps, const int64_t (&o)[kAxes],
                                 float (&acc)[kBorderKO]) {
  Geometry pg = g;
  NDCONV_UNROLL
  for (int a = 0; a < kAxes; ++a) {
    pg.in_extent[a] = k.patch.extent[a];
    pg.in_stride[a] = k.patch.stride[a];
    pg.offset[a] = 0;
  }
  blocked_accumulate<kBorderKO, true>(pg, patch, taps, o[0] - k.o[0], o[1] - k.o[1], 0,
                                      o[3] - k.o[3], acc, BorderTapRows(g, o));
}

}  // namespace ndconv::kernels
