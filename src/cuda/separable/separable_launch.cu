// The separable filters' launcher (the low-level API's launch_separable_device, cuda/launch.h): the
// column kernel's dispatch table, and the passes of a plan (separable_plan.h) each on its kernel.
// This translation unit compiles the instantiations of the separable passes' own kernels (the
// column and x-row kernels: separable_kernels.cuh) and holds its copy of the constant taps (read
// by the x-row kernel); the x passes on the tiled kernel and the passes on the blocked kernel go
// through those families' launchers (tiled/tiled_launch.h, blocked/blocked_launch.h).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/blocked/blocked_launch.h"
#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/launch.h"
#include "cuda/launch_common.h"
#include "cuda/separable/column_tensor_map.h"
#include "cuda/separable/separable_kernels.cuh"
#include "cuda/separable/separable_plan.h"
#include "cuda/separable/stream_launch.h"
#include "cuda/tiled/tiled_launch.h"
#include "cuda/uploaded_taps.h"
#include "kernels/schedule.h"
#include "kernels/tap_memory.cuh"

namespace ndconv::cuda_backend {
namespace {

using kernels::Geometry;

// The column kernel (column_thread.h), the default for separable passes along an axis other
// than x: one instantiation per form (direct, staged, x fused in), shapes in separable_plan.h.
using ColumnLaunch = void (*)(dim3, dim3, int, cudaStream_t, const Geometry&,
                              const kernels::ColumnLayout&, const kernels::TensorMap&, const float*,
                              float*, const float*);
using ColumnShapeFn = kernels::LaunchShape (*)(const Geometry&, const kernels::ColumnLayout&,
                                               int64_t);
using kernels::ColumnForm;

template <typename S, ColumnForm F, bool kBulk>
void launch_column(dim3 grid, dim3 block, int shared_bytes, cudaStream_t stream, const Geometry& g,
                   const kernels::ColumnLayout& l, const kernels::TensorMap& map, const float* in,
                   float* out, const float* taps) {
  kernels::column_kernel<S, F, kBulk>
      <<<grid, block, shared_bytes, stream>>>(g, l, map, in, out, taps);
}

struct ColumnEntry {
  ColumnForm form;
  bool bulk;  ///< fused: raw rows by bulk copy (ColumnLayout::bulk_rows)
  int ko;
  int threads;
  const void* kernel;
  ColumnLaunch launch;
  ColumnShapeFn shape;
};

template <typename S, ColumnForm F, bool kBulk = false>
constexpr ColumnEntry column_entry() {
  return {F,
          kBulk,
          S::KO,
          S::kThreads,
          reinterpret_cast<const void*>(&kernels::column_kernel<S, F, kBulk>),
          &launch_column<S, F, kBulk>,
          &kernels::column_launch_shape<S>};
}

// The forms: staged (rows staged in shared memory, the next tile's loaded meanwhile) for plain
// passes, direct (rows read per lane) where a staged tile does not fit, fused (x filtered into the
// first other pass) with its raw rows by bulk copy where the copy engine can read them, which
// issues fewer instructions than staging them lane by lane.
const ColumnEntry kColumnTable[] = {column_entry<ColumnPlainShape, ColumnForm::kDirect>(),
                                    column_entry<ColumnStagedShape, ColumnForm::kStaged>(),
                                    column_entry<ColumnFusedShape, ColumnForm::kFusedX>(),
                                    column_entry<ColumnFusedShape, ColumnForm::kFusedX, true>()};

const ColumnEntry& find_column(ColumnForm form, bool bulk) {
  for (const ColumnEntry& e : kColumnTable) {
    if (e.form == form && e.bulk == bulk)
      return e;
  }
  throw InvalidArgument("no column kernel for this form");  // cannot happen: see the table
}

ConstantTapUploads g_constant_uploads;  // this translation unit's kernels::c_taps, per device

// The slab pass (slab_thread.h): its taps as kernel parameters, chunks along z as the device's
// resident blocks and Tuning::slab_min_chunk give them. Returns the plan's words for it.
std::string launch_slab(int device, const SeparablePass& pass, const std::vector<float>& taps,
                        const float* in, float* out, cudaStream_t stream, const Tuning& tuning,
                        LaunchPlan& result) {
  const Geometry& g = pass.geometry;
  kernels::SlabLayout l = slab_layout_for(g, in);
  kernels::SlabTaps t{};
  const int k = pass.slab_taps;
  for (int j = 0; j < k; ++j) {
    t.z[j] = taps[g.tap_base + j];
    t.y[j] = taps[g.tap_base + k + j];
    t.x[j] = taps[g.tap_base + 2 * k + j];
  }
  std::string what;
  slab_dispatch(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    const void* kernel = reinterpret_cast<const void*>(&kernels::slab_kernel<K>);
    const int shared_bytes = l.total_floats * static_cast<int>(sizeof(float));
    if (shared_bytes > opt_in_dynamic_shared_memory(device, kernel)) {
      throw InvalidArgument("the slab kernel needs " + std::to_string(shared_bytes) +
                            " bytes of shared memory per block, more than this device allows");
    }
    const KernelVariant v =
        query_variant(device, kernel, 0, kernels::SlabShape::kThreads, shared_bytes);
    const kernels::LaunchShape s = kernels::slab_launch_shape(
        g, l, resident_blocks(device, v.blocks_per_sm), tuning.slab_min_chunk);
    kernels::slab_kernel<K>
        <<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream>>>(g, l, t, in, out);
    NDCONV_CUDA_CHECK_LAUNCH("slab_kernel");
    if (result.launches == 0) {
      set_plan_shape(result, s);
      set_plan_kernel(result, device, kernel, 0, s, "slab", 4);
    }
    ++result.launches;
    what = "slab kernel, " + std::to_string(K) + " taps per axis, " +
           std::to_string(s.grid[0] * s.grid[1]) + " tiles x " + std::to_string(s.grid[2]) +
           " chunks of " + std::to_string(l.chunk) + " planes";
  });
  return what;
}

}  // namespace

