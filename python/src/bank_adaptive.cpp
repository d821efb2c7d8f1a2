// Bindings of ndconv's own filters: the filter bank and the orientation-adaptive filter.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "calls.h"
#include "ndconv/adaptive.h"
#include "ndconv/errors.h"

namespace ndconv::python {

namespace {

/// One input float32 host view for the bank and the adaptive filter (the package converts).
ConstVolumeView host_float_input(const InArray& input) {
  if (placement_of(input).on_gpu)
    throw nb::value_error("internal: the bank and the adaptive filter take host arrays");
  return float_view_of(input);
}

/// The bank's taps: float32, C order, on the host, shape (filters, *filter shape).
using BankTaps = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

nb::dict filter_bank_call(const InArray& input, const BankTaps& taps, std::vector<OutArray> outputs,
                          const CallSettings& settings) {
  const ConstVolumeView in = host_float_input(input);
  if (taps.ndim() != input.ndim() + 1)
    throw nb::value_error("internal: the bank's taps have one axis more than the input");
  FilterBank bank;
  bank.dims = in.dims;
  bank.count = static_cast<int>(taps.shape(0));
  const std::size_t n = input.ndim();
  for (std::size_t axis = 0; axis < n; ++axis)
    bank.extent[n - 1 - axis] = static_cast<int64_t>(taps.shape(axis + 1));
  bank.taps = taps.data();
  if (outputs.size() != static_cast<std::size_t>(bank.count))
    throw nb::value_error("internal: one output per filter is expected");
  std::vector<VolumeView> out;
  for (const OutArray& o : outputs)
    out.push_back(output_view_of(o, stored_view(in)));
  Options options = options_of(settings, placement_of(input));
  RunReport report;
  run_released(options, [&] { report = filter_bank(in, bank, out, options); });
  return report_dict(report);
}

// The parameters of a preset with the package's overrides and the engine's own settings.
AdaptiveParameters adaptive_parameters(const std::string& preset, const nb::dict& overrides,
                                       bool time_as_axis, bool coarse_orientation) {
  AdaptiveParameters p;
  try {
    p = adaptive_preset(parse_adaptive_preset(preset));
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
  for (auto [key, value] : overrides) {
    const std::string name = nb::cast<std::string>(key);
    if (value.is_none())
      continue;
    if (name == "smoothing")
      p.reconstruction.lowpass_sigma = nb::cast<double>(value);
    else if (name == "relaxation")
      p.relaxation_sigma = nb::cast<double>(value);
    else if (name == "threshold")
      p.magnitude_sigma = nb::cast<double>(value);
    else if (name == "anisotropy")
      p.eigen_alpha = nb::cast<double>(value);
    else if (name == "blend")
      p.blend = nb::cast<double>(value);
    else if (name == "quadrature_size")
      p.quadrature.size = nb::cast<int>(value);
    else if (name == "reconstruction_size")
      p.reconstruction.size = nb::cast<int>(value);
    else
      throw nb::value_error(("unknown adaptive parameter '" + name + "'").c_str());
  }
  p.time_as_axis = time_as_axis;
  p.orientation_downsampling = coarse_orientation ? 2 : 1;
  try {
    validate_adaptive_parameters(p);
  } catch (const InvalidArgument& e) {
    throw nb::value_error(e.what());
  }
  return p;
}

// The normalisation scale (negative: computed) and box (numpy's axis order, slowest first; empty:
// the whole volume) into the parameters, in the engine's axis order.
void set_normalisation(AdaptiveParameters& p, double scale, const std::vector<int64_t>& start,
                       const std::vector<int64_t>& extent) {
  if (scale >= 0)
    p.normalisation_scale = scale;
  const size_t n = start.size();
  if (extent.size() != n || n > static_cast<size_t>(kMaxDims))
    throw nb::value_error("internal: the normalisation box needs a start and an extent per axis");
  for (size_t a = 0; a < n; ++a) {
    p.normalisation_start[n - 1 - a] = start[a];
    p.normalisation_extent[n - 1 - a] = extent[a];
  }
}

nb::dict adaptive_call(const InArray& input, const OutArray& output, const std::string& preset,
                       const nb::dict& overrides, bool time_as_axis, bool coarse_orientation,
                       const CallSettings& settings, double scale) {
  const ConstVolumeView in = host_float_input(input);
  const VolumeView out = output_view_of(output, stored_view(in));
  AdaptiveParameters p = adaptive_parameters(preset, overrides, time_as_axis, coarse_orientation);
  set_normalisation(p, scale, {}, {});
  Options options = options_of(settings, placement_of(input));
  AdaptiveReport report;
  run_released(options, [&] { report = adaptive_filter(in, out, p, options); });
  nb::dict d = report_dict(report.bank);
  d["seconds_total"] = report.seconds_total;
  nb::list stages;
  for (const auto& [stage, seconds] : report.stage_seconds)
    stages.append(nb::make_tuple(stage, seconds));
  d["stage_seconds"] = stages;
  nb::list scales;
  for (double s : report.normalisation_scales)
    scales.append(s);
  d["normalisation_scales"] = scales;
  return d;
}

std::vector<double> adaptive_scales_call(const InArray& input, const std::string& preset,
                                         const nb::dict& overrides, bool time_as_axis,
                                         bool coarse_orientation, const CallSettings& settings,
                                         const std::vector<int64_t>& start,
                                         const std::vector<int64_t>& extent) {
  const ConstVolumeView in = host_float_input(input);
  AdaptiveParameters p = adaptive_parameters(preset, overrides, time_as_axis, coarse_orientation);
  set_normalisation(p, -1.0, start, extent);
  Options options = options_of(settings, placement_of(input));
  std::vector<double> scales;
  run_released(options, [&] { scales = adaptive_normalisation_scales(in, p, options); });
  return scales;
}

std::pair<int64_t, int64_t> adaptive_reach_call(const std::string& preset,
                                                const nb::dict& overrides) {
  const AdaptiveReach r = adaptive_reach(adaptive_parameters(preset, overrides, true, false));
  return {r.structure_tensor, r.output};
}

}  // namespace

void bind_bank_adaptive(nb::module_& m) {
  m.def("filter_bank", &filter_bank_call, nb::arg("input"), nb::arg("taps"), nb::arg("outputs"),
        nb::arg("settings"));
  m.def("adaptive", &adaptive_call, nb::arg("input"), nb::arg("output"), nb::arg("preset"),
        nb::arg("overrides"), nb::arg("time_as_axis"), nb::arg("coarse_orientation"),
        nb::arg("settings"), nb::arg("scale") = -1.0);
  m.def("adaptive_scales", &adaptive_scales_call, nb::arg("input"), nb::arg("preset"),
        nb::arg("overrides"), nb::arg("time_as_axis"), nb::arg("coarse_orientation"),
        nb::arg("settings"), nb::arg("start"), nb::arg("extent"));
  m.def("adaptive_reach", &adaptive_reach_call, nb::arg("preset"), nb::arg("overrides"));
}

}  // namespace ndconv::python
