// Host-side planning of separable filters, free of CUDA so that the CI tests use it too: the
// column kernel's shapes and can_implement (column_thread.h), and the order of the 1D passes over
// their buffers with the kernel that serves each (the column kernel, the tiled kernel for x
// passes: tiled/tiled_plan.h, the x-row kernel, or the blocked kernel).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "cuda/plan.h"
#include "cuda/separable/column_thread.h"
#include "cuda/separable/slab_thread.h"
#include "cuda/separable/stream_plan.h"
#include "cuda/tiled/tiled_plan.h"
#include "core/problem.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// Which kernels serve the passes of a separable filter. kColumns (the default): the x pass fused
/// into the first other filtered axis on the column kernel (cuda/separable/column_thread.h), the
/// other axes on the column kernel, an x-only filter on the tiled kernel. kTiledX, for a KO the
/// column kernel does not have (forced for the blocked kernel): the x pass on the tiled kernel
/// where its tile fits (else the x-row kernel), the other axes on the blocked kernel.
enum class SeparableKernels { kColumns, kTiledX };

/// The column kernel's compiled outputs per thread along the filtered axis, and its default.
inline constexpr int kColumnKos[] = {8};
inline constexpr int kColumnDefaultKo = 8;
/// The longest axis 0 or 3 (and offset) the column kernel maps in 32-bit indices.
inline constexpr int64_t kColumnMaxExtent = int64_t(1) << 29;
/// The column kernel's shapes: 4 warps (32 outputs along the filtered axis per block) for a plain
/// pass; 8 warps for the fused form, whose x filter is repeated for K3 - 1 rows per block tile
/// (80 rows filtered for 64 outputs at K3 = 17).
using ColumnPlainShape = kernels::ColumnShape<8, 4>;
using ColumnFusedShape = kernels::ColumnShape<8, 8>;
/// The staged form's shape: a tall tile as in the fused form (16 halo rows per 64 outputs).
using ColumnStagedShape = kernels::ColumnShape<8, 8>;
/// Shared memory the fused and staged forms may use (opted in; every device from sm_80 allows
/// more). Fused: 17 taps per axis take 63 KiB. Staged: two tiles, 88 KiB at 17 taps; up to
/// 112 KiB two blocks still fit an SM's 228 KiB (sm_90; 40 taps; longer filters read their
/// rows per lane, ColumnForm::kDirect).
inline int column_max_shared_bytes(kernels::ColumnForm form) {
  return (form == kernels::ColumnForm::kStaged ? 112 : 96) * 1024;
}

inline bool column_ko_compiled(int ko) {
  for (int k : kColumnKos) {
    if (k == ko)
      return true;
  }
  return false;
}

/// The column layout of pass geometry g with the 128-bit access flags for these pointers:
/// x contiguous and every row of the view (strides along axes 1-3) starting 16-byte aligned.
inline kernels::ColumnLayout column_layout_for(const kernels::Geometry& g, kernels::ColumnForm form,
                                               const float* in, const float* out) {
  kernels::ColumnLayout l =
      form == kernels::ColumnForm::kFusedX   ? kernels::column_layout<ColumnFusedShape>(g, form)
      : form == kernels::ColumnForm::kStaged ? kernels::column_layout<ColumnStagedShape>(g, form)
                                             : kernels::column_layout<ColumnPlainShape>(g, form);
  auto aligned = [](const float* base, const int64_t* stride) {
    if (stride[0] != 1 || reinterpret_cast<uintptr_t>(base) % 16 != 0)
      return false;
    for (int a = 1; a < kernels::kAxes; ++a) {
      if (stride[a] % 4 != 0)
        return false;
    }
    return true;
  };
  l.vector_in = aligned(in, g.in_stride);
  l.vector_out = aligned(out, g.out_stride);
  return l;
}

