// `ndconv smooth IN OUT`: Gaussian smoothing through the engine's separable path. Sigmas are
// given in mm (default) or voxels, one value or one per spatial axis; a 4D series is smoothed
// frame by frame (t skipped) unless --time-sigma asks for smoothing along time too.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "axis_values.h"
#include "cli_common.h"
#include "commands.h"
#include "filter_args.h"
#include "io/image.h"
#include "progress.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "ndconv/gaussian.h"
#include "ndconv/stored.h"

namespace ndconv::cli {

namespace {

struct SmoothArgs {
  std::vector<std::string> files;  ///< IN OUT, or the inputs of a batch
  BatchOptions batch;
  std::string in, out, sigma, fwhm, time_sigma, boundary = "replicate", method = "auto";
  double truncate = 4.0;
  CommonOptions common;
  OutputOptions output;
  MaskArgs mask;
};

// Sigma per axis in voxels, from the options and the input's header.
std::array<double, kMaxDims> sigma_voxels(const SmoothArgs& a, const io::ImageInfo& info) {
  const auto& g = info.geometry;
  const int spatial = g.dims == 4 ? 3 : g.dims;
  const bool fwhm = !a.fwhm.empty();
  const std::string option = fwhm ? "--fwhm" : "--sigma";
  const AxisValues v = parse_axis_values(fwhm ? a.fwhm : a.sigma, option);
  const std::vector<double> per_axis = expand_to_axes(v, spatial, option, info.path);
  std::array<double, kMaxDims> s{0, 0, 0, 0};
  for (int ax = 0; ax < spatial; ++ax) {
    double value = fwhm ? fwhm_to_sigma(per_axis[ax]) : per_axis[ax];
    if (v.unit == LengthUnit::Millimetre) {
      const double sp = std::abs(g.spacing[ax]);
      if (!(sp > 0))
        throw Error(info.path + ": the spacing along axis " + std::to_string(ax) +
                    " is 0; give the sigma in voxels (e.g. 2vox)");
      value /= sp;
    }
    s[ax] = value;
  }
  if (v.unit == LengthUnit::Millimetre && !v.unit_given)
    warn_if_spatial_unit_unknown(info);
  if (!a.time_sigma.empty()) {
    if (g.dims != 4) {
      throw UsageError("--time-sigma: " + info.path + " is " + std::to_string(g.dims) +
                       "D; only a 4D series has a time axis");
    }
    const TimeValue t = parse_time_value(a.time_sigma, "--time-sigma");
    double frames = t.value;
    if (t.seconds)
      frames = t.value / time_step_seconds(info, "--time-sigma");
    s[3] = frames;
  }
  return s;
}

void run_smooth(const SmoothArgs& a) {
  if (a.sigma.empty() == a.fwhm.empty())
    throw UsageError("smooth: give one of --sigma or --fwhm");
  // Validate the values before touching any file, then again against the header.
  parse_axis_values(a.fwhm.empty() ? a.sigma : a.fwhm, a.fwhm.empty() ? "--sigma" : "--fwhm");
  if (!a.time_sigma.empty())
    parse_time_value(a.time_sigma, "--time-sigma");
  const MaskedOptions masked = masked_options(a.mask);

  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const auto sigma = sigma_voxels(a, plan.input);
  const int dims = plan.input.geometry.dims;
  // auto: the recursive filter past the exact one's taps, up to sigmas wider than any image (those
  // get the exact filter's limit message).
  bool within_recursive = true;
  for (double v : sigma)
    within_recursive = within_recursive && v <= kMaxRecursiveSigma;
  const bool recursive = a.method == "recursive" || (a.method == "auto" && within_recursive &&
                                                     recursive_gaussian_needed(sigma, a.truncate));
  SeparableFilter filter;
  if (!recursive) {
    try {
      check_gaussian_width(sigma, dims, a.truncate, a.fwhm.empty() ? "--sigma" : "--fwhm");
    } catch (const UsageError& e) {
      throw UsageError(std::string(e.what()) +
                       (a.method == "exact" ? "; --method recursive takes any sigma" : ""));
    }
    try {
      filter = gaussian_filter(dims, sigma, a.truncate);
    } catch (const InvalidArgument& e) {
      throw UsageError(std::string("smooth: ") + e.what() +
                       (a.method == "exact" ? " (--method recursive takes any sigma)" : ""));
    }
    warn_if_one_tap(sigma, dims, a.truncate, "smooth");
  } else {
    for (int ax = 0; ax < dims; ++ax) {
      if (!(sigma[ax] <= kMaxRecursiveSigma)) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "smooth: sigma %.4g voxels along axis %d is beyond %g voxels, wider than "
                      "any image",
                      sigma[ax], ax, kMaxRecursiveSigma);
        throw UsageError(text);
      }
      if (sigma[ax] > 0 && sigma[ax] < kMinRecursiveSigma) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "smooth: the recursive Gaussian needs sigma >= %g voxels, got %g along "
                      "axis %d; use --method exact",
                      kMinRecursiveSigma, sigma[ax], ax);
        throw UsageError(text);
      }
    }
    if (a.method == "auto")
      explain(a.common, "sigma beyond the exact filter's " + std::to_string(kMaxSeparableExtent) +
                            " taps: the recursive (IIR) Gaussian, about 1% from the exact one");
  }
  if (a.common.verbose) {
    for (int ax = 0; ax < dims; ++ax) {
      if (recursive)
        print_line("plan: axis %d: sigma %.4g %s, recursive", ax, sigma[ax],
                   ax == 3 ? "frames" : "voxels");
      else
        print_line("plan: axis %d: sigma %.4g %s, %zu taps", ax, sigma[ax],
                   ax == 3 ? "frames" : "voxels", filter.taps[ax].size());
    }
  }
  std::vector<float> mask;
  if (!a.mask.path.empty())
    mask = read_mask(a.mask, plan.input);

  int passes = 0;
  for (int ax = 0; ax < dims; ++ax)
    passes += filter.taps[ax].empty() ? 0 : 1;
  // The CPU path keeps up to two float32 intermediates between its passes.
  check_memory_plan(a.in, a.out, plan, plan.input.geometry.extent, std::clamp(passes - 1, 0, 2),
                    a.common);
  // The exact filter without a mask or preview takes the stored type on either backend: a GPU
  // uploads it as it is, the CPU converts it slab by slab in its passes.
  FilterRequest request = filter_request(plan, a.common);
  request.kind = FilterKind::Separable;
  for (int ax = 0; ax < dims; ++ax)
    request.filter_extent[ax] = std::max<int64_t>(1, static_cast<int64_t>(filter.taps[ax].size()));
  const bool stored = !recursive && mask.empty() && a.output.preview.empty();
  if (stored)
    request.input_bytes_per_voxel = io::component_bytes(plan.input.component_type);
  gpu_may_win(request, !recursive && mask.empty(), a.common);  // starts CUDA where it may win

  if (recursive)
    request.kind = FilterKind::RecursiveGaussian;
  const double filter_seconds = print_plan_before_work(request, a.common);
  Progress progress(
      a.common, "smooth",
      estimate_stage_seconds(plan, a.out, a.output, a.common.threads, filter_seconds));
  double seconds_read = 0;
  const FilterInput input = read_filter_input(a.in, progress, seconds_read, stored, a.common);

  Options options = engine_options(a.common);
  options.operation = Operation::Correlation;  // symmetric taps: the same either way
  options.boundary = parse_boundary(a.boundary);
  Index filter_extent{1, 1, 1, 1};
  for (int ax = 0; ax < dims; ++ax)
    filter_extent[ax] = filter.taps[ax].empty() ? 1 : static_cast<int64_t>(filter.taps[ax].size());
  const OutputGeometry g = output_geometry(dims, input.image.info.geometry.extent, filter_extent,
                                           options.operation, OutputRegion::Same);
  filter_and_write(
      progress, input, g, options,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        const VolumeFilter gaussian = [&](const ConstVolumeView& i, const VolumeView& v,
                                          const Options& opt) {
          return recursive ? recursive_gaussian(i, v, sigma, opt)
                           : filter_separable(i, filter, v, opt);
        };
        if (mask.empty())
          return gaussian(in, out, o);
        const ConstVolumeView m =
            make_view(static_cast<const float*>(mask.data()), in.dims, in.extent);
        return masked_filter(in, m, out, masked, o, gaussian);
      },
      [&](const StoredVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_separable_stored(in, filter, out, o);
      },
      a.out, plan, a.common, a.output, seconds_read);
}

}  // namespace