std::string row_tensor_map(int device, const kernels::Geometry& g, const kernels::ColumnLayout& l,
                           const float* in, kernels::TensorMap& map) {
  const std::string unfit =
      column_bulk_unfit<ColumnFusedShape>(g, l, reinterpret_cast<uintptr_t>(in));
  if (!unfit.empty())
    return unfit;
  const uint32_t box[kernels::kAxes] = {static_cast<uint32_t>((l.columns + 3) / 4 * 4), 1, 1, 1};
  return encode_box_map(device, g, in, box, map);
}

std::size_t separable_scratch_floats(const detail::SeparableProblem& p) {
  // The most passes any kernel choice plans (x not fused), so that the scratch serves the column
  // plan and every forced KO.
  const SeparablePlan plan = plan_separable(
      p, [](int, int64_t, int64_t) { return 1; }, SeparableKernels::kTiledX);
  return static_cast<std::size_t>(plan.scratch_halves * p.input.voxel_count());
}

namespace {

// The plan launch_separable_device runs: the column kernel's passes, or the slab kernel's one where
// the tuning allows it, no KO is forced (a forced KO asks for the passes' kernels) and the column
// kernel's x tiles would leave lanes idle (Tuning::slab_max_column_x_use). Before both, the
// streaming kernel's one pass where the tuning allows it, no KO is forced and the device has the
// copy engine (`stream_capable`).
SeparablePlan launch_plan(const detail::SeparableProblem& p, int outputs_per_thread,
                          const Tuning& tuning,
                          const std::function<int(int, int64_t, int64_t)>& choose_ko,
                          bool stream_capable) {
  const bool slab = tuning.separable_slab && outputs_per_thread == 0 &&
                    column_x_use(p) <= tuning.slab_max_column_x_use;
  const bool stream = tuning.separable_stream && outputs_per_thread == 0 && stream_capable;
  return plan_separable(p, choose_ko, SeparableKernels::kColumns, outputs_per_thread, slab, stream);
}

// Whether the current device (where the caller runs the launch) has the streaming kernel's copy
// engine; false where there is none to ask, which plans the most scratch.
bool current_device_streams() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: no device is an answer here
    return false;
  }
  return stream_device(device);
}

}  // namespace

std::size_t separable_launch_scratch_floats(const detail::SeparableProblem& p,
                                            int outputs_per_thread, const Tuning& tuning) {
  // The passes and their buffers do not depend on the blocked kernel's KO; the streaming pass
  // depends on the device, the current one (the callers set the launch's device first).
  const SeparablePlan plan = launch_plan(
      p, outputs_per_thread, tuning, [](int, int64_t, int64_t) { return 1; },
      current_device_streams());
  return static_cast<std::size_t>(plan.scratch_halves * p.input.voxel_count());
}