/// Whether the column kernel at `ko` can implement pass geometry g in `form` (kFusedX: x filtered
/// as well): x unit-strided is not required, but axes 1 and 2 must be unfiltered, and its shared
/// memory (taps and, staged or fused, the tile and the warps' staging buffers) must fit.
inline bool column_can_implement(const kernels::Geometry& g, int ko, kernels::ColumnForm form) {
  const bool fuse_x = form == kernels::ColumnForm::kFusedX;
  if (!column_ko_compiled(ko) || g.filter_extent[1] != 1 || g.filter_extent[2] != 1)
    return false;
  // Row and column indices are mapped in 32 bits (column_row_index), and block tiles along grid
  // z counted in 32 bits (column_origin).
  if (g.out_extent[2] * g.out_extent[3] > kColumnMaxExtent)
    return false;
  for (int a : {0, 3}) {
    if (g.in_extent[a] > kColumnMaxExtent || g.out_extent[a] > kColumnMaxExtent ||
        g.offset[a] > kColumnMaxExtent || g.offset[a] < -kColumnMaxExtent)
      return false;
  }
  if (!fuse_x && (g.filter_extent[0] != 1 || g.offset[0] != 0))
    return false;
  const kernels::ColumnLayout l = column_layout_for(g, form, nullptr, nullptr);
  return static_cast<int64_t>(l.total_floats) * static_cast<int64_t>(sizeof(float)) <=
         (form != kernels::ColumnForm::kDirect ? column_max_shared_bytes(form)
                                               : kTiledMaxSharedBytes);
}

/// The slab kernel's compiled tap counts (the same along x, y and z; slab_thread.h).
using SlabTapCounts = std::integer_sequence<int, 17>;

template <int... Ks, typename Fn>
bool slab_dispatch_in(std::integer_sequence<int, Ks...>, int k, Fn&& fn) {
  return ((Ks == k ? (fn(std::integral_constant<int, Ks>{}), true) : false) || ...);
}

/// Calls fn(std::integral_constant<int, K>{}) for the compiled tap count K equal to k; false when
/// there is none. The layout, the launcher and the emulation pick their instantiation so.
template <typename Fn>
bool slab_dispatch(int k, Fn&& fn) {
  return slab_dispatch_in(SlabTapCounts{}, k, fn);
}

/// Whether the slab kernel can implement geometry g (canonical [x, y, 1, z]): a compiled tap count
/// K on x, y and z, and every index it maps in 32 bits (columns, rows, offsets within a plane).
inline bool slab_can_implement(const kernels::Geometry& g) {
  const int k = g.filter_extent[0];
  if (!slab_dispatch(k, [](auto) {}) || g.filter_extent[1] != k || g.filter_extent[3] != k ||
      g.filter_extent[2] != 1 || g.in_extent[2] != 1 || g.out_extent[2] != 1)
    return false;
  constexpr int64_t kLimit = int64_t(1) << 30;
  for (int a : {0, 1, 3}) {
    if (g.in_extent[a] > kLimit || g.out_extent[a] > kLimit || g.offset[a] > kLimit ||
        g.offset[a] < -kLimit || g.in_stride[a] < 0 || g.out_stride[a] < 0)
      return false;
  }
  // Offsets within an input plane (rows and columns) in 32 bits; grid y and z in range.
  if (g.in_extent[1] * g.in_stride[1] + g.in_extent[0] * g.in_stride[0] > kLimit)
    return false;
  int64_t tiles[2];
  kernels::plane_tiles<kernels::SlabShape::kTileX, kernels::SlabShape::kTileY>(g, tiles);
  return tiles[1] <= kernels::kMaxGridYZ && g.out_extent[3] <= kernels::kMaxGridYZ;
}

/// The slab kernel's layout for geometry g with 16-byte copies where the input pointer and g's
/// strides allow them (x contiguous, rows and planes 16-byte aligned).
inline kernels::SlabLayout slab_layout_for(const kernels::Geometry& g, const float* in) {
  kernels::SlabLayout l{};
  slab_dispatch(g.filter_extent[0], [&](auto k) { l = kernels::slab_layout<k.value>(g); });
  l.vector_in = g.in_stride[0] == 1 && reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
                g.in_stride[1] % 4 == 0 && g.in_stride[3] % 4 == 0;
  return l;
}

