// The engine's front end: validates a request, turns convolution into correlation with a flipped
// filter and the output region into an input offset (see problem.h), picks the backend and runs
// it. Everything a backend could get wrong about semantics is decided here, once.
#include "ndconv/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string>

#include "core/constant_border.h"
#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "engine/backend_work.h"
#include "engine/filter_checks.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_host.h"
#include "core/enum_names.h"
#include "core/problem.h"
#include "core/view_overlap.h"
#include "engine/gpu_slabs.h"
#include "ndconv/device.h"
#include "ndconv/memory.h"
#include "ndconv/stored.h"

namespace ndconv {

const char* to_string(Boundary b) {
  static constexpr EnumName<Boundary> kBoundaryNames[] = {
      {Boundary::Zero, "zero"},       {Boundary::Replicate, "replicate"},
      {Boundary::Mirror, "mirror"},   {Boundary::Periodic, "periodic"},
      {Boundary::Reflect, "reflect"}, {Boundary::Constant, "constant"}};
  static_assert(lists_every(kBoundaryNames, kBoundaryCount), "a Boundary without its name");
  return name_of(b, kBoundaryNames, "?");
}

const char* to_string(OutputRegion r) {
  return r == OutputRegion::Same ? "same" : "valid";
}

const char* to_string(Operation o) {
  return o == Operation::Convolution ? "convolution" : "correlation";
}

const char* to_string(Backend b) {
  static constexpr EnumName<Backend> kBackendNames[] = {
      {Backend::Auto, "auto"}, {Backend::Cpu, "cpu"}, {Backend::Cuda, "cuda"}};
  static_assert(lists_every(kBackendNames, kBackendCount), "a Backend without its name");
  return name_of(b, kBackendNames, "?");
}

const char* version() {
#ifdef NDCONV_VERSION
  return NDCONV_VERSION;
#else
  return "unknown";
#endif
}

CudaStatus cuda_status(bool free_memory) {
  return cuda_backend::probe(free_memory);
}

namespace {

std::string axis_name(int axis) {
  static const char* names[] = {"x", "y", "z", "t"};
  return names[axis];
}

void validate_dims(int dims, const char* what) {
  if (dims < 2 || dims > 4) {
    throw InvalidArgument(std::string(what) + " has dimension " + std::to_string(dims) +
                          "; ndconv filters 2D, 3D and 4D volumes");
  }
}

void validate_volume(const BasicVolumeView<const float>& v, const char* what) {
  validate_dims(v.dims, what);
  if (v.data == nullptr)
    throw InvalidArgument(std::string(what) + " has no data");
  for (int a = 0; a < v.dims; ++a) {
    if (v.extent[a] < 1) {
      throw InvalidArgument(std::string(what) + " is empty along " + axis_name(a));
    }
    if (v.stride[a] < 1 && v.extent[a] > 1) {
      throw InvalidArgument(std::string(what) + " has a non-positive stride along " + axis_name(a));
    }
  }
}

// The anchor c: the tap that sits over the output voxel in a correlation (k / 2, as ITK and
// scipy). For convolution the flipped filter's anchor is k - 1 - k / 2.
int64_t correlation_anchor(int64_t k, Operation op) {
  return op == Operation::Correlation ? k / 2 : k - 1 - k / 2;
}

void check_output(const OutputGeometry& g, const VolumeView& out) {
  validate_volume(as_const(out), "the output volume");
  if (out.dims != g.dims)
    throw InvalidArgument("the output volume's dimension does not match");
  for (int a = 0; a < g.dims; ++a) {
    if (out.extent[a] != g.extent[a]) {
      throw InvalidArgument("the output volume has " + std::to_string(out.extent[a]) +
                            " voxels along " + axis_name(a) + ", expected " +
                            std::to_string(g.extent[a]));
    }
  }
}

void check_no_overlap(const ConstVolumeView& in, const VolumeView& out) {
  if (detail::views_overlap(in, out))
    throw InvalidArgument("input and output volumes overlap");
}

using detail::LinearWork;

// The backend of a dense or separable call (detail::choose_backend): `work` completed from the
// views, and with whether the memory is pinned once CUDA has started (asking earlier would start
// it). `uploaded`: the values the GPU would upload (the stored ones, or the float view's).
Backend choose_backend(const ConstVolumeView& input, const VolumeView& output, LinearWork work,
                       const void* uploaded, const Options& options, RunReport& report) {
  work.input_voxels = input.voxel_count();
  work.output_voxels = output.voxel_count();
  if (options.backend == Backend::Auto && cuda_started(options.cuda_device)) {
    work.input_pinned =
        input.is_contiguous() &&
        is_pinned(uploaded, static_cast<size_t>(input.voxel_count()) * work.input_bytes_per_voxel);
    work.output_pinned = output.is_contiguous() &&
                         is_pinned(output.data, static_cast<size_t>(output.voxel_count()) * 4);
  }
  return detail::choose_backend(options, detail::linear_backend_work(work, options), report);
}

// The device entry points need the GPU: an InvalidArgument saying why not, as Backend::Cuda.
void require_gpu(const Options& options) {
  if (options.backend == Backend::Cpu)
    throw InvalidArgument("device memory needs the CUDA backend, not the CPU");
  Options cuda = options;
  cuda.backend = Backend::Cuda;
  RunReport unused;
  choose_backend(ConstVolumeView{}, VolumeView{}, LinearWork{}, nullptr, cuda, unused);
}

template <typename Problem, typename CpuRun, typename CudaRun>
RunReport dispatch(const Problem& problem, const LinearWork& work, const Options& options,
                   CpuRun cpu, CudaRun cuda) {
  const auto t0 = std::chrono::steady_clock::now();
  RunReport report;
  report.backend =
      choose_backend(problem.input, problem.output, work, problem.input.data, options, report);
  if (report.backend == Backend::Cuda && options.cuda_devices.size() > 1) {
    detail::check_gpus_there(options.cuda_devices);
    detail::run_in_gpu_slabs(problem, options.cuda_devices, options, report,
                             [&](const Problem& slab, detail::RowRange, const Options& o,
                                 RunReport& r) { cuda(slab, o, r); });
  } else if (report.backend == Backend::Cuda) {
    cuda(problem, options, report);
  } else {
    cpu(problem, options, report);
  }
  report.seconds_total = detail::seconds_since(t0);
  return report;
}

}  // namespace

OutputGeometry output_geometry(int dims, const Index& input_extent, const Index& filter_extent,
                               Operation operation, OutputRegion region) {
  validate_dims(dims, "the volume");
  OutputGeometry g;
  g.dims = dims;
  for (int a = 0; a < dims; ++a) {
    const int64_t n = input_extent[a], k = filter_extent[a];
    if (n < 1)
      throw InvalidArgument("the volume is empty along " + axis_name(a));
    if (k < 1)
      throw InvalidArgument("the filter is empty along " + axis_name(a));
    if (region == OutputRegion::Same) {
      g.extent[a] = n;
      g.start[a] = 0;
    } else {
      if (k > n) {
        throw InvalidArgument("the valid region is empty: the filter (" + std::to_string(k) +
                              ") is larger than the volume (" + std::to_string(n) + ") along " +
                              axis_name(a));
      }
      g.extent[a] = n - k + 1;
      g.start[a] = correlation_anchor(k, operation);
    }
  }
  return g;
}

Boundary detail::backend_boundary(const Options& options, const char* filter) {
  if (!std::isfinite(options.boundary_value))
    throw InvalidArgument("the boundary value is not finite");
  if (options.boundary != Boundary::Constant)
    return options.boundary;
  if (filter != nullptr && options.boundary_value != 0.0f) {
    throw InvalidArgument(std::string(filter) +
                          " takes the constant boundary with the value 0 only (zero), not " +
                          std::to_string(options.boundary_value));
  }
  return Boundary::Zero;
}

void detail::validate_dense_shape(int dims, const Index& extent) {
  validate_dims(dims, "the filter");
  const int64_t limit = dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D;
  for (int a = 0; a < dims; ++a) {
    if (extent[a] < 1)
      throw InvalidArgument("the filter is empty along " + axis_name(a));
    if (extent[a] > limit) {
      throw InvalidArgument("the filter has " + std::to_string(extent[a]) + " taps along " +
                            axis_name(a) + "; the limit for " + std::to_string(dims) +
                            "D dense filters is " + std::to_string(limit) +
                            " (use a separable filter for larger ones)");
    }
  }
}

void validate_dense_filter(const DenseFilter& filter) {
  validate_dims(filter.dims, "the filter");
  if (filter.taps == nullptr)
    throw InvalidArgument("the filter has no taps");
  detail::validate_dense_shape(filter.dims, filter.extent);
  for (int64_t i = 0; i < filter.tap_count(); ++i) {
    if (!std::isfinite(filter.taps[i]))
      throw InvalidArgument("the filter has a NaN or Inf tap");
  }
}

namespace {

// The front end of a dense request: validation, and the correlation problem (`flipped` holds the
// taps of a convolution, which the problem points to).
detail::CorrelationProblem dense_problem(const ConstVolumeView& input, const DenseFilter& filter,
                                         const VolumeView& output, const Options& options,
                                         std::vector<float>& flipped) {
  validate_volume(input, "the input volume");
  validate_dense_filter(filter);
  if (filter.dims != input.dims) {
    throw InvalidArgument("the filter is " + std::to_string(filter.dims) + "D but the volume is " +
                          std::to_string(input.dims) + "D");
  }
  const OutputGeometry g =
      output_geometry(input.dims, input.extent, filter.extent, options.operation, options.region);
  check_output(g, output);
  check_no_overlap(input, output);

  // Resolve convolution into correlation: flip every axis, and move the anchor accordingly.
  const int64_t taps = filter.tap_count();
  const float* correlation_taps = filter.taps;
  if (options.operation == Operation::Convolution) {
    flipped.assign(filter.taps, filter.taps + taps);
    std::reverse(flipped.begin(), flipped.end());  // reversing the buffer flips every axis
    correlation_taps = flipped.data();
  }
  detail::CorrelationProblem p;
  p.input = input;
  p.output = output;
  p.filter_extent = filter.extent;
  p.taps = correlation_taps;
  p.boundary = detail::backend_boundary(options, nullptr);
  for (int a = 0; a < input.dims; ++a) {
    const int64_t anchor = correlation_anchor(filter.extent[a], options.operation);
    p.offset[a] = g.start[a] - anchor;  // same: -anchor; valid: 0
  }
  return p;
}

// The front end of a separable request.
detail::SeparableProblem separable_problem(const ConstVolumeView& input,
                                           const SeparableFilter& filter, const VolumeView& output,
                                           const Options& options) {
  validate_volume(input, "the input volume");
  if (filter.dims != input.dims) {
    throw InvalidArgument("the separable filter is " + std::to_string(filter.dims) +
                          "D but the volume is " + std::to_string(input.dims) + "D");
  }
  Index filter_extent{1, 1, 1, 1};
  for (int a = 0; a < input.dims; ++a) {
    const auto& t = filter.taps[a];
    if (static_cast<int64_t>(t.size()) > kMaxSeparableExtent) {
      throw InvalidArgument("the 1D filter along " + axis_name(a) + " has " +
                            std::to_string(t.size()) + " taps; the limit is " +
                            std::to_string(kMaxSeparableExtent));
    }
    for (float v : t) {
      if (!std::isfinite(v))
        throw InvalidArgument("the filter has a NaN or Inf tap");
    }
    if (!t.empty())
      filter_extent[a] = static_cast<int64_t>(t.size());
  }
  for (int a = input.dims; a < kMaxDims; ++a) {
    if (!filter.taps[a].empty())
      throw InvalidArgument("the separable filter has too many axes");
  }
  std::array<bool, kMaxDims> listed{};
  for (int i = 0; i < input.dims; ++i) {
    const int a = filter.pass_order[i];
    if (a < 0 || a >= input.dims || listed[a]) {
      throw InvalidArgument("the separable filter's pass order is not a permutation of its " +
                            std::to_string(input.dims) + " axes");
    }
    listed[a] = true;
  }
  const OutputGeometry g =
      output_geometry(input.dims, input.extent, filter_extent, options.operation, options.region);
  check_output(g, output);
  check_no_overlap(input, output);

  detail::SeparableProblem p;
  p.input = input;
  p.output = output;
  p.boundary = detail::backend_boundary(options, nullptr);
  for (int a = 0; a < input.dims; ++a) {
    p.taps[a] = filter.taps[a];
    if (p.taps[a].empty())
      continue;
    if (options.operation == Operation::Convolution)
      std::reverse(p.taps[a].begin(), p.taps[a].end());
    p.offset[a] = g.start[a] - correlation_anchor(filter_extent[a], options.operation);
  }
  return p;
}

LinearWork separable_work(const detail::SeparableProblem& p) {
  LinearWork w;
  w.separable = true;
  w.taps_per_output = 0;
  w.passes = 0;
  for (const auto& taps : p.taps) {
    if (taps.empty())
      continue;
    w.taps_per_output += static_cast<double>(taps.size());
    ++w.passes;
  }
  w.passes = std::max(1, w.passes);
  w.slab_passes = p.input.dims >= 2 && p.taps[p.input.dims - 1].empty();
  return w;
}

// Boundary::Constant's terms for a problem the backends run with zeros outside (empty for the
// other boundaries, the value 0 and regions without a border shell).
detail::ConstantBorder value_terms(const detail::CorrelationProblem& p, const Options& options) {
  if (options.boundary != Boundary::Constant)
    return {};
  return detail::constant_border(p, options.boundary_value);
}

detail::ConstantBorder value_terms(const detail::SeparableProblem& p, const SeparableFilter& filter,
                                   const Options& options) {
  if (options.boundary != Boundary::Constant)
    return {};
  return detail::constant_border(p, filter.pass_order, options.boundary_value);
}

// Adds the terms to the host output of a finished run, on every thread.
RunReport with_value_terms(RunReport report, const detail::ConstantBorder& terms,
                           const VolumeView& output, const Options& options) {
  if (terms.empty())
    return report;
  const auto t0 = std::chrono::steady_clock::now();
  detail::add_constant_border(terms, output, core::resolve_thread_count(options.threads));
  report.notes.push_back("constant boundary: the value's terms added to the border outputs");
  report.seconds_total += detail::seconds_since(t0);
  return report;
}

// The same on a device output, enqueued on the call's stream.
void add_value_terms_device(const detail::ConstantBorder& terms, const VolumeView& output,
                            const Options& options, void* stream, RunReport& report) {
  if (terms.empty())
    return;
  cuda_backend::add_constant_border_device(terms, output, options.cuda_device, stream);
  report.notes.push_back("constant boundary: the value's terms added to the border outputs");
}

}  // namespace

double cpu_dense_scratch_bytes(int dims, const Index& extent, const Index& filter_extent,
                               const Options& options) {
  const OutputGeometry g =
      output_geometry(dims, extent, filter_extent, options.operation, options.region);
  return cpu_backend::dense_scratch_bytes(dims, g.extent, filter_extent, options);
}

RunReport filter_dense(const ConstVolumeView& input, const DenseFilter& filter,
                       const VolumeView& output, const Options& options) {
  std::vector<float> flipped;
  const detail::CorrelationProblem p = dense_problem(input, filter, output, options, flipped);
  LinearWork work;
  work.taps_per_output = static_cast<double>(filter.tap_count());
  work.dense_4d = filter.dims == 4 && filter.extent[3] > 1;
  const detail::ConstantBorder terms = value_terms(p, options);
  return with_value_terms(
      dispatch(p, work, options, cpu_backend::run_dense, cuda_backend::run_dense), terms, output,
      options);
}

RunReport filter_separable(const ConstVolumeView& input, const SeparableFilter& filter,
                           const VolumeView& output, const Options& options) {
  const detail::SeparableProblem p = separable_problem(input, filter, output, options);
  const detail::ConstantBorder terms = value_terms(p, filter, options);
  return with_value_terms(dispatch(p, separable_work(p), options, cpu_backend::run_separable,
                                   cuda_backend::run_separable),
                          terms, output, options);
}

RunReport filter_dense_device(const ConstVolumeView& input, const DenseFilter& filter,
                              const VolumeView& output, const Options& options, void* stream) {
  std::vector<float> flipped;
  const detail::CorrelationProblem p = dense_problem(input, filter, output, options, flipped);
  require_gpu(options);
  const detail::ConstantBorder terms = value_terms(p, options);
  RunReport report;
  cuda_backend::run_dense_device(p, options, stream, report);
  add_value_terms_device(terms, output, options, stream, report);
  return report;
}

RunReport filter_separable_device(const ConstVolumeView& input, const SeparableFilter& filter,
                                  const VolumeView& output, const Options& options, void* stream) {
  const detail::SeparableProblem p = separable_problem(input, filter, output, options);
  require_gpu(options);
  const detail::ConstantBorder terms = value_terms(p, filter, options);
  RunReport report;
  cuda_backend::run_separable_device(p, options, stream, report);
  add_value_terms_device(terms, output, options, stream, report);
  return report;
}

namespace {

// The data pointer of a stored input's float view, which carries its geometry only.
const float kGeometryOnly = 0.0f;

ConstVolumeView geometry_view(const StoredVolumeView& v) {
  if (v.data == nullptr)
    throw InvalidArgument("the input volume has no data");
  if (!std::isfinite(v.scale) || !std::isfinite(v.offset))
    throw InvalidArgument("the input volume's scale or offset is not finite");
  return {v.dims, v.extent, v.stride, v.spacing, &kGeometryOnly};
}

void check_stored_no_overlap(const StoredVolumeView& in, const VolumeView& out) {
  if (detail::spans_overlap(detail::byte_span(in, scalar_size(in.type)), detail::byte_span(out)))
    throw InvalidArgument("input and output volumes overlap");
}

bool identity_float(const StoredVolumeView& v) {
  return v.type == ScalarType::Float32 && v.scale == 1.0 && v.offset == 0.0;
}

ConstVolumeView as_float_view(const StoredVolumeView& v) {
  ConstVolumeView f = geometry_view(v);
  f.data = reinterpret_cast<const float*>(v.data);
  return f;
}

// Runs a problem whose input geometry comes from `input` on the stored values: the GPU uploads and
// converts them on the device, the CPU converts them itself (cpu_backend.h says how).
template <typename Problem, typename CpuStoredRun, typename CudaStoredRun>
RunReport dispatch_stored(const StoredVolumeView& input, Problem problem, LinearWork work,
                          const Options& options, CpuStoredRun cpu, CudaStoredRun cuda) {
  const auto t0 = std::chrono::steady_clock::now();
  RunReport report;
  work.input_bytes_per_voxel = scalar_size(input.type);
  report.backend = choose_backend(problem.input, problem.output, work, input.data, options, report);
  if (report.backend == Backend::Cuda) {
    if (options.cuda_devices.size() > 1) {
      detail::check_gpus_there(options.cuda_devices);
      detail::run_in_gpu_slabs(
          problem, options.cuda_devices, options, report,
          [&](const Problem& slab, detail::RowRange rows, const Options& o, RunReport& r) {
            cuda(slab, detail::last_axis_rows(input, rows), o, r);
          });
    } else {
      cuda(problem, input, options, report);
    }
    report.notes.push_back(std::string("input uploaded as ") + to_string(input.type) +
                           " and converted to float32 on the GPU");
  } else {
    cpu(problem, input, options, report);
  }
  report.seconds_total = detail::seconds_since(t0);
  return report;
}

}  // namespace

RunReport filter_dense_stored(const StoredVolumeView& input, const DenseFilter& filter,
                              const VolumeView& output, const Options& options) {
  if (identity_float(input))
    return filter_dense(as_float_view(input), filter, output, options);
  std::vector<float> flipped;
  const detail::CorrelationProblem p =
      dense_problem(geometry_view(input), filter, output, options, flipped);
  check_stored_no_overlap(input, output);
  LinearWork work;
  work.taps_per_output = static_cast<double>(filter.tap_count());
  work.dense_4d = filter.dims == 4 && filter.extent[3] > 1;
  const detail::ConstantBorder terms = value_terms(p, options);
  return with_value_terms(dispatch_stored(input, p, work, options, cpu_backend::run_dense_stored,
                                          cuda_backend::run_dense_stored),
                          terms, output, options);
}

RunReport filter_separable_stored(const StoredVolumeView& input, const SeparableFilter& filter,
                                  const VolumeView& output, const Options& options) {
  if (identity_float(input))
    return filter_separable(as_float_view(input), filter, output, options);
  const detail::SeparableProblem p =
      separable_problem(geometry_view(input), filter, output, options);
  check_stored_no_overlap(input, output);
  const detail::ConstantBorder terms = value_terms(p, filter, options);
  return with_value_terms(
      dispatch_stored(input, p, separable_work(p), options, cpu_backend::run_separable_stored,
                      cuda_backend::run_separable_stored),
      terms, output, options);
}

}  // namespace ndconv
