// Bindings of the engine's linear filters, the median, the plan and the engine's facts. Each takes
// its input as it comes (any dtype the engine reads, strided, host or device) and writes a float32
// output array that the package allocated; the package casts to the caller's dtype.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "core/view_copy.h"
#include "calls.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "ndconv/plan.h"
#include "ndconv/stored.h"

namespace ndconv::python {

namespace {

/// A float32 host or device array of taps, C order, as a dense filter in engine order.
DenseFilter dense_filter_of(const InArray& weights, std::vector<float>& taps) {
  if (placement_of(weights).on_gpu || scalar_type_of(weights) != ScalarType::Float32)
    throw nb::type_error("internal: weights must be a float32 host array");
  const ConstVolumeView w = float_view_of(weights);
  DenseFilter f;
  f.dims = w.dims;
  f.extent = w.extent;
  taps.resize(static_cast<std::size_t>(w.voxel_count()));
  detail::gather(w, taps.data());
  f.taps = taps.data();
  return f;
}

/// Per-axis 1D taps given in Python's axis order (None or empty: the axis is not filtered).
SeparableFilter separable_filter_of(int dims, std::size_t ndim,
                                    const std::vector<std::vector<float>>& taps) {
  if (taps.size() != ndim)
    throw nb::value_error("internal: one list of taps per axis is expected");
  SeparableFilter f;
  f.dims = dims;
  for (std::size_t axis = 0; axis < ndim; ++axis)
    f.taps[ndim - 1 - axis] = taps[axis];
  return f;
}

// The array entries take host arrays; GPU arrays come through the device-address entries below.
void check_host(const InArray& input, const OutArray& output) {
  if (placement_of(input).on_gpu || placement_of(output).on_gpu)
    throw nb::value_error("internal: GPU arrays go through the device-address entries");
}

/// One radius per axis in Python's order, in engine order.
Index engine_radius(const std::vector<int64_t>& radius, std::size_t ndim) {
  if (radius.size() != ndim)
    throw nb::value_error("internal: one radius per axis is expected");
  Index r{0, 0, 0, 0};
  for (std::size_t axis = 0; axis < ndim; ++axis)
    r[ndim - 1 - axis] = radius[axis];
  return r;
}

nb::dict correlate(const InArray& input, const InArray& weights, const OutArray& output,
                   const CallSettings& settings) {
  check_host(input, output);
  std::vector<float> taps;
  const DenseFilter filter = dense_filter_of(weights, taps);
  Options options = options_of(settings, placement_of(input));
  const StoredVolumeView in = stored_view_of(input);
  const VolumeView out = output_view_of(output, in);
  RunReport report;
  run_released(options, [&] { report = filter_dense_stored(in, filter, out, options); });
  return report_dict(report);
}

nb::dict correlate_separable(const InArray& input, const std::vector<std::vector<float>>& taps,
                             const OutArray& output, const CallSettings& settings) {
  check_host(input, output);
  Options options = options_of(settings, placement_of(input));
  const SeparableFilter filter = separable_filter_of(engine_dims(input.ndim()), input.ndim(), taps);
  const StoredVolumeView in = stored_view_of(input);
  const VolumeView out = output_view_of(output, in);
  RunReport report;
  run_released(options, [&] { report = filter_separable_stored(in, filter, out, options); });
  return report_dict(report);
}

nb::dict median(const InArray& input, const std::vector<int64_t>& radius, const OutArray& output,
                const CallSettings& settings) {
  check_host(input, output);
  Options options = options_of(settings, placement_of(input));
  const ConstVolumeView in = float_view_of(input);
  const VolumeView out = output_view_of(output, stored_view(in));
  const Index r = engine_radius(radius, input.ndim());
  RunReport report;
  run_released(options, [&] { report = median_filter(in, out, r, options); });
  return report_dict(report);
}

/// A contiguous float32 array of `shape` (Python's order) at `address` in device memory, as an
/// engine view. The package's GPU fast path passes CuPy's `data.ptr` or torch's `data_ptr()` with
/// the shape it checked (contiguous float32 on the settings' device): for a small volume, DLPack's
/// import costs more than the kernels.
template <typename T>
BasicVolumeView<T> device_view(uintptr_t address, const std::vector<int64_t>& shape) {
  const int dims = engine_dims(shape.size());
  Index extent{1, 1, 1, 1};
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] < 1)
      throw nb::value_error("ndconv does not filter empty arrays (an axis of length 0)");
    extent[shape.size() - 1 - axis] = shape[axis];
  }
  return make_view(reinterpret_cast<T*>(address), dims, extent);
}

Options device_options(const CallSettings& settings, int device) {
  Placement where;
  where.on_gpu = true;
  where.device = device;
  return options_of(settings, where);
}

nb::object maybe_report(const CallSettings& settings, const RunReport& report) {
  return settings.want_report ? nb::object(report_dict(report)) : nb::none();
}

nb::object correlate_at(uintptr_t input, uintptr_t output, const std::vector<int64_t>& shape,
                        const InArray& weights, const CallSettings& settings, int device) {
  std::vector<float> taps;
  const DenseFilter filter = dense_filter_of(weights, taps);
  Options options = device_options(settings, device);
  const ConstVolumeView in = device_view<const float>(input, shape);
  const VolumeView out = device_view<float>(output, shape);
  RunReport report;
  run_released(options, [&] {
    report =
        filter_dense_device(in, filter, out, options, reinterpret_cast<void*>(settings.stream));
  });
  return maybe_report(settings, report);
}