/// Canonical order of a tiled separable pass along `axis`: x on slot 0, the filtered axis on
/// slot 1 (the tile's rows) unless it is x, the other axes in memory order, unit slots last.
inline std::array<int, kernels::kAxes> tiled_pass_order(int dims, int axis) {
  std::array<int, kernels::kAxes> order{-1, -1, -1, -1};
  int slot = 0;
  order[slot++] = 0;
  if (axis != 0)
    order[slot++] = axis;
  for (int a = 1; a < dims; ++a) {
    if (a != axis)
      order[slot++] = a;
  }
  return order;
}

/// One 1D pass of a separable filter.
struct SeparablePass {
  int axis = 0;  ///< original axis filtered
  int ko = 0;    ///< outputs per thread of the blocked kernel; 0 = an x pass
  /// Block rows of the tiled kernel (tiled_pass_rows) when it serves this pass, else 0 (the x-row
  /// kernel for x, the blocked kernel at `ko` for the others). The tiled kernel gives each thread
  /// 8 outputs along x from a shared-memory tile (128-bit shared loads, taps as broadcasts).
  int tiled_rows = 0;
  /// Outputs per thread of the column kernel when it serves this pass, else 0.
  int column_ko = 0;
  /// The column kernel's form. kFusedX: the pass filters x as well (taps along `axis`, then along
  /// x, from geometry.tap_base).
  kernels::ColumnForm column_form = kernels::ColumnForm::kDirect;
  bool fuse_x() const { return column_form == kernels::ColumnForm::kFusedX; }
  /// Taps per axis of the slab kernel when it serves this pass (x, y and z of a 3D filter at once:
  /// slab_thread.h), else 0.
  int slab_taps = 0;
  /// Taps per axis of the streaming kernel when it serves this pass (x, y and z of a 3D filter at
  /// once: stream_thread.h), else 0.
  int stream_taps = 0;
  /// The x-row kernel serves this pass (an x pass that neither the column nor the tiled kernel
  /// takes).
  bool x_row() const {
    return column_ko == 0 && tiled_rows == 0 && ko == 0 && slab_taps == 0 && stream_taps == 0;
  }
  /// The blocked kernel serves this pass, at `ko`.
  bool blocked() const {
    return column_ko == 0 && tiled_rows == 0 && ko > 0 && slab_taps == 0 && stream_taps == 0;
  }
  kernels::Geometry geometry{};
  int source = 0;       ///< 0: the input, 1 or 2: scratch half, 3: the output
  int destination = 0;  ///< as `source`
};

/// Buffer ids of SeparablePass::source/destination.
inline constexpr int kInputBuffer = 0, kScratchA = 1, kScratchB = 2, kOutputBuffer = 3;

struct SeparablePlan {
  std::vector<SeparablePass> passes;  ///< at least one (an identity x pass when none filters)
  std::vector<float> taps;            ///< every pass's taps, at each geometry's tap_base
  int scratch_halves = 0;             ///< scratch buffers of input-voxel-count floats needed
};

/// The one pass of a 3D filter with the same tap count K along x, y and z that reads p.input and
/// writes p.output (the slab and streaming kernels: geometry canonical [x, y, 1, z], taps z, then
/// y, then x); false when the filter is not such a one. The caller checks its kernel's rules on
/// pass.geometry and sets the kernel's tap count.
inline bool plan_one_pass(const detail::SeparableProblem& p, SeparablePass& pass,
                          SeparablePlan& plan) {
  if (p.input.dims != 3 || p.taps[0].empty() || p.taps[0].size() != p.taps[1].size() ||
      p.taps[0].size() != p.taps[2].size())
    return false;
  const int64_t k = static_cast<int64_t>(p.taps[0].size());
  pass = SeparablePass{};
  pass.axis = 2;
  pass.source = kInputBuffer;
  pass.destination = kOutputBuffer;
  pass.geometry = make_geometry(p.input, p.output, Index{k, k, k, 1}, p.offset, p.boundary,
                                canonical_order(3, 2));
  pass.geometry.tap_base = 0;
  pass.geometry.tap_pitch = static_cast<int>(k);
  plan.taps.clear();
  for (int a : {2, 1, 0})
    plan.taps.insert(plan.taps.end(), p.taps[a].begin(), p.taps[a].end());
  plan.scratch_halves = 0;
  return true;
}

