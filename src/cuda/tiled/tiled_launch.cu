// The tiled kernel's dispatch tables and launcher (tiled_launch.h); this translation unit compiles
// the family's instantiations (tiled_kernel.cuh). The tiled kernel reads its taps from the global
// tap buffer (staged once per block in shared memory); the border kernel that corrects its face
// shell keeps its constant taps in its own translation unit (border/border_launch.cu).
#include "cuda/tiled/tiled_launch.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/border/border_launch.h"
#include "cuda/border/border_plan.h"
#include "cuda/check.h"
#include "cuda/dependent_launch.h"
#include "cuda/device_facts.h"
#include "cuda/ko_rule.h"
#include "cuda/launch_common.h"
#include "cuda/stream_scratch.h"
#include "cuda/tiled/tiled_kernel.cuh"
#include "cuda/tiled/tiled_plan.h"
#include "cuda/tiled/tiled_tensor_maps.h"
#include "kernels/schedule.h"

namespace ndconv::cuda_backend {
namespace {

using kernels::Geometry;

// The tiled kernel (tiled_thread.h), the default for dense filters whose tap slice and
// input plane fit in shared memory: (KO, block rows) -> instantiation, all with TX = 8 outputs
// along x per thread. 32 block rows: 4 x 32 threads (a warp is 4 threads along x by 8 rows, so a
// quarter warp's 128-bit shared loads fall on distinct banks); 1 block row: 128 threads along x
// (2D images).
using TiledLaunch = void (*)(int, bool, dim3, dim3, int, cudaStream_t, const Geometry&,
                             const kernels::TiledLayout&, const float*, float*, const float*,
                             const kernels::TiledMaps&, int, int);
using TiledShapeFn = kernels::LaunchShape (*)(const Geometry&);
using TiledLayoutFn = kernels::TiledLayout (*)(const Geometry&);
using TiledTapsFn = void (*)(const Geometry&, const kernels::TiledLayout&, const float*, float*);
using TiledFitsFn = bool (*)(const Geometry&);

// `after_kernel`: `in` is the output of the kernel launched just before on `stream`
// (dependent_launch.h).
template <typename S, typename R = kernels::TiledRowsAny,
          kernels::TiledHaloCode H = kernels::TiledHaloCode::kAny>
void launch_tiled(int device, bool after_kernel, dim3 grid, dim3 block, int shared_bytes,
                  cudaStream_t stream, const Geometry& g, const kernels::TiledLayout& l,
                  const float* in, float* out, const float* taps, const kernels::TiledMaps& maps,
                  int bulk, int taps_laid_out) {
  launch_kernel(device, after_kernel, &kernels::tiled_kernel<S, R, H>, grid, block, shared_bytes,
                stream, g, l, in, out, taps, maps, bulk, taps_laid_out);
}

struct TiledEntry {
  int ko;
  int block_rows;
  const void* kernel;
  TiledLaunch launch;
  TiledShapeFn shape;
  TiledLayoutFn layout;
  TiledTapsFn lay_out_taps;  ///< the taps in the kernel's shared layout (host)
  TiledFitsFn index_fits;    ///< tiles and outputs count in 32 bits (kernels::tiled_index_fits)
  int threads;
  int outputs_along_x;  ///< TX
  bool leads;           ///< skips lead taps (TiledShape::kLeads)
};

#define NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS) kernels::TiledShape<TX, KO, BX, BY, LEADS>
#define NDCONV_TILED_ENTRY(TX, KO, BX, BY, LEADS)                                                \
  TiledEntry {                                                                                   \
    KO, BY,                                                                                      \
        reinterpret_cast<const void*>(                                                           \
            &kernels::tiled_kernel<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>),                  \
        &launch_tiled<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>,                                \
        &kernels::tiled_launch_shape<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>,                 \
        &kernels::tiled_layout<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>,                       \
        &kernels::tiled_lay_out_taps<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>,                 \
        &kernels::tiled_index_fits<NDCONV_TILED_SHAPE(TX, KO, BX, BY, LEADS)>, BX *BY, TX, LEADS \
  }

// (TX, KO, BX, BY, lead taps): the shapes the automatic plan takes.
const TiledEntry kTiledTable[] = {
    // 3D/4D: KO 4 along the last axis, 4 x 32 threads, the one shape that skips lead taps.
    NDCONV_TILED_ENTRY(8, 4, 4, 32, true),
    // 2D filters narrower than Tuning::tiled_wide_x_min_taps, a unit last axis, a forced KO 1,
    // and separable x passes over at least 16 rows.
    NDCONV_TILED_ENTRY(8, 1, 4, 32, false),
    // Axis 1 shorter than 16 outputs: one row of 128 threads along x.
    NDCONV_TILED_ENTRY(8, 4, 128, 1, false), NDCONV_TILED_ENTRY(8, 1, 128, 1, false),
    // 2D filters at least Tuning::tiled_wide_x_min_taps wide: 16 outputs along x per thread.
    NDCONV_TILED_ENTRY(16, 1, 2, 64, false)};
#undef NDCONV_TILED_ENTRY
#undef NDCONV_TILED_SHAPE

// The lead-tap shape's kernels whose row code is fixed for one filter width
// (kernels::TiledFixedRowsList, with the measurements): a launch of that shape takes the one whose
// row code fits its geometry (kernels::tiled_rows_fit) and whose halo code its layout
// (kernels::tiled_halo_code_fits: none, or copied within the plane), else the entry's kernel.
// Each width comes twice: kNone (zero boundary, padded input) and kWithin (replicate, mirror,
// periodic from the wrap boxes): a kernel per halo code drops the halo branches from the plane
// loop that the other codes would need.
struct TiledFixedRows {
  bool (*fits)(const Geometry&, const kernels::TiledLayout&);
  bool (*halo_fits)(const kernels::TiledLayout&, int);
  const void* kernel;
  TiledLaunch launch;
};

template <typename S, typename R, kernels::TiledHaloCode H>
TiledFixedRows tiled_fixed_rows_entry() {
  return {&kernels::tiled_rows_fit<S, R>, &kernels::tiled_halo_code_fits<H>,
          reinterpret_cast<const void*>(&kernels::tiled_kernel<S, R, H>), &launch_tiled<S, R, H>};
}

template <typename... R>
std::array<TiledFixedRows, 2 * sizeof...(R)> tiled_fixed_rows_table(std::tuple<R...>*) {
  using S = kernels::TiledLeadShape;
  using kernels::TiledHaloCode;
  return {tiled_fixed_rows_entry<S, R, TiledHaloCode::kNone>()...,
          tiled_fixed_rows_entry<S, R, TiledHaloCode::kWithin>()...};
}
const auto kTiledFixedTable =
    tiled_fixed_rows_table(static_cast<kernels::TiledFixedRowsList*>(nullptr));

const TiledEntry* find_tiled(int ko, int block_rows) {
  for (const TiledEntry& e : kTiledTable) {
    if (e.ko == ko && e.block_rows == block_rows)
      return &e;
  }
  return nullptr;
}

// Whether a tiled launch can load its planes by bulk tensor copy (`map` then holds the tensor map);
// else it copies them thread by thread.
bool tiled_bulk_loads(int device, const Geometry& g, const kernels::TiledLayout& l, const float* in,
                      kernels::TensorMap& map) {
  return plane_tensor_map(device, g, l, in, map).empty();
}

std::string tiled_entry_name(const TiledEntry& e) {
  return "TX=" + std::to_string(e.outputs_along_x) + " KO=" + std::to_string(e.ko) + " " +
         std::to_string(e.threads / e.block_rows) + "x" + std::to_string(e.block_rows);
}

// Outputs along x of one block of entry e.
int tiled_tile_x(const TiledEntry& e) {
  return e.outputs_along_x * (e.threads / e.block_rows);
}

// The layout of entry e's launch on g (tiled_lead_geometry's with `lead` lead taps) with
// `halo_slots` halo elements per thread (tiled_halo_mode's way; with the opposite faces' boxes
// where `wrap_boxes`: the launch has their tensor maps).
kernels::TiledLayout tiled_entry_layout(const TiledEntry& e, const Geometry& g, int lead,
                                        int halo_slots, bool wrap_boxes = false) {
  kernels::TiledLayout l = e.layout(g);
  l.lead = lead;
  const kernels::TiledHaloMode mode =
      halo_slots > 0 ? tiled_halo_mode(g, l, tiled_tile_x(e), e.block_rows, e.ko, wrap_boxes)
                     : kernels::TiledHaloMode::kDirect;
  tiled_add_halo_in_mode(l, g, tiled_tile_x(e), e.block_rows, halo_slots, e.threads, mode);
  return l;
}

// Why tiled entry `e` cannot implement geometry `tg` with `halo_slots` halo elements per thread
// (and the opposite faces' boxes where `wrap_boxes`) on `device` (empty when it can); `shape` and
// `resources` receive the launch's.
std::string tiled_unfit(int device, const TiledEntry& e, const Geometry& tg, int halo_slots,
                        bool wrap_boxes, kernels::LaunchShape& shape, KernelVariant& resources) {
  if (!e.index_fits(tg))
    return "tiled kernel: more than 2^30 tiles or outputs along an axis";
  shape = e.shape(tg);
  shape.shared_bytes = tiled_entry_layout(e, tg, 0, halo_slots, wrap_boxes).total_floats *
                       static_cast<int>(sizeof(float));
  // By default a launch may use 48 KiB, which left 17^3 and 9^4 filters to the blocked kernel at
  // a quarter of the speed.
  const int limit = opt_in_dynamic_shared_memory(device, e.kernel);
  if (shape.shared_bytes > limit) {
    return "tiled kernel: the taps and two input planes need " +
           std::to_string(shape.shared_bytes) +
           " bytes of shared memory, over this device's limit of " + std::to_string(limit);
  }
  resources = query_variant(device, e.kernel, e.ko, e.threads, shape.shared_bytes);
  if (resources.local_bytes > 0) {
    return "tiled kernel " + tiled_entry_name(e) + " spills " +
           std::to_string(resources.local_bytes) + " bytes per thread on this device";
  }
  if (resources.blocks_per_sm < 1)
    return "tiled kernel " + tiled_entry_name(e) + " cannot be resident on this device";
  return "";
}

// How a dense launch of entry e on geometry tg loads its planes, decided (and the tensor map
// encoded) once.
struct TiledLoads {
  int lead = 0;  ///< lead taps (kernels::tiled_lead_geometry) the launch skips
  bool bulk = false;
  kernels::TiledMaps maps{};  ///< when bulk: the plane map, and with wrap_boxes the side and band
  int halo_slots = 0;         ///< face tiles patch their halo (cuda/tiled/tiled_halo.h), when bulk
  bool wrap_boxes = false;    ///< ... from the opposite faces' boxes (periodic), when halo_slots
  bool pad = false;           ///< pad the input first (tiled_input_padding_pays), when bulk
  bool border = false;        ///< instead correct the face shell (tiled_border_pays), when bulk
};

// Where the entry can skip lead taps and the bulk copy can then load the planes (their boxes start
// on 16-byte boundaries only with them): kernels::tiled_lead(tg) lead taps and bulk copies. Else no
// lead taps, and bulk copies where the copy engine can load tg's planes. Bulk launches whose tiles
// read outside the volume along x or axis 1 with a boundary other than zero patch their face
// tiles' halo (cuda/tiled/tiled_halo.h) where it fits and either their tiles have one plane or the
// face shell is small (tiled_border_pays): the halo then costs least. Else the border kernel where
// the shell is small, else they pad their input (which costs less than any halo for wider
// filters), else copy their planes thread by thread.
TiledLoads tiled_loads(int device, const TiledEntry& e, const Geometry& tg, const float* in,
                       const Tuning& tuning) {
  TiledLoads loads;
  const int lead = kernels::tiled_lead(tg);
  if (lead > 0 && e.leads) {
    const Geometry lg = kernels::tiled_lead_geometry(tg, lead);
    if (tiled_bulk_loads(device, lg, e.layout(lg), in, loads.maps.plane)) {
      loads.lead = lead;
      loads.bulk = true;
    }
  }
  if (!loads.bulk)
    loads.bulk = tiled_bulk_loads(device, tg, e.layout(tg), in, loads.maps.plane);
  if (!loads.bulk)
    return loads;
  const Geometry lg = kernels::tiled_lead_geometry(tg, loads.lead);
  const int halo = tiled_halo_slots(lg, tiled_entry_layout(e, lg, loads.lead, 0), tiled_tile_x(e),
                                    e.block_rows, e.threads, tuning.tiled_max_halo_slots);
  if (halo == 0)
    return loads;  // zero boundary, or no tile reads outside the volume
  const kernels::BorderPlan plan = kernels::border_plan(tg);
  const bool small_shell = tiled_border_pays(tg, plan, tuning.border_fmas_per_voxel);
  if (halo > 0 && (tiled_one_plane_tiles(lg, e.ko) || small_shell)) {
    loads.halo_slots = halo;
    // Periodic: from the opposite faces' boxes where they serve and their maps encode.
    const kernels::TiledLayout wrapped = tiled_entry_layout(e, lg, loads.lead, halo, true);
    loads.wrap_boxes =
        wrapped.halo_wrap && wrap_tensor_maps(device, lg, wrapped, in, loads.maps).empty();
    return loads;
  }
  loads.border =
      small_shell && taps_fit_constant(int64_t{tg.filter_extent[0]} * tg.filter_extent[1] *
                                       tg.filter_extent[2] * tg.filter_extent[3]);
  loads.pad = !loads.border && tiled_input_padding_pays(tg, tiled_tile_x(e), e.block_rows);
  // Without a halo, border kernel or padding, the face tiles would keep the copy's zeros.
  if (!loads.border && !loads.pad)
    loads = TiledLoads{};
  return loads;
}

// The lead-tap shape's kernel whose row code is the filter width of `lg` (kTiledFixedTable), for
// entry e's launch with layout l, `plane_loads` (kernels::TiledPlaneLoads), `shared_bytes` of
// shared memory and the entry's resources `v`: where one is compiled, its halo code serves the
// launch (none, or copied within the plane: a staged or fetched halo takes the entry's kernel) and
// it holds as many blocks per SM (null: the entry's kernel). It may use
// kTiledFixedRowsLocalBytes of local memory (cuda/launch.h): ptxas spills a few bytes in each at
// the shape's register cap, stored and loaded once per tile where it stores its outputs and takes
// the next, never in a plane's work, so they still outrun the entry's kernel, which spills
// nothing.
const TiledFixedRows* tiled_fixed_rows(int device, const TiledEntry& e, const Geometry& lg,
                                       const kernels::TiledLayout& l, int plane_loads,
                                       int shared_bytes, const KernelVariant& v) {
  if (!e.leads)
    return nullptr;
  for (const TiledFixedRows& f : kTiledFixedTable) {
    if (!f.fits(lg, l) || !f.halo_fits(l, plane_loads))
      continue;
    const bool fits_shared = shared_bytes <= opt_in_dynamic_shared_memory(device, f.kernel);
    const KernelVariant fv = query_variant(device, f.kernel, e.ko, e.threads, shared_bytes);
    const bool fits = fits_shared && fv.local_bytes <= kTiledFixedRowsLocalBytes &&
                      fv.blocks_per_sm >= v.blocks_per_sm;
    return fits ? &f : nullptr;
  }
  return nullptr;
}

// Launches entry e on `lg`: the tiled geometry of p with loads.lead lead taps (tiled_loads), whose
// launch shape is `shape` and resources `v` (tiled_unfit). The grid is the blocks the device holds
// at once: each walks several tiles and loads the next tile's first plane while it finishes one.
LaunchPlan launch_tiled_entry(int device, const detail::CorrelationProblem& p, const Geometry& lg,
                              const TiledLoads& loads, const TiledEntry& e,
                              const kernels::LaunchShape& shape, const KernelVariant& v,
                              std::string reason, cudaStream_t stream) {
  const int lead = loads.lead;
  const bool bulk = loads.bulk;
  kernels::TiledLayout l = tiled_entry_layout(e, lg, lead, loads.halo_slots, loads.wrap_boxes);
  kernels::LaunchShape s = shape;
  // The taps in the kernel's shared layout, so that each block copies them straight.
  const std::vector<float> tiled_taps =
      tiled_lead_tap_rows(tiled_tap_rows(p), lg.filter_extent[0] - lead, lg.tap_pitch, lead);
  std::vector<float> laid_out(static_cast<size_t>(l.tap_floats));
  e.lay_out_taps(lg, l, tiled_taps.data(), laid_out.data());
  const TapLease global_taps = upload_global_taps(device, laid_out, stream);
  // The padded input, where it pays and the scratch pool has the memory (else the planes are
  // copied thread by thread, through the boundary): the kernel then reads it through its own
  // geometry and tensor map.
  Geometry kg = lg;
  const float* in = p.input.data;
  kernels::TiledMaps maps = loads.maps;
  std::optional<StreamScratch> scratch;
  if (loads.pad) {
    const PaddedInput pi = pad_tiled_input(lg, tiled_tile_x(e), e.block_rows);
    scratch.emplace(device, pi.floats, stream);
    if (scratch->get() != nullptr &&
        plane_tensor_map(device, pi.geometry, l, scratch->get(), maps.plane).empty()) {
      launch_pad(pi, lg, p.input.data, scratch->get(), stream);
      kg = pi.geometry;
      in = scratch->get();
    }
  }
  const bool padded = in != p.input.data;
  const bool bulk_planes = bulk && (padded || !loads.pad);
  // A grid of the blocks the device holds, but one block per tile after the pad kernel: launched
  // as its dependent, a resident grid's blocks would all wait on the pad kernel's last wave.
  if (!padded)
    kernels::tiled_resident_grid(s, resident_blocks(device, v.blocks_per_sm));
  tiled_deal_face_tiles(l, tiled_tile_x(e), e.block_rows, s.grid[0]);
  // The border kernel's taps (constant memory) go up with the tiled kernel's.
  TapLease border_taps;
  if (loads.border)
    border_taps = border_upload_taps(device, tiled_tap_rows(p), stream);
  // On the padded copy the tiled kernel reads the pad kernel's output (dependent_launch.h).
  const int plane_loads = kernels::tiled_plane_loads(bulk_planes, loads.border);
  const TiledFixedRows* fixed = tiled_fixed_rows(device, e, lg, l, plane_loads, s.shared_bytes, v);
  const bool fixed_rows = fixed != nullptr;
  const TiledLaunch launch = fixed_rows ? fixed->launch : e.launch;
  const void* kernel = fixed_rows ? fixed->kernel : e.kernel;
  launch(device, padded, to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream, kg, l, in,
         p.output.data, global_taps.get(), maps, plane_loads, 1);
  NDCONV_CUDA_CHECK_LAUNCH("tiled_kernel");
  if (loads.border)
    launch_border(device, tiled_geometry(p), p.input.data, p.output.data, stream);
  LaunchPlan plan;
  plan.outputs_per_thread = e.ko;
  plan.reason = std::move(reason);
  plan.kernel = "tiled TX=" + std::to_string(e.outputs_along_x) + (bulk_planes ? " bulk" : "") +
                (lead > 0 ? " lead " + std::to_string(lead) : "") + (padded ? " padded" : "") +
                (loads.halo_slots > 0
                     ? (l.halo_wrap ? " halo wrap" : (l.halo_local ? " halo local" : " halo"))
                     : "") +
                (loads.border ? " border" : "") + (fixed_rows ? " rows fixed" : "");
  plan.taps_in_constant = false;
  set_plan_shape(plan, s);
  set_plan_kernel(plan, device, kernel, e.ko, s, "tiled", e.outputs_along_x);
  // The launch's block is one dimension of e.threads threads; report the tile's thread shape
  // (threads along x by block rows), which is what tells the table's entries apart.
  plan.block[0] = e.threads / e.block_rows;
  plan.block[1] = e.block_rows;
  plan.block[2] = 1;
  plan.launches = padded || loads.border ? 2 : 1;
  return plan;
}

}  // namespace

std::string plane_tensor_map(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TensorMap& map) {
  const std::string unfit = bulk_copy_unfit(g, l, reinterpret_cast<uintptr_t>(in));
  if (!unfit.empty())
    return unfit;
  const uint32_t box[kernels::kAxes] = {static_cast<uint32_t>(l.pitch),
                                        static_cast<uint32_t>(l.rows), 1, 1};
  return encode_box_map(device, g, in, box, map);
}

std::string wrap_tensor_maps(int device, const kernels::Geometry& g, const kernels::TiledLayout& l,
                             const float* in, kernels::TiledMaps& maps) {
  if (!l.halo_wrap)
    return "the launch has no wrap boxes";
  const uint32_t side[kernels::kAxes] = {static_cast<uint32_t>(l.wrap_columns),
                                         static_cast<uint32_t>(l.rows), 1, 1};
  const uint32_t band[kernels::kAxes] = {static_cast<uint32_t>(l.pitch),
                                         static_cast<uint32_t>(l.wrap_rows), 1, 1};
  const std::string unfit = encode_box_map(device, g, in, side, maps.side);
  return unfit.empty() ? encode_box_map(device, g, in, band, maps.band) : unfit;
}

// One compiled tiled entry fitted to a launch: its loads, geometry, shape and resources.
struct TiledFit {
  const TiledEntry* entry = nullptr;
  TiledLoads loads;
  Geometry lg;
  kernels::LaunchShape shape;
  KernelVariant resources;
};

// Entry e on the tiled geometry tg, when it fits the device (tiled_unfit) with at least
// Tuning::tiled_min_blocks_per_sm resident blocks: enough that one block's barriers and plane loads
// overlap another's FMAs (filters whose taps fill the shared memory go to the blocked kernel).
std::optional<TiledFit> fit_tiled(int device, const TiledEntry& e, const Geometry& tg,
                                  const float* in, const Tuning& tuning) {
  TiledFit f;
  f.entry = &e;
  f.loads = tiled_loads(device, e, tg, in, tuning);
  f.lg = kernels::tiled_lead_geometry(tg, f.loads.lead);
  if (!tiled_unfit(device, e, f.lg, f.loads.halo_slots, f.loads.wrap_boxes, f.shape, f.resources)
           .empty() ||
      f.resources.blocks_per_sm < tuning.tiled_min_blocks_per_sm)
    return std::nullopt;
  return f;
}

// The register budget's pick among fitted entries of one shape (choose_tiled_outputs_per_thread
// over the resources the runtime reports for this launch); `reason` gets its line.
const TiledFit& pick_by_register_budget(const std::vector<TiledFit>& fits, const Geometry& tg,
                                        std::string& reason) {
  std::vector<KoCandidate> candidates;
  for (const TiledFit& f : fits) {
    const KernelVariant& v = f.resources;
    candidates.push_back({f.entry->ko, v.registers_per_thread, v.local_bytes, v.block_threads,
                          v.blocks_per_sm, v.occupancy});
  }
  const int* k = tg.filter_extent;
  const KoChoice ko = choose_tiled_outputs_per_thread(
      candidates, {k[0], k[1], k[2], k[3], fits.front().entry->outputs_along_x}, tg.out_extent[3]);
  reason = ko.reason;
  for (const TiledFit& f : fits)
    if (f.entry->ko == ko.outputs_per_thread)
      return f;
  return fits.front();
}

std::optional<LaunchPlan> launch_auto_tiled(const detail::CorrelationProblem& p,
                                            int outputs_per_thread, int device, cudaStream_t stream,
                                            const Tuning& tuning) {
  const int dims = p.input.dims;
  const bool tiled_allowed =
      outputs_per_thread == 0 || (dims > 2 && tiled_has_ko(outputs_per_thread));
  if (!tiled_allowed)
    return std::nullopt;
  const Geometry tg = tiled_geometry(p);
  const bool wide_first = prefer_wide_x(dims, p.filter_extent[0], tuning.tiled_wide_x_min_taps);
  // The wide shape first where chosen, else (or when it does not fit) the default shape.
  for (const bool wide_x : {wide_first, false}) {
    const TiledChoice tc =
        choose_tiled_shape(tg.out_extent[1], tg.out_extent[3], outputs_per_thread, wide_x);
    std::vector<TiledFit> fits;
    for (const int ko : kTiledKo) {
      const TiledEntry* te = find_tiled(ko, tc.block_rows);
      if (te == nullptr || te->outputs_along_x != tc.outputs_along_x ||
          (tc.outputs_per_thread != 0 && ko != tc.outputs_per_thread))
        continue;
      if (std::optional<TiledFit> f = fit_tiled(device, *te, tg, p.input.data, tuning))
        fits.push_back(*f);
    }
    if (fits.empty())
      continue;
    const TiledFit* chosen = &fits.front();
    std::string reason = tc.reason;
    if (tc.outputs_per_thread == 0) {
      std::string budget;
      chosen = &pick_by_register_budget(fits, tg, budget);
      reason += ", " + budget;
    }
    return launch_tiled_entry(device, p, chosen->lg, chosen->loads, *chosen->entry, chosen->shape,
                              chosen->resources, reason, stream);
  }
  return std::nullopt;
}

// The tiled kernel as requested, or InvalidArgument saying why it cannot serve the problem.
LaunchPlan launch_requested_tiled(const detail::CorrelationProblem& p, const DenseKernelRequest& r,
                                  int device, cudaStream_t stream, const Tuning& tuning) {
  const Geometry tg = tiled_geometry(p);
  const int tx = r.tiled_outputs_along_x == 0 ? 8 : r.tiled_outputs_along_x;
  const bool tall = tg.out_extent[1] >= 16;
  // Block rows as the automatic plan picks them: the most when axis 1 is tall, else the fewest.
  auto better_rows = [&](const TiledEntry& c, const TiledEntry* e) {
    return r.tiled_block_rows != 0 ? c.block_rows == r.tiled_block_rows
                                   : e == nullptr || (tall ? c.block_rows > e->block_rows
                                                           : c.block_rows < e->block_rows);
  };
  int ko = r.outputs_per_thread;
  if (ko == 0) {
    // The automatic plan's KO for this TX (axis 1 only decides the block rows): 1 on a unit last
    // axis, else the register budget's among the compiled KO of those block rows that fit.
    ko = choose_tiled_shape(std::max<int64_t>(tg.out_extent[1], 16), tg.out_extent[3], 0, tx == 16)
             .outputs_per_thread;
    const TiledEntry* rows = nullptr;
    for (const TiledEntry& c : kTiledTable)
      if (c.outputs_along_x == tx && better_rows(c, rows))
        rows = &c;
    std::vector<TiledFit> fits;
    for (const TiledEntry& c : kTiledTable) {
      if (ko != 0 || rows == nullptr || c.outputs_along_x != tx || c.block_rows != rows->block_rows)
        continue;
      if (std::optional<TiledFit> f = fit_tiled(device, c, tg, p.input.data, tuning))
        fits.push_back(*f);
    }
    std::string budget;
    if (ko == 0)
      ko = fits.empty() ? 1 : pick_by_register_budget(fits, tg, budget).entry->ko;
  }
  if (p.input.dims == 2 && ko != 1) {
    throw InvalidArgument(
        "tiled kernel: a 2D image has y on the tile rows and no last axis to "
        "block, so KO " +
        std::to_string(ko) + " cannot be implemented (KO 1 only)");
  }
  const TiledEntry* e = nullptr;
  std::string compiled;
  for (const TiledEntry& c : kTiledTable) {
    compiled += (compiled.empty() ? "" : ", ") + tiled_entry_name(c);
    if (c.outputs_along_x == tx && c.ko == ko && better_rows(c, e))
      e = &c;
  }
  if (e == nullptr) {
    throw InvalidArgument(
        "tiled kernel: no instantiation with TX=" + std::to_string(tx) +
        " KO=" + std::to_string(ko) +
        (r.tiled_block_rows ? " and " + std::to_string(r.tiled_block_rows) + " block rows" : "") +
        " (compiled: " + compiled + ")");
  }
  kernels::LaunchShape s;
  KernelVariant v;
  const TiledLoads loads = tiled_loads(device, *e, tg, p.input.data, tuning);
  const Geometry lg = kernels::tiled_lead_geometry(tg, loads.lead);
  const std::string unfit = tiled_unfit(device, *e, lg, loads.halo_slots, loads.wrap_boxes, s, v);
  if (!unfit.empty())
    throw InvalidArgument(unfit);
  return launch_tiled_entry(device, p, lg, loads, *e, s, v,
                            "tiled kernel " + tiled_entry_name(*e) + " requested by the caller",
                            stream);
}

void launch_tiled_pass(int device, int block_rows, const Geometry& g, const float* in, float* out,
                       const float* global_taps, cudaStream_t stream, const Tuning& tuning,
                       LaunchPlan& plan) {
  // The table holds KO 1 with 32 and with 1 block rows, the two shapes tiled_pass_rows picks.
  const TiledEntry& te = *find_tiled(1, block_rows);
  kernels::LaunchShape s = te.shape(g);
  kernels::TiledLayout l = te.layout(g);
  kernels::TiledMaps maps{};
  bool bulk = tiled_bulk_loads(device, g, l, in, maps.plane);
  // Bulk copies with a halo where the boundary needs one and it fits the default shared
  // memory (tiled_pass_rows sized the pass for that), else thread by thread.
  const int halo = bulk ? tiled_halo_slots(g, l, tiled_tile_x(te), te.block_rows, te.threads,
                                           tuning.tiled_max_halo_slots)
                        : 0;
  const kernels::TiledLayout with_halo = tiled_entry_layout(te, g, 0, std::max(halo, 0));
  if (halo < 0 || with_halo.total_floats * int64_t{sizeof(float)} > kTiledMaxSharedBytes)
    bulk = false;
  else
    l = with_halo;
  s.shared_bytes = l.total_floats * static_cast<int>(sizeof(float));
  // Not a dependent launch (dependent_launch.h): the separable passes each read the whole
  // output of the pass before, so an early start only makes their blocks wait on the SMs.
  te.launch(device, false, to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream, g, l, in, out,
            global_taps, maps, bulk ? 1 : 0, 0);
  NDCONV_CUDA_CHECK_LAUNCH("tiled_kernel (separable pass)");
  if (plan.launches == 0) {
    set_plan_shape(plan, s);
    set_plan_kernel(plan, device, te.kernel, 1, s, "tiled", te.outputs_along_x);
  }
  ++plan.launches;
}

std::vector<KernelVariant> tiled_variants(int device) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<KernelVariant> v;
  for (const TiledEntry& e : kTiledTable)
    v.push_back(query_variant(device, e.kernel, e.ko, e.threads));
  for (const TiledFixedRows& f : kTiledFixedTable)
    v.push_back(query_variant(device, f.kernel, kernels::TiledLeadShape::KO,
                              kernels::TiledLeadShape::kThreads));
  return v;
}

std::vector<DenseKernelVariant> tiled_kernel_variants(int device) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::vector<DenseKernelVariant> list;
  for (const TiledEntry& e : kTiledTable) {
    DenseKernelVariant v;
    v.kernel = DenseKernel::Tiled;
    v.outputs_along_x = e.outputs_along_x;
    v.block_x = e.threads / e.block_rows;
    v.block_rows = e.block_rows;
    v.resources = query_variant(device, e.kernel, e.ko, e.threads);
    list.push_back(v);
  }
  return list;
}

}  // namespace ndconv::cuda_backend