nb::object correlate_separable_at(uintptr_t input, uintptr_t output,
                                  const std::vector<int64_t>& shape,
                                  const std::vector<std::vector<float>>& taps,
                                  const CallSettings& settings, int device) {
  Options options = device_options(settings, device);
  const ConstVolumeView in = device_view<const float>(input, shape);
  const VolumeView out = device_view<float>(output, shape);
  const SeparableFilter filter = separable_filter_of(in.dims, shape.size(), taps);
  RunReport report;
  run_released(options, [&] {
    report =
        filter_separable_device(in, filter, out, options, reinterpret_cast<void*>(settings.stream));
  });
  return maybe_report(settings, report);
}

nb::object median_at(uintptr_t input, uintptr_t output, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& radius, const CallSettings& settings, int device) {
  Options options = device_options(settings, device);
  const ConstVolumeView in = device_view<const float>(input, shape);
  const VolumeView out = device_view<float>(output, shape);
  const Index r = engine_radius(radius, shape.size());
  RunReport report;
  run_released(options, [&] {
    report = median_filter_device(in, out, r, options, reinterpret_cast<void*>(settings.stream));
  });
  return maybe_report(settings, report);
}

/// The engine's plan for a filter of `kind` over an input of `shape` (Python order).
nb::dict plan_of(const std::string& kind, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& filter_shape, int filters, std::size_t input_bytes,
                 const CallSettings& settings, bool on_gpu) {
  FilterRequest r;
  static const std::pair<const char*, FilterKind> kinds[] = {
      {"dense", FilterKind::Dense},
      {"separable", FilterKind::Separable},
      {"bank", FilterKind::Bank},
      {"median", FilterKind::Median},
      {"recursive_gaussian", FilterKind::RecursiveGaussian}};
  bool known = false;
  for (const auto& [name, value] : kinds)
    if (kind == name) {
      r.kind = value;
      known = true;
    }
  if (!known)
    throw nb::value_error(("unknown filter kind '" + kind + "'").c_str());
  r.dims = engine_dims(shape.size());
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    r.extent[shape.size() - 1 - axis] = shape[axis];
    if (axis < filter_shape.size())
      r.filter_extent[shape.size() - 1 - axis] = filter_shape[axis];
  }
  r.filters = filters;
  r.input_bytes_per_voxel = input_bytes;
  Placement where;
  where.on_gpu = on_gpu;
  r.options = options_of(settings, where);
  Plan p;
  try {
    p = plan(r);
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
  nb::dict d;
  d["backend"] = to_string(p.backend);
  d["backend_reason"] = p.backend_reason;
  d["method"] = p.method;
  d["kernel_family"] = p.kernel_family;
  d["outputs_per_thread"] = p.outputs_per_thread;
  d["outputs_per_thread_reason"] = p.outputs_per_thread_reason;
  d["device_bytes"] = p.device_bytes;
  d["estimated_cpu_seconds"] = p.estimated_cpu_seconds;
  d["estimated_gpu_seconds"] = p.estimated_gpu_seconds;
  d["text"] = p.text();
  return d;
}

nb::dict cuda_facts() {
  const CudaStatus s = cuda_status();
  nb::dict d;
  d["compiled"] = s.compiled;
  d["usable"] = s.usable;
  d["reason"] = s.reason;
  nb::list devices;
  for (const DeviceInfo& info : s.devices) {
    nb::dict dev;
    dev["index"] = info.index;
    dev["name"] = info.name;
    dev["compute_capability"] =
        nb::make_tuple(info.compute_capability_major, info.compute_capability_minor);
    dev["total_memory"] = info.total_memory;
    dev["free_memory"] = info.free_memory;
    devices.append(dev);
  }
  d["devices"] = devices;
  return d;
}

std::vector<float> derivative_taps(double sigma, int order, double truncate) {
  try {
    return gaussian_derivative_taps(sigma, order, truncate);
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
}

}  // namespace

void bind_filters(nb::module_& m) {
  nb::class_<CallSettings>(m, "CallSettings")
      .def(nb::init<>())
      .def_rw("boundary", &CallSettings::boundary)
      .def_rw("boundary_value", &CallSettings::boundary_value)
      .def_rw("device", &CallSettings::device)
      .def_rw("threads", &CallSettings::threads)
      .def_rw("stream", &CallSettings::stream)
      .def_rw("want_report", &CallSettings::want_report);
  m.def("correlate", &correlate, nb::arg("input"), nb::arg("weights"), nb::arg("output"),
        nb::arg("settings"));
  m.def("correlate_separable", &correlate_separable, nb::arg("input"), nb::arg("taps"),
        nb::arg("output"), nb::arg("settings"));
  m.def("median", &median, nb::arg("input"), nb::arg("radius"), nb::arg("output"),
        nb::arg("settings"));
  m.def("correlate_at", &correlate_at, nb::arg("input"), nb::arg("output"), nb::arg("shape"),
        nb::arg("weights"), nb::arg("settings"), nb::arg("device"));
  m.def("correlate_separable_at", &correlate_separable_at, nb::arg("input"), nb::arg("output"),
        nb::arg("shape"), nb::arg("taps"), nb::arg("settings"), nb::arg("device"));
  m.def("median_at", &median_at, nb::arg("input"), nb::arg("output"), nb::arg("shape"),
        nb::arg("radius"), nb::arg("settings"), nb::arg("device"));
  m.def("plan", &plan_of, nb::arg("kind"), nb::arg("shape"), nb::arg("filter_shape"),
        nb::arg("filters"), nb::arg("input_bytes"), nb::arg("settings"), nb::arg("on_gpu"));
  m.def("cuda_status", &cuda_facts);
  m.def("cuda_built", [] { return cuda_built(); });
  m.def("version", [] { return std::string(version()); });
  m.def("gaussian_derivative_taps", &derivative_taps, nb::arg("sigma"), nb::arg("order"),
        nb::arg("truncate"));
}

}  // namespace ndconv::python
