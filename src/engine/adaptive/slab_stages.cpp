// The adaptive filter's CPU stages in slabs along z (y in 2D): slab_stages.h.
//  1. quadrature bank per slab of a few planes, T formed at once into the kept tensor;
//  2. relaxation of each kept component in place: slabs of planes with a halo read from the kept
//     component, each slab's result written back once the next slab has read its halo;
//  3. the largest magnitude x over the image: the control tensor's first pass on copies of the
//     kept tensor's slabs, only on the voxels whose bound |T| exceeds the largest x found so far;
//  4. per slab: the control tensor (both passes, with that largest x), the weights <C, M_k> in
//     place, and the reconstruction bank's weighted sum into the slab's planes of the output.
// The bank and the separable passes compute each output voxel from the same inputs in the same
// order whatever the slab, so every voxel is the whole-image stages' (adaptive_slab_test.cpp).
#include "engine/adaptive/slab_stages.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/first_touch.h"
#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "core/view_overlap.h"
#include "cpu/cpu_backend.h"
#include "engine/adaptive/bank_front.h"
#include "engine/filter_checks.h"
#include "ndconv/engine.h"

namespace ndconv::detail {

namespace {

constexpr double kDefaultSlabBytes = 96.0 * (1 << 20);
// Voxels per block of the per-voxel loops over tensor components.
constexpr int kVoxelBlock = 64;

// Quadrature directions: 3 in 2D, 6 in 3D, 12 in 4D.
int quadrature_directions(int dims) {
  return dims == 2 ? 3 : dims == 3 ? 6 : 12;
}

int64_t relaxation_radius(int dims, double sigma) {
  return sigma > 0 ? static_cast<int64_t>(relaxation_gaussian(dims, sigma).taps[0].size() / 2) : 0;
}

// A dense volume's planes along one axis: runs of `inner` voxels, `outer` of them per plane
// index; a slab of n planes from plane z0 stored densely holds run (zl, o) at (zl + n o) inner.
struct PlaneLayout {
  int64_t inner = 1, planes = 1, outer = 1;
  PlaneLayout(int dims, const Index& extent, int axis) : planes(extent[axis]) {
    for (int a = 0; a < axis; ++a)
      inner *= extent[a];
    for (int a = axis + 1; a < dims; ++a)
      outer *= extent[a];
  }
  int64_t plane() const { return inner * outer; }
  int64_t whole_run(int64_t z, int64_t o) const { return (z + planes * o) * inner; }
};

// Copies planes [z0, z0 + n) between whole volumes and slab buffers (dense, n planes).
void copy_slab(const PlaneLayout& l, int64_t z0, int64_t n, const std::vector<float*>& whole,
               const std::vector<float*>& slab, bool into_slab, int threads) {
  core::parallel_for(threads, n * l.outer,
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t r = begin; r < end; ++r) {
                         const int64_t zl = r % n, o = r / n;
                         const int64_t at = l.whole_run(z0 + zl, o), local = (zl + n * o) * l.inner;
                         for (size_t c = 0; c < whole.size(); ++c) {
                           if (into_slab)
                             std::memcpy(slab[c] + local, whole[c] + at, l.inner * sizeof(float));
                           else
                             std::memcpy(whole[c] + at, slab[c] + local, l.inner * sizeof(float));
                         }
                       }
                     },
                     {});
}

// Floats of the bank's padded input for n output planes of `axis` with filters of `taps` per axis.
double padded_floats(int dims, const Index& extent, int axis, int64_t n, int taps) {
  double floats = 1;
  for (int a = 0; a < dims; ++a)
    floats *= static_cast<double>((a == axis ? n : extent[a]) + taps - 1);
  return floats;
}

}  // namespace