void add_smooth_command(CLI::App& app) {
  auto a = std::make_shared<SmoothArgs>();
  CLI::App* sub = app.add_subcommand(
      "smooth",
      "Gaussian smoothing (separable). 4D series: each 3D frame on its own unless --time-sigma.");
  sub->add_option("FILES", a->files,
                  "IN OUT: input image (NIfTI, MetaImage, NRRD, DICOM folder or @LIST, PNG, "
                  "JPEG, TIFF, BMP; 2D/3D/4D) and output image (the format follows the "
                  "extension); with -o DIR: IN...");
  add_batch_options(*sub, a->batch);
  auto* sigma = sub->add_option("--sigma", a->sigma,
                                "standard deviation: one value or one per axis (1x1x2), unit mm "
                                "(default) or vox, e.g. 1.5, 2vox, 1x1x2mm");
  auto* fwhm = sub->add_option("--fwhm", a->fwhm,
                               "full width at half maximum instead of --sigma, same syntax");
  sigma->excludes(fwhm);
  sub->add_option("--time-sigma", a->time_sigma,
                  "4D only: also smooth along time; frames (2) or seconds (0.5s)");
  add_truncate_option(*sub, a->truncate);
  add_boundary_option(*sub, a->boundary);
  sub->add_option("--method", a->method,
                  "auto: exact up to sigma x truncate = 511 voxels, recursive beyond; exact: the "
                  "sampled Gaussian (at most 1023 taps); recursive: IIR (Young-van Vliet), any "
                  "sigma >= 0.5 voxels at a constant cost, about 1% from the exact Gaussian")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "exact", "recursive"}));
  add_mask_options(*sub, a->mask);
  add_input_options(*sub);
  add_output_options(*sub, a->output);
  add_common_options(*sub, a->common);
  sub->callback([a] { run_jobs_of(a->files, *a, run_smooth); });
}

}  // namespace ndconv::cli