detail::SeparableProblem same_region_separable(const ConstVolumeView& in, const VolumeView& out,
                                               const SeparableFilter& filter, Boundary boundary) {
  if (filter.dims != in.dims || out.dims != in.dims || out.extent != in.extent)
    throw InvalidArgument(
        "same_region_separable needs a filter and an output of the input's dimension and extents");
  detail::SeparableProblem p;
  p.input = in;
  p.output = out;
  p.boundary = boundary;
  for (int a = 0; a < in.dims; ++a) {
    const int64_t k = static_cast<int64_t>(filter.taps[a].size());
    if (k > kMaxSeparableExtent)
      throw InvalidArgument("the 1D filter along axis " + std::to_string(a) + " has " +
                            std::to_string(k) + " taps; the limit is " +
                            std::to_string(kMaxSeparableExtent));
    p.taps[a] = filter.taps[a];
    p.offset[a] = k > 0 ? -(k / 2) : 0;  // filter_separable's correlation anchor
  }
  return p;
}

LaunchPlan launch_same_separable_device(const ConstVolumeView& in, const VolumeView& out,
                                        const SeparableFilter& filter, Boundary boundary,
                                        float* scratch, int device, void* stream,
                                        int outputs_per_thread) {
  return launch_separable_device(same_region_separable(in, out, filter, boundary), scratch, device,
                                 stream, outputs_per_thread);
}