CpuSlabPlan cpu_slab_plan(int dims, const Index& extent, const AdaptiveParameters& parameters,
                          double slab_bytes) {
  const double cap = slab_bytes > 0 ? slab_bytes : kDefaultSlabBytes;
  CpuSlabPlan s;
  s.axis = dims == 2 ? 1 : 2;
  const int64_t planes = extent[s.axis];
  const double plane_bytes = 4.0 * static_cast<double>(PlaneLayout(dims, extent, s.axis).plane());
  const auto fit = [&](double per_plane, double fixed) {
    return std::clamp<int64_t>(static_cast<int64_t>((cap - fixed) / per_plane), 1, planes);
  };
  s.quadrature = fit(2.0 * quadrature_directions(dims) * plane_bytes, 0);
  s.halo = relaxation_radius(dims, parameters.relaxation_sigma);
  // Two output slabs and the separable passes' two intermediates (n + 2 halo planes each); at
  // least `halo` planes, so that a slab written back is no longer any later slab's halo.
  s.relaxation = std::max(fit(4 * plane_bytes, 4.0 * static_cast<double>(s.halo) * plane_bytes),
                          std::min(s.halo, planes));
  s.reconstruction = reconstruction_slab_planes(dims, extent, slab_bytes);
  return s;
}

int64_t reconstruction_slab_planes(int dims, const Index& extent, double slab_bytes) {
  const int axis = dims == 2 ? 1 : 2;
  const double plane_bytes = 4.0 * static_cast<double>(PlaneLayout(dims, extent, axis).plane());
  // The m tensor components (C, then the weights, in place), the magnitudes and the ones.
  return std::clamp<int64_t>(
      static_cast<int64_t>((slab_bytes > 0 ? slab_bytes : kDefaultSlabBytes) /
                           ((component_count(dims) + 2) * plane_bytes)),
      1, extent[axis]);
}

double cpu_working_bytes(int dims, const Index& extent, const AdaptiveParameters& parameters,
                         bool slabs) {
  const CpuSlabPlan s = cpu_slab_plan(dims, extent, parameters);
  const int m = component_count(dims);
  const double voxels = static_cast<double>(voxels_of(dims, extent));
  const double plane = static_cast<double>(PlaneLayout(dims, extent, s.axis).plane());
  const double reconstruction =
      plane * static_cast<double>(s.reconstruction) * (m + 2) +
      padded_floats(dims, extent, s.axis, s.reconstruction, parameters.reconstruction.size);
  // The designed filters, the banks' tap rows, per-thread rows and the allocator's arenas.
  const double fixed = 16.0 * (1 << 20);
  if (!slabs) {
    // structure_tensor's responses in slabs of the last axis of at most 256 MiB, on the coarse
    // grid or the whole, and the bank's padded input of such a slab.
    Index grid = extent;
    if (parameters.orientation_downsampling == 2)
      for (int a = 0; a < std::min(dims, 3); ++a)
        grid[a] = (grid[a] + 1) / 2;
    const int last = dims - 1;
    const double last_plane = static_cast<double>(voxels_of(dims, grid) / grid[last]);
    const double k = 2.0 * quadrature_directions(dims);
    const int64_t slab_planes = std::clamp<int64_t>(
        static_cast<int64_t>((256.0 * (1 << 20)) / (4 * k * last_plane)), 1, grid[last]);
    const double responses =
        k * last_plane * static_cast<double>(slab_planes) +
        padded_floats(dims, grid, last, slab_planes, parameters.quadrature.size);
    return 4.0 * (m * voxels + std::max({3.0 * voxels, responses, reconstruction})) + fixed;
  }
  const double quadrature =
      plane * static_cast<double>(s.quadrature) * 2 * quadrature_directions(dims) +
      padded_floats(dims, extent, s.axis, s.quadrature, parameters.quadrature.size);
  const double relaxation = plane * static_cast<double>(4 * s.relaxation + 4 * s.halo);
  return 4.0 * ((m - 1) * voxels + std::max({quadrature, relaxation, reconstruction})) + fixed;
}

void tensor_from_responses(const float* const* responses, int filters, int m,
                           const std::vector<Tensor>& upper_duals, int64_t from,
                           float* const* tensor, int64_t to, int64_t count) {
  // Blocks of voxels, the voxel loops innermost so that they vectorise; each voxel's sums run in
  // the one-voxel order (filter by filter).
  for (int64_t first = 0; first < count; first += kVoxelBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kVoxelBlock, count - first));
    double t[kMaxDims * kMaxDims][kVoxelBlock] = {};
    for (int q = 0; q < filters; ++q) {
      const float* re = responses[2 * q] + from + first;
      const float* im = responses[2 * q + 1] + from + first;
      double magnitude[kVoxelBlock];
      // Squares of floats in double neither overflow nor underflow, so the square root needs
      // none of hypot's (slow) scaling.
      for (int i = 0; i < n; ++i) {
        const double r = re[i], j = im[i];
        magnitude[i] = std::sqrt(r * r + j * j);
      }
      for (int c = 0; c < m; ++c) {
        const double dual = upper_duals[q][c];
        for (int i = 0; i < n; ++i)
          t[c][i] += magnitude[i] * dual;
      }
    }
    for (int c = 0; c < m; ++c)
      for (int i = 0; i < n; ++i)
        tensor[c][to + first + i] = static_cast<float>(t[c][i]);
  }
}