/// The one slab pass (slab_thread.h) of a 3D filter with the same compiled tap count along x, y and
/// z; false (plan unchanged) when the slab kernel cannot implement it.
inline bool plan_slab(const detail::SeparableProblem& p, SeparablePlan& plan) {
  SeparablePass pass;
  SeparablePlan one;
  if (!plan_one_pass(p, pass, one) || !slab_can_implement(pass.geometry))
    return false;
  pass.slab_taps = pass.geometry.tap_pitch;
  one.passes = {pass};
  plan = std::move(one);
  return true;
}

/// The one streaming pass (stream_thread.h) of a 3D filter with the same compiled tap count along
/// x, y and z; false (plan unchanged) when the streaming kernel cannot implement it (stream_unfit:
/// the copy engine must be able to read p.input).
inline bool plan_stream(const detail::SeparableProblem& p, SeparablePlan& plan) {
  SeparablePass pass;
  SeparablePlan one;
  if (!plan_one_pass(p, pass, one) ||
      !stream_unfit(pass.geometry, reinterpret_cast<uintptr_t>(p.input.data)).empty())
    return false;
  pass.stream_taps = pass.geometry.tap_pitch;
  one.passes = {pass};
  plan = std::move(one);
  return true;
}

/// The share of the column kernel's x tiles that the output's x extent uses (1: a multiple of
/// their width).
inline double column_x_use(const detail::SeparableProblem& p) {
  const int64_t x = p.output.extent[0], tile = ColumnFusedShape::kTileX;
  return x <= 0 ? 1.0 : static_cast<double>(x) / static_cast<double>((x + tile - 1) / tile * tile);
}