LaunchPlan launch_separable_device(const detail::SeparableProblem& p, float* scratch, int device,
                                   void* stream_handle, int outputs_per_thread,
                                   const Tuning& tuning) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  int last_ko = 0;
  const SeparablePlan plan = launch_plan(
      p, outputs_per_thread, tuning,
      [&](int, int64_t n, int64_t k) {
        return choose_blocked_ko(device, outputs_per_thread, n, k, 1).outputs_per_thread;
      },
      stream_device(device));
  std::string reasons;
  std::string kernels_per_pass;  // e.g. "x tiled, y blocked, z blocked" (the plan's kernel name)
  static const char* names[] = {"x", "y", "z", "t"};
  for (const SeparablePass& pass : plan.passes) {
    std::string what;
    const char* family = "blocked";
    if (pass.stream_taps > 0) {
      what = "streaming kernel (x, y, z in one pass)";
      family = "stream";
    } else if (pass.slab_taps > 0) {
      what = "slab kernel (x, y, z in one pass)";
      family = "slab";
    } else if (pass.column_ko > 0) {
      const bool staged = pass.column_form == kernels::ColumnForm::kStaged;
      what =
          std::string(pass.fuse_x() ? "column kernel with x fused"
                                    : (staged ? "column kernel, staged rows" : "column kernel")) +
          ", KO " + std::to_string(pass.column_ko);
      family = pass.fuse_x() ? "column+x" : (staged ? "column-staged" : "column");
      last_ko = pass.column_ko;
    } else if (pass.tiled_rows > 0) {
      what = "tiled kernel, " + std::to_string(pass.tiled_rows) + " block row(s)";
      family = "tiled";
    } else if (pass.ko == 0) {
      what = "shared-memory row tile";
      family = "row";
    } else {
      what = "blocked KO " + std::to_string(pass.ko);
      last_ko = pass.ko;
    }
    reasons += (reasons.empty() ? "" : "; ") + std::string(names[pass.axis]) + ": " + what;
    kernels_per_pass +=
        (kernels_per_pass.empty() ? "" : ", ") +
        std::string(pass.slab_taps > 0 || pass.stream_taps > 0 ? "x+y+"
                                                               : (pass.fuse_x() ? "x+" : "")) +
        std::string(names[pass.axis]) + " " + family;
  }
  if (plan.scratch_halves > 0 && scratch == nullptr)
    throw InvalidArgument("launch_separable_device: scratch is required for several passes");
  if (!taps_fit_constant(static_cast<int64_t>(plan.taps.size())))
    throw InvalidArgument("separable taps exceed the constant tap buffer");  // cannot happen
  // Each pass's kernel reads the taps where its family keeps them: the blocked kernel and the x-row
  // kernel from their translation units' constant memory, the tiled and column kernels from the
  // global tap buffer (staged once per block in shared memory).
  auto any_pass = [&](auto kernel_reads) {
    return std::any_of(plan.passes.begin(), plan.passes.end(), kernel_reads);
  };
  // The leases end with this call, after every pass is enqueued (uploaded_taps.h).
  TapLease blocked_taps, row_taps, global_lease;
  if (any_pass([](const SeparablePass& pass) { return pass.blocked(); }))
    blocked_taps = blocked_upload_constant_taps(device, plan.taps, stream);
  if (any_pass([](const SeparablePass& pass) { return pass.x_row(); }))
    row_taps = g_constant_uploads.upload(device, &kernels::c_taps, plan.taps, stream);
  const bool any_global =
      any_pass([](const SeparablePass& pass) { return pass.tiled_rows > 0 || pass.column_ko > 0; });
  if (any_global)
    global_lease = upload_global_taps(device, plan.taps, stream);
  const float* global_taps = global_lease.get();

  const int64_t half = p.input.voxel_count();
  auto buffer = [&](int id) -> float* {
    if (id == kScratchA)
      return scratch;
    if (id == kScratchB)
      return scratch + half;
    return p.output.data;
  };
  LaunchPlan result;
  result.outputs_per_thread = last_ko;
  result.taps_in_constant = true;
  result.reason = reasons;
  result.kernel = "separable passes " + kernels_per_pass;
  for (const SeparablePass& pass : plan.passes) {
    const float* src = pass.source == kInputBuffer ? p.input.data : buffer(pass.source);
    float* dst = buffer(pass.destination);
    if (pass.stream_taps > 0) {
      result.reason +=
          "; " + launch_stream(device, pass, plan.taps, src, dst, stream, tuning, result);
    } else if (pass.slab_taps > 0) {
      result.reason +=
          "; " + launch_slab(device, pass, plan.taps, src, dst, stream, tuning, result);
    } else if (pass.column_ko > 0) {
      kernels::ColumnLayout l = column_layout_for(pass.geometry, pass.column_form, src, dst);
      // The fused form's raw rows by bulk copy where the copy engine can read them.
      kernels::TensorMap map{};
      l.bulk_rows = pass.column_form == ColumnForm::kFusedX &&
                    row_tensor_map(device, pass.geometry, l, src, map).empty();
      const ColumnEntry& ce = find_column(pass.column_form, l.bulk_rows);
      const int shared_bytes = ce.shape(pass.geometry, l, 0).shared_bytes;
      if (shared_bytes > opt_in_dynamic_shared_memory(device, ce.kernel)) {
        throw InvalidArgument("the column kernel needs " + std::to_string(shared_bytes) +
                              " bytes of shared memory per block, more than this device allows");
      }
      // Staged and fused: a grid of about the blocks the device holds at once, each walking
      // several tiles and loading the next while it filters one. Direct: one block per tile
      // (capped): it has nothing to load ahead, and a walking grid only lengthens its tail.
      const KernelVariant v = query_variant(device, ce.kernel, ce.ko, ce.threads, shared_bytes);
      const bool full_grid = pass.column_form == ColumnForm::kDirect;
      const kernels::LaunchShape s =
          ce.shape(pass.geometry, l, full_grid ? 0 : resident_blocks(device, v.blocks_per_sm));
      ce.launch(to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream, pass.geometry, l, map,
                src, dst, global_taps);
      NDCONV_CUDA_CHECK_LAUNCH("column_kernel");
      if (l.bulk_rows)
        result.reason += "; x+" + std::string(names[pass.axis]) + " raw rows by bulk copy";
      if (result.launches == 0) {
        set_plan_shape(result, s);
        set_plan_kernel(result, device, ce.kernel, ce.ko, s, "column", l.vector_in ? 4 : 1);
      }
      ++result.launches;
    } else if (pass.tiled_rows > 0) {
      launch_tiled_pass(device, pass.tiled_rows, pass.geometry, src, dst, global_taps, stream,
                        tuning, result);
    } else if (pass.ko == 0) {
      const kernels::LaunchShape s = kernels::row_shape(pass.geometry);
      kernels::row_kernel<<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream>>>(
          pass.geometry, src, dst);
      NDCONV_CUDA_CHECK_LAUNCH("row_kernel");
      if (result.launches == 0) {
        set_plan_shape(result, s);
        set_plan_kernel(result, device, reinterpret_cast<const void*>(&kernels::row_kernel), 0, s,
                        "row", 1);
      }
      ++result.launches;
    } else {
      launch_blocked_pass(device, pass.ko, true, pass.geometry, src, dst, nullptr, stream, result);
    }
  }
  return result;
}

}  // namespace ndconv::cuda_backend