void weights_from_control(const std::vector<double>& coefficients, int m, float* const* tensor,
                          int64_t count, int threads) {
  core::parallel_for(threads, (count + kVoxelBlock - 1) / kVoxelBlock,
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t b = begin; b < end; ++b) {
                         const int64_t first = b * kVoxelBlock;
                         const int n =
                             static_cast<int>(std::min<int64_t>(kVoxelBlock, count - first));
                         double c_in[kMaxDims * kMaxDims][kVoxelBlock];
                         for (int c = 0; c < m; ++c)
                           for (int i = 0; i < n; ++i)
                             c_in[c][i] = tensor[c][first + i];
                         for (int k = 0; k < m; ++k) {
                           double s[kVoxelBlock] = {};
                           for (int c = 0; c < m; ++c) {
                             const double coefficient = coefficients[k * m + c];
                             for (int i = 0; i < n; ++i)
                               s[i] += coefficient * c_in[c][i];
                           }
                           for (int i = 0; i < n; ++i)
                             tensor[k][first + i] = static_cast<float>(s[i]);
                         }
                       }
                     },
                     {});
}

RunReport reconstruct_planes(const ConstVolumeView& input, const ReconstructionBank& bank,
                             const std::vector<const float*>& weights, const VolumeView& output,
                             int axis, int64_t first, int64_t planes, const Options& options) {
  if (output.dims != input.dims || output.extent != input.extent)
    throw InvalidArgument("the output volume must have the input's extents");
  if (views_overlap(input, output))
    throw InvalidArgument("input and output volumes overlap");
  std::vector<float> flipped;
  BankProblem p = prepare_bank(input, bank.filter_bank(), bank.options, flipped);
  p.output_extent[axis] = planes;
  p.offset[axis] += first;
  for (const float* w : weights)
    p.weights.push_back(make_view(w, input.dims, p.output_extent));
  p.sum_output = output;
  p.sum_output.data += first * output.stride[axis];
  p.sum_output.extent[axis] = planes;
  RunReport report;
  cpu_backend::run_bank(p, options, report);
  return report;
}

void blend_with_input(const ConstVolumeView& input, const VolumeView& output, double blend) {
  if (!(blend > 0))
    return;
  const int dims = input.dims;
  const Index extent = input.extent;
  Index i{0, 0, 0, 0};
  for (int64_t v = 0; v < input.voxel_count(); ++v) {
    int64_t rest = v;
    for (int a = 0; a < dims; ++a) {
      i[a] = rest % extent[a];
      rest /= extent[a];
    }
    float& out = output.at(i);
    out = static_cast<float>((1 - blend) * out + blend * input.at(i));
  }
}