/// Orders the passes (x first, then the other axes in memory order; with kColumns x is fused into
/// the first other filtered axis), picks each pass's kernel (`kernels`; the blocked kernel's KO
/// from choose_ko(axis, output extent, taps); the column kernel's from `column_ko`, 0 for its
/// default) and ping-pongs them through scratch. With kColumns and `slab`, a 3D filter that the
/// slab kernel can implement is one slab pass instead (plan_slab); with `stream`, one streaming
/// pass where the streaming kernel can implement it (plan_stream, before the slab kernel; the
/// caller asks only on a device with the copy engine). Intermediate volumes are contiguous; the
/// first pass reads p.input and the last writes p.output with their own strides. A column KO that
/// is not compiled (a KO forced for the blocked kernel) falls back to kTiledX.
inline SeparablePlan plan_separable(const detail::SeparableProblem& p,
                                    const std::function<int(int, int64_t, int64_t)>& choose_ko,
                                    SeparableKernels kernels = SeparableKernels::kTiledX,
                                    int column_ko = 0, bool slab = false, bool stream = false) {
  SeparablePlan plan;
  if (kernels == SeparableKernels::kColumns && stream && plan_stream(p, plan))
    return plan;
  if (kernels == SeparableKernels::kColumns && slab && plan_slab(p, plan))
    return plan;
  const int dims = p.input.dims;
  std::vector<int> axes;
  for (int a = 0; a < dims; ++a) {
    if (!p.taps[a].empty())
      axes.push_back(a);
  }
  // Nothing to filter: one identity pass along x (a single tap of 1), so that the output is still
  // written by the same code path, with its own strides.
  std::array<std::vector<float>, kMaxDims> taps = p.taps;
  if (axes.empty()) {
    axes.push_back(0);
    taps[0] = {1.0f};
  }
  if (kernels == SeparableKernels::kColumns) {
    if (column_ko == 0)
      column_ko = kColumnDefaultKo;
    if (!column_ko_compiled(column_ko))
      kernels = SeparableKernels::kTiledX;
  }
  // The passes as (axis, x fused in); the fused pass is decided below once its geometry is known.
  std::vector<std::pair<int, bool>> order;
  const bool fuse = kernels == SeparableKernels::kColumns && axes.size() >= 2 && axes[0] == 0;
  for (size_t i = fuse ? 1 : 0; i < axes.size(); ++i)
    order.push_back({axes[i], fuse && i == 1});

  Index extent = p.input.extent;  // extents of the volume the current pass reads
  // Builds pass i of `count` along order[i] into `pass` (buffers, geometry, kernel); returns false
  // when a fused pass cannot run on the column kernel (the caller then unfuses).
  auto build = [&](size_t i, size_t count, SeparablePass& pass) {
    const auto [axis, fuse_x] = order[i];
    pass = SeparablePass{};
    pass.axis = axis;
    pass.column_form = fuse_x ? kernels::ColumnForm::kFusedX : kernels::ColumnForm::kStaged;
    pass.source = i == 0 ? kInputBuffer : (i % 2 == 1 ? kScratchA : kScratchB);
    pass.destination = i == count - 1 ? kOutputBuffer : (i % 2 == 0 ? kScratchA : kScratchB);
    // The pass's input and output views: given strides at the ends, contiguous in between.
    ConstVolumeView src = i == 0 ? p.input : make_view<const float>(nullptr, dims, extent);
    Index out_extent = extent;
    out_extent[axis] = p.output.extent[axis];
    if (fuse_x)
      out_extent[0] = p.output.extent[0];
    VolumeView dst = i == count - 1 ? p.output : make_view<float>(nullptr, dims, out_extent);
    Index filter_extent{1, 1, 1, 1};
    filter_extent[axis] = static_cast<int64_t>(taps[axis].size());
    Index offset{0, 0, 0, 0};
    offset[axis] = p.offset[axis];
    if (fuse_x) {
      filter_extent[0] = static_cast<int64_t>(taps[0].size());
      offset[0] = p.offset[0];
    }
    const int k = static_cast<int>(filter_extent[axis]);
    if (kernels == SeparableKernels::kColumns && axis != 0) {
      pass.geometry =
          make_geometry(src, dst, filter_extent, offset, p.boundary, canonical_order(dims, axis));
      // A staged tile too tall for shared memory (very long filters): rows per lane instead.
      if (pass.column_form == kernels::ColumnForm::kStaged &&
          !column_can_implement(pass.geometry, column_ko, pass.column_form))
        pass.column_form = kernels::ColumnForm::kDirect;
      if (column_can_implement(pass.geometry, column_ko, pass.column_form))
        pass.column_ko = column_ko;
      else if (fuse_x)
        return false;
    }
    if (pass.column_ko == 0) {
      pass.ko = axis == 0 ? 0 : choose_ko(axis, out_extent[axis], k);
      if (axis == 0) {
        // Tap rows run along canonical axis 3, which a tiled pass does not filter: one tap per
        // row.
        pass.geometry = make_geometry(src, dst, filter_extent, offset, p.boundary,
                                      tiled_pass_order(dims, axis));
        pass.geometry.tap_pitch = 1;
        pass.tiled_rows = tiled_pass_rows(pass.geometry);
      }
      if (pass.tiled_rows == 0) {
        pass.geometry = make_geometry(src, dst, filter_extent, offset, p.boundary,
                                      canonical_order(dims, axis == 0 ? -1 : axis));
        pass.geometry.tap_pitch = k;  // the x-row kernel ignores it
      }
    }
    pass.geometry.tap_base = static_cast<int>(plan.taps.size());
    plan.taps.insert(plan.taps.end(), taps[axis].begin(), taps[axis].end());
    if (fuse_x)
      plan.taps.insert(plan.taps.end(), taps[0].begin(), taps[0].end());
    extent = out_extent;
    return true;
  };
  SeparablePass first;
  if (!build(0, order.size(), first)) {
    // The x filter is too long for the fused pass's staging buffers: x on its own pass.
    order.insert(order.begin(), {0, false});
    order[1].second = false;
    plan.taps.clear();
    extent = p.input.extent;
    build(0, order.size(), first);
  }
  plan.passes.push_back(first);
  for (size_t i = 1; i < order.size(); ++i) {
    SeparablePass pass;
    build(i, order.size(), pass);
    plan.passes.push_back(pass);
  }
  const size_t count = plan.passes.size();
  plan.scratch_halves = count >= 3 ? 2 : (count == 2 ? 1 : 0);
  return plan;
}

}  // namespace ndconv::cuda_backend
