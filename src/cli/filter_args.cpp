#include "filter_args.h"

#include "progress.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <set>

#include "axis_values.h"
#include "number_options.h"
#include "ndconv/engine.h"

namespace ndconv::cli {

void add_input_output_args(CLI::App& sub, FilterArgs& a, const std::string& what) {
  sub.add_option("FILES", a.files,
                 std::string("IN OUT: ") + kInputHelp + "; " + what +
                     " (the format follows the extension). With -o DIR: IN... (a batch)");
  add_batch_options(sub, a.batch);
}

void add_boundary_and_common_args(CLI::App& sub, FilterArgs& a) {
  add_boundary_option(sub, a.boundary);
  add_input_options(sub);
  add_output_options(sub, a.output);
  add_common_options(sub, a.common);
}

void add_filter_args(CLI::App& sub, FilterArgs& a, const std::string& what) {
  add_input_output_args(sub, a, what);
  add_boundary_and_common_args(sub, a);
}

CLI::App* add_filter_command(CLI::App& app, const std::string& name, const std::string& description,
                             FilterArgs& a, const std::function<void()>& run) {
  CLI::App* sub = app.add_subcommand(name, description);
  add_filter_args(*sub, a, "output image");
  sub->callback(run);
  return sub;
}

std::array<double, kMaxDims> lengths_in_voxels(const std::string& text, const std::string& option,
                                               const io::ImageInfo& info) {
  const io::Geometry& g = info.geometry;
  const int spatial = spatial_axes(g.dims);
  const AxisValues v = parse_axis_values(text, option);
  const std::vector<double> per_axis = expand_to_axes(v, spatial, option, info.path);
  std::array<double, kMaxDims> out{0, 0, 0, 0};
  for (int ax = 0; ax < spatial; ++ax) {
    out[ax] = per_axis[ax];
    if (v.unit == LengthUnit::Millimetre) {
      const double h = std::abs(g.spacing[ax]);
      if (!(h > 0))
        throw Error(info.path + ": the spacing along axis " + std::to_string(ax) + " is 0; give " +
                    option + " in voxels (e.g. 2vox)");
      out[ax] /= h;
    }
  }
  if (v.unit == LengthUnit::Millimetre && !v.unit_given)
    warn_if_spatial_unit_unknown(info);
  return out;
}

namespace {

// Once per input, whichever options ask.
bool first_time(const std::string& path) {
  static std::set<std::string> warned;
  return warned.insert(path).second;
}

}  // namespace

void warn_if_spatial_unit_unknown(const io::ImageInfo& info) {
  if (info.spatial_unit_unknown.empty() || !first_time(info.path))
    return;
  const io::Geometry& g = info.geometry;
  std::string spacing;
  char value[32];
  for (int ax = 0; ax < spatial_axes(g.dims); ++ax) {
    std::snprintf(value, sizeof value, "%s%g", ax ? " x " : "", g.spacing[ax]);
    spacing += value;
  }
  warn(info.path + ": spatial units unknown (" + info.spatial_unit_unknown + "); spacing " +
       spacing + " read as millimetres (lengths in voxels, e.g. 2vox, need no unit)");
}

std::string time_unit_unknown(const io::ImageInfo& info) {
  if (!info.time_unit_unknown.empty())
    return info.time_unit_unknown;
  if (info.format == "MetaImageIO")
    return "a MetaImage header states no time unit";
  return {};
}

double time_step_seconds(const io::ImageInfo& info, const std::string& option) {
  const double step = std::abs(info.geometry.spacing[3]);
  if (!(step > 0))
    throw Error(info.path + ": the time step is 0; give " + option + " in frames");
  const std::string unknown = time_unit_unknown(info);
  if (!unknown.empty()) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", step);
    throw Error(info.path + ": the time unit is unknown (" + unknown + ", time step " + text +
                " in no stated unit); give " + option + " in frames");
  }
  return step;
}

void check_gaussian_width(const std::array<double, kMaxDims>& sigma, int dims, double truncate,
                          const std::string& option) {
  const double max_radius = (static_cast<double>(kMaxSeparableExtent) - 1) / 2 + 0.5;
  for (int ax = 0; ax < dims; ++ax) {
    if (std::isfinite(sigma[ax]) && sigma[ax] * truncate < max_radius)
      continue;
    char text[300];
    std::snprintf(text, sizeof text,
                  "%s: %.4g voxels along axis %d, truncated at %.4g sigmas, needs a filter wider "
                  "than the limit of %lld taps (sigma times --truncate must stay under %.1f "
                  "voxels)",
                  ax == 3 ? "--time-sigma" : option.c_str(), sigma[ax], ax, truncate,
                  static_cast<long long>(kMaxSeparableExtent), max_radius);
    throw UsageError(text);
  }
}