void filter_volume_cpu_slabs(const ConstVolumeView& input, const VolumeView& output,
                             const AdaptiveParameters& parameters, const Options& options,
                             const std::vector<DesignedFilter>& quadrature,
                             const std::vector<DesignedFilter>& reconstruction,
                             const StageShares& shares, AdaptiveReport& report, double slab_bytes,
                             const MagnitudeRegion& region, bool scale_only) {
  const int dims = input.dims;
  const int m = component_count(dims);
  const Index extent = input.extent;
  const CpuSlabPlan plan = cpu_slab_plan(dims, extent, parameters, slab_bytes);
  const int axis = plan.axis;
  const PlaneLayout layout(dims, extent, axis);
  const int64_t planes = extent[axis], plane = layout.plane();
  const int threads = core::resolve_thread_count(options.threads);
  const ControlMapping mapping = control_mapping(dims, parameters);
  check_blend(parameters.blend);
  const QuadratureBank qbank = quadrature_bank(dims, quadrature, options);
  const ReconstructionBank rbank = reconstruction_bank(dims, reconstruction, options);
  const auto progress_of = [&](const Options& o, double base, double span, int64_t z0, int64_t n) {
    return stage_options(o, base + span * static_cast<double>(z0) / planes,
                         span * static_cast<double>(n) / planes);
  };

  // The reconstruction reads the input around each slab it writes: the output cannot be the input.
  if (!scale_only && (output.dims != dims || output.extent != extent))
    throw InvalidArgument("the output volume must have the input's extents");
  if (!scale_only && views_overlap(input, output))
    throw InvalidArgument("input and output volumes overlap");
  // The kept tensor; its last component in the output's buffer where that is a dense volume (the
  // reconstruction reads each slab of it before writing the slab's output).
  const bool output_holds = !scale_only && output.is_contiguous();
  std::vector<std::vector<float>> kept(output_holds ? m - 1 : m);
  std::vector<float*> tensor;
  for (auto& c : kept) {
    assign_touched(c, static_cast<size_t>(input.voxel_count()), 0.0f, threads);
    tensor.push_back(c.data());
  }
  if (output_holds)
    tensor.push_back(output.data);

  // 1. Quadrature bank and T, slab by slab.
  auto t0 = std::chrono::steady_clock::now();
  {
    const int k = qbank.filters;
    const std::vector<Tensor> upper_duals = qbank.upper_duals();
    std::vector<std::vector<float>> responses(
        2 * k, std::vector<float>(static_cast<size_t>(plan.quadrature * plane)));
    std::vector<const float*> response_data;
    for (auto& r : responses)
      response_data.push_back(r.data());
    double seconds = 0;
    for (int64_t z0 = 0; z0 < planes; z0 += plan.quadrature) {
      const int64_t n = std::min(plan.quadrature, planes - z0);
      BankProblem p = qbank.slab(input, 0, extent[dims - 1]);
      p.output_extent[axis] = n;
      p.offset[axis] += z0;
      for (auto& r : responses)
        p.outputs.push_back(make_view(r.data(), dims, p.output_extent));
      RunReport r;
      cpu_backend::run_bank(p, progress_of(qbank.options, 0.0, shares.orientation, z0, n), r);
      seconds += r.seconds_compute;
      report.quadrature_bank = r;
      core::parallel_for(threads, n * layout.outer,
                         [&](int64_t begin, int64_t end, int) {
                           for (int64_t run = begin; run < end; ++run) {
                             const int64_t zl = run % n, o = run / n;
                             tensor_from_responses(response_data.data(), k, m, upper_duals,
                                                   (zl + n * o) * layout.inner, tensor.data(),
                                                   layout.whole_run(z0 + zl, o), layout.inner);
                           }
                         },
                         {});
    }
    report.quadrature_bank.seconds_compute = report.quadrature_bank.seconds_total = seconds;
  }
  report.stage_seconds.emplace_back("quadrature bank and structure tensor", seconds_since(t0));

  // 2. Relaxation of each component in place.
  t0 = std::chrono::steady_clock::now();
  if (parameters.relaxation_sigma > 0) {
    const SeparableFilter gaussian = relaxation_gaussian(dims, parameters.relaxation_sigma);
    Options o = options;
    o.operation = Operation::Correlation;
    o.region = OutputRegion::Same;
    o.progress = {};
    const int64_t step = plan.relaxation, halo = plan.halo;
    std::vector<float> done[2];
    cpu_backend::SeparableScratch scratch;
    for (auto& d : done)
      assign_touched(d, static_cast<size_t>(step * plane), 0.0f, threads);
    for (int c = 0; c < m; ++c) {
      const VolumeView whole = make_view(tensor[c], dims, extent);
      int64_t pending = -1, pending_n = 0;
      int slot = 0;
      const auto write_back = [&](int from) {
        copy_slab(layout, pending, pending_n, {tensor[c]}, {done[from].data()}, false, threads);
      };
      for (int64_t z0 = 0; z0 < planes; z0 += step) {
        const int64_t n = std::min(step, planes - z0);
        const int64_t lo = std::max<int64_t>(0, z0 - halo), hi = std::min(planes, z0 + n + halo);
        SeparableProblem sp;
        sp.input = as_const(whole);
        sp.input.data += lo * whole.stride[axis];
        sp.input.extent[axis] = hi - lo;
        Index out_extent = extent;
        out_extent[axis] = n;
        sp.output = make_view(done[slot].data(), dims, out_extent);
        sp.boundary = backend_boundary(o, nullptr);
        for (int a = 0; a < dims; ++a) {
          sp.taps[a] = gaussian.taps[a];
          sp.offset[a] = -static_cast<int64_t>(sp.taps[a].size() / 2) + (a == axis ? z0 - lo : 0);
        }
        RunReport r;
        cpu_backend::run_separable_in(scratch, sp, o, r);
        // The previous slab's result goes back now that this slab has read its halo.
        if (pending >= 0)
          write_back(1 - slot);
        pending = z0;
        pending_n = n;
        slot = 1 - slot;
      }
      write_back(1 - slot);
      report_progress(stage_options(options, shares.orientation, shares.relaxation),
                      static_cast<double>(c + 1) / m);
    }
  }
  report.stage_seconds.emplace_back("tensor relaxation", seconds_since(t0));

  // 3. The largest magnitude x in the image (in the region; none where the scale is given): the
  // control tensor's first pass on slab copies, where a voxel's bound may exceed the largest x
  // found so far.
  t0 = std::chrono::steady_clock::now();
  const int64_t step = plan.reconstruction;
  std::vector<std::vector<float>> slab(m + 2);
  for (auto& s : slab)
    assign_touched(s, static_cast<size_t>(step * plane), 0.0f, threads);
  std::vector<float*> slab_tensor;
  for (int c = 0; c < m; ++c)
    slab_tensor.push_back(slab[c].data());
  float* magnitude = slab[m].data();
  std::fill(slab[m + 1].begin(), slab[m + 1].end(), 1.0f);  // the lowpass's weights
  const double control_base = shares.orientation + shares.relaxation;
  double largest = parameters.normalisation_scale.value_or(0.0);
  for (int64_t z0 = 0; z0 < planes && !parameters.normalisation_scale; z0 += step) {
    const int64_t n = std::min(step, planes - z0);
    copy_slab(layout, z0, n, tensor, slab_tensor, true, threads);
    // The slab's planes as a volume of n planes along `axis` (copy_slab's layout), the region
    // moved with them.
    MagnitudeRegion in_slab = region;
    if (region.dims > 0) {
      in_slab.extent[axis] = n;
      in_slab.lo[axis] -= z0;
      in_slab.hi[axis] -= z0;
    }
    largest = control_largest_magnitude(mapping, slab_tensor.data(), magnitude, n * plane, largest,
                                        threads, in_slab);
    report_progress(options, control_base + shares.control * static_cast<double>(z0 + n) / planes);
  }
  double control_seconds = seconds_since(t0);
  report.normalisation_scales.push_back(largest);
  if (scale_only)
    return;

  // 4. Per slab: the control tensor, the weights, the reconstruction.
  double bank_seconds = 0, reconstruction_seconds = 0;
  std::vector<const float*> weights{slab[m + 1].data()};
  for (int c = 0; c < m; ++c)
    weights.push_back(slab[c].data());
  const double r_base = control_base + shares.control;
  for (int64_t z0 = 0; z0 < planes; z0 += step) {
    const int64_t n = std::min(step, planes - z0);
    t0 = std::chrono::steady_clock::now();
    copy_slab(layout, z0, n, tensor, slab_tensor, true, threads);
    control_shape_pass(mapping, slab_tensor.data(), magnitude, n * plane, threads, {}, 0.0, 1.0);
    control_gain_pass(mapping, slab_tensor.data(), magnitude, n * plane, largest, threads, {}, 0.0,
                      1.0);
    control_seconds += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    weights_from_control(rbank.coefficients, m, slab_tensor.data(), n * plane, threads);
    const RunReport r =
        reconstruct_planes(input, rbank, weights, output, axis, z0, n,
                           progress_of(rbank.options, r_base, shares.reconstruction, z0, n));
    bank_seconds += r.seconds_compute;
    report.bank = r;
    reconstruction_seconds += seconds_since(t0);
  }
  report.bank.seconds_compute = report.bank.seconds_total = bank_seconds;
  report.stage_seconds.emplace_back("control tensor", control_seconds);
  t0 = std::chrono::steady_clock::now();
  blend_with_input(input, output, parameters.blend);
  report.stage_seconds.emplace_back("reconstruction", reconstruction_seconds + seconds_since(t0));
}

}  // namespace ndconv::detail