void warn_if_one_tap(const std::array<double, kMaxDims>& sigma, int dims, double truncate,
                     const std::string& option) {
  static const char* names[] = {"x", "y", "z", "t"};
  for (int ax = 0; ax < dims; ++ax) {
    if (sigma[ax] > 0 && std::floor(truncate * sigma[ax] + 0.5) < 1) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "%s: sigma %.3g %s along %s is a single tap (radius %g x %.3g < 0.5); "
                    "nothing is smoothed along that axis",
                    option.c_str(), sigma[ax], ax == 3 ? "frames" : "voxels", names[ax], truncate,
                    sigma[ax]);
      warn(text);
    }
  }
}

void add_truncate_option(CLI::App& sub, double& truncate) {
  sub.add_option("--truncate", truncate, "filter radius in standard deviations")
      ->capture_default_str()
      ->check(number_in({0, kMaxTruncate, true}));
}

void add_mask_options(CLI::App& sub, MaskArgs& m) {
  sub.add_option("--mask", m.path,
                 "normalized convolution inside a mask (non-zero voxels): the image times the "
                 "mask and the mask are filtered and divided, so values outside do not leak in");
  sub.add_option("--outside", m.outside,
                 "with --mask: the value written outside the mask, a number or 'input' (keep the "
                 "input's value)")
      ->capture_default_str();
}

MaskedOptions masked_options(const MaskArgs& m) {
  MaskedOptions o;
  if (m.outside == "input") {
    o.keep_input_outside = true;
    return o;
  }
  const std::string error = number_error(m.outside, {});
  if (!error.empty())
    throw UsageError("--outside " + m.outside + ": expected a number or 'input' (" + error + ")");
  double v = 0;
  parse_number(m.outside, v);
  o.outside_value = static_cast<float>(v);
  return o;
}

std::vector<float> read_mask(const MaskArgs& m, const io::ImageInfo& input) {
  const io::ImageInfo info = io::read_info(m.path);
  const io::Geometry &mg = info.geometry, &ig = input.geometry;
  if (info.components != 1)
    throw Error(m.path + ": the mask has " + std::to_string(info.components) +
                "-component pixels; a mask must be scalar");
  const bool per_frame = ig.dims == 4 && mg.dims == 3;
  bool same = mg.dims == ig.dims || per_frame;
  for (int a = 0; same && a < mg.dims; ++a)
    same = mg.extent[a] == ig.extent[a];
  if (!same) {
    auto shape = [](const io::Geometry& g) {
      std::string s;
      for (int a = 0; a < g.dims; ++a)
        s += (a ? "x" : "") + std::to_string(g.extent[a]);
      return s;
    };
    throw Error(m.path + ": the mask is " + shape(mg) + " but " + input.path + " is " + shape(ig) +
                "; the mask needs the image's extents" + (ig.dims == 4 ? " (or its frame's)" : ""));
  }
  io::Image mask = io::read_image(m.path);
  std::vector<float> plane = std::move(mask.planes[0]);
  if (per_frame) {
    const size_t frame = plane.size();
    plane.resize(frame * static_cast<size_t>(ig.extent[3]));
    for (int64_t t = 1; t < ig.extent[3]; ++t)
      std::copy(plane.begin(), plane.begin() + frame, plane.begin() + frame * t);
  }
  return plane;
}

void read_filter_write(const std::string& label, const FilterArgs& a, const Plan& plan,
                       const PlaneFilter& filter, double filter_seconds, bool backend_planned) {
  Progress progress(
      a.common, label,
      estimate_stage_seconds(plan, a.out, a.output, a.common.threads, filter_seconds));
  double seconds_read = 0;
  const io::Image input = read_input(a.in, progress, seconds_read);
  Options options = engine_options(a.common);
  options.boundary = parse_boundary(a.boundary);
  OutputGeometry g;
  g.dims = plan.input.geometry.dims;
  g.extent = input.info.geometry.extent;
  filter_and_write(progress, input, g, options, filter, a.out, plan, a.common, a.output,
                   seconds_read, backend_planned);
}

void filter_same_shape(const std::string& label, const FilterArgs& a, const Plan& plan,
                       double filter_copies, const PlaneFilter& filter, double filter_seconds,
                       bool backend_planned) {
  check_memory_plan(a.in, a.out, plan, plan.input.geometry.extent, filter_copies, a.common);
  read_filter_write(label, a, plan, filter, filter_seconds, backend_planned);
}

}  // namespace ndconv::cli
