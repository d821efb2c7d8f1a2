// The filter subcommands on the engine: mean (box or ellipsoid), median, gradient (magnitude),
// laplacian (LoG), derivative (Gaussian derivatives of order 0-2 per axis) and unsharp. Each
// writes an image of the input's shape; a 4D series is filtered frame by frame.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>

#include "axis_values.h"
#include "commands.h"
#include "filter_args.h"
#include "number_options.h"
#include "ndconv/gaussian.h"

namespace ndconv::cli {

namespace {

std::string describe(const std::array<double, kMaxDims>& v, int axes) {
  std::string s;
  char buf[32];
  for (int a = 0; a < axes; ++a) {
    std::snprintf(buf, sizeof buf, "%s%.4g", a ? "x" : "", v[a]);
    s += buf;
  }
  return s;
}

// ---- mean -------------------------------------------------------------------------------------

constexpr char kMeanHelp[] =
    "Mean over a box (separable; fslmaths -kernel box W -fmean) or an ellipsoid (dense; "
    "-kernel sphere R -fmean).";

struct MeanArgs : FilterArgs {
  std::string box, sphere;
  MaskArgs mask;
};

void run_mean(const MeanArgs& a) {
  if (a.box.empty() == a.sphere.empty())
    throw UsageError("mean: give one of --box or --sphere");
  const MaskedOptions masked = masked_options(a.mask);
  parse_axis_values(a.box.empty() ? a.sphere : a.box, a.box.empty() ? "--sphere" : "--box");
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const int dims = plan.input.geometry.dims;
  const int spatial = spatial_axes(dims);
  SeparableFilter box;
  Kernel sphere;
  if (!a.box.empty()) {
    const auto width = lengths_in_voxels(a.box, "--box", plan.input);
    Index extent{1, 1, 1, 1};
    for (int ax = 0; ax < spatial; ++ax) {
      // The nearest odd number of voxels, so that the box is centred on the voxel.
      const double odd = 2 * std::floor(std::max(width[ax] - 1, 0.0) / 2 + 0.5) + 1;
      if (!(odd <= static_cast<double>(kMaxSeparableExtent))) {
        char text[64];
        std::snprintf(text, sizeof text, "%.4g", odd);
        throw UsageError("--box " + a.box + ": " + text + " voxels along axis " +
                         std::to_string(ax) + "; the limit is " +
                         std::to_string(kMaxSeparableExtent));
      }
      extent[ax] = static_cast<int64_t>(odd);
    }
    bool any = false;
    for (int ax = 0; ax < spatial; ++ax)
      any = any || extent[ax] > 1;
    if (!any)
      warn("--box " + a.box + " is one voxel wide along every axis; the output is the input");
    box = box_filter(dims, extent);
    explain(a.common,
            "mean over a box of " +
                describe({double(extent[0]), double(extent[1]), double(extent[2]), 1}, spatial) +
                " voxels");
  } else {
    const auto radius = lengths_in_voxels(a.sphere, "--sphere", plan.input);
    const int64_t limit = (dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D) / 2;
    for (int ax = 0; ax < spatial; ++ax) {
      if (!(radius[ax] < static_cast<double>(limit + 1))) {
        char text[64];
        std::snprintf(text, sizeof text, "%.4g", radius[ax]);
        throw UsageError("--sphere " + a.sphere + ": a radius of " + text + " voxels along axis " +
                         std::to_string(ax) + "; at most " + std::to_string(limit) + " voxels in " +
                         std::to_string(dims) + "D");
      }
    }
    try {
      sphere = ellipsoid_mean_kernel(dims, radius);
    } catch (const InvalidArgument& e) {
      throw UsageError(std::string("--sphere ") + a.sphere + ": " + e.what());
    }
    int64_t inside = 0;
    for (float t : sphere.taps)
      inside += t != 0;
    if (inside == 1)
      warn("--sphere " + a.sphere + " holds only the centre voxel; the output is the input");
    explain(a.common, "mean over an ellipsoid of " + std::to_string(inside) + " voxels in a " +
                          describe({double(sphere.extent[0]), double(sphere.extent[1]),
                                    double(sphere.extent[2]), 1},
                                   spatial) +
                          " box");
  }
  std::vector<float> mask;
  if (!a.mask.path.empty())
    mask = read_mask(a.mask, plan.input);
  const DenseFilter dense = sphere.filter();
  // Scratch: the separable passes' intermediates; with a mask, its plane and four volumes more.
  filter_same_shape("mean", a, plan, mask.empty() ? 2 : 7,
                    [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
                      if (!mask.empty()) {
                        const ConstVolumeView m =
                            make_view(static_cast<const float*>(mask.data()), in.dims, in.extent);
                        return a.box.empty() ? masked_filter_dense(in, m, dense, out, masked, o)
                                             : masked_filter_separable(in, m, box, out, masked, o);
                      }
                      return a.box.empty() ? filter_dense(in, dense, out, o)
                                           : filter_separable(in, box, out, o);
                    });
}

// ---- median -----------------------------------------------------------------------------------

constexpr char kMedianHelp[] =
    "Median over a box of 2r+1 voxels per axis (fslmaths -fmedian, mrfilter median); the speckle "
    "filter. GPU for every 2D and 3D window and 4D ones up to radius 4, else the CPU.";

struct MedianArgs : FilterArgs {
  std::string radius = "1";
};

Index median_radius(const std::string& text, int dims) {
  const AxisValues v = parse_axis_values(text, "--radius");
  if (v.unit == LengthUnit::Millimetre && text.find("mm") != std::string::npos)
    throw UsageError("--radius " + text + ": the median radius is in voxels");
  const std::vector<double> r = expand_to_axes(v, spatial_axes(dims), "--radius", "the image");
  Index radius{0, 0, 0, 0};
  for (size_t ax = 0; ax < r.size(); ++ax) {
    if (r[ax] != std::floor(r[ax]) || r[ax] > static_cast<double>(kMaxMedianRadius))
      throw UsageError("--radius " + text + ": whole numbers of voxels from 0 to " +
                       std::to_string(kMaxMedianRadius));
    radius[ax] = static_cast<int64_t>(r[ax]);
  }
  return radius;
}

void run_median(const MedianArgs& a) {
  parse_axis_values(a.radius, "--radius");
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const Index radius = median_radius(a.radius, plan.input.geometry.dims);
  FilterRequest request = filter_request(plan, a.common);
  request.kind = FilterKind::Median;
  for (int ax = 0; ax < plan.input.geometry.dims; ++ax)
    request.filter_extent[ax] = 2 * radius[ax] + 1;
  const double seconds = print_plan_before_work(request, a.common);
  filter_same_shape(
      "median", a, plan, 0,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return median_filter(in, out, radius, o);
      },
      seconds, true);
}

// ---- gradient, laplacian, derivative ------------------------------------------------------------

constexpr char kGradientHelp[] =
    "Gradient magnitude at scale sigma, physical units (ITK "
    "GradientMagnitudeRecursiveGaussianImageFilter, mrfilter gradient -magnitude)";
constexpr char kLaplacianHelp[] =
    "Laplacian of Gaussian (LoG) at scale sigma, physical units "
    "(ITK LaplacianRecursiveGaussianImageFilter; sum of scipy gaussian_filter order 2)";
constexpr char kDerivativeHelp[] =
    "Gaussian derivative of order 0, 1 or 2 per spatial axis, physical units "
    "(scipy gaussian_filter(order=...) divided by spacing^order)";

struct GaussianArgs : FilterArgs {
  std::string sigma, orders;
  double truncate = 4.0;
};

std::array<double, kMaxDims> sigma_of(const GaussianArgs& a, const Plan& plan) {
  const auto sigma = lengths_in_voxels(a.sigma, "--sigma", plan.input);
  for (int ax = 0; ax < spatial_axes(plan.input.geometry.dims); ++ax) {
    if (!(sigma[ax] > 0))
      throw UsageError("--sigma " + a.sigma + ": derivatives need a sigma > 0 along every axis");
  }
  check_gaussian_width(sigma, plan.input.geometry.dims, a.truncate, "--sigma");
  warn_if_one_tap(sigma, plan.input.geometry.dims, a.truncate, "--sigma");
  return sigma;
}

void add_sigma_options(CLI::App& sub, GaussianArgs& a) {
  sub.add_option("--sigma", a.sigma,
                 "scale: one value or one per spatial axis, mm (default) or vox, e.g. 1.5, 2vox")
      ->required();
  add_truncate_option(sub, a.truncate);
}

void run_gradient(const GaussianArgs& a, bool laplacian) {
  parse_axis_values(a.sigma, "--sigma");
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const auto sigma = sigma_of(a, plan);
  // Scratch: one derivative, its passes' intermediates and a float64 sum.
  filter_same_shape(laplacian ? "laplacian" : "gradient", a, plan, 5,
                    [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
                      return laplacian ? laplacian_of_gaussian(in, out, sigma, o, a.truncate)
                                       : gradient_magnitude(in, out, sigma, o, a.truncate);
                    });
}

void run_derivative(const GaussianArgs& a) {
  parse_axis_values(a.sigma, "--sigma");
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const int dims = plan.input.geometry.dims;
  const auto sigma = sigma_of(a, plan);
  std::array<int, kMaxDims> orders{0, 0, 0, 0};
  size_t pos = 0, ax = 0;
  while (true) {
    const size_t x = a.orders.find('x', pos);
    const std::string part = a.orders.substr(pos, x == std::string::npos ? x : x - pos);
    if (part != "0" && part != "1" && part != "2")
      throw UsageError("--order " + a.orders + ": '" + part + "' is not 0, 1 or 2");
    if (ax >= static_cast<size_t>(spatial_axes(dims)))
      throw UsageError("--order " + a.orders + ": one order per spatial axis of " + a.in + " (" +
                       std::to_string(spatial_axes(dims)) + ")");
    orders[ax++] = part[0] - '0';
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  if (ax != static_cast<size_t>(spatial_axes(dims)))
    throw UsageError("--order " + a.orders + ": give one order per spatial axis of " + a.in + " (" +
                     std::to_string(spatial_axes(dims)) + "), e.g. 1x0x0");
  filter_same_shape(
      "derivative", a, plan, 2, [&](const ConstVolumeView& in, const VolumeView& out, Options o) {
        o.operation = Operation::Correlation;
        const SeparableFilter f =
            gaussian_derivative_filter(in.dims, sigma, orders, in.spacing, a.truncate);
        return filter_separable(in, f, out, o);
      });
}

// ---- unsharp ----------------------------------------------------------------------------------

constexpr char kUnsharpHelp[] =
    "Unsharp mask: out = in + amount (in - G*in) where |in - G*in| > threshold "
    "(ITK UnsharpMaskImageFilter)";

// The unsharp amount's range: beyond it a float32 image's differences overflow to Inf.
constexpr double kMaxUnsharpAmount = 100;

struct UnsharpArgs : GaussianArgs {
  double amount = 0.5, threshold = 0;
};

void run_unsharp(const UnsharpArgs& a) {
  parse_axis_values(a.sigma, "--sigma");
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  UnsharpParameters p;
  p.sigma_voxels = sigma_of(a, plan);
  p.amount = a.amount;
  p.threshold = a.threshold;
  p.truncate = a.truncate;
  if (a.amount == 0)
    warn("--amount 0: the output is the input");
  filter_same_shape("unsharp", a, plan, 3,
                    [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
                      return unsharp_mask(in, out, p, o);
                    });
}

// ---- registration ----------------------------------------------------------------------------

void add_mean(CLI::App& app) {
  auto a = std::make_shared<MeanArgs>();
  CLI::App* sub =
      add_filter_command(app, "mean", kMeanHelp, *a, [a] { run_jobs_of(a->files, *a, run_mean); });
  auto* box = sub->add_option("--box", a->box,
                              "box width per spatial axis, mm (default) or vox, e.g. 3vox, "
                              "5x5x3vox, 6mm; rounded to the nearest odd number of voxels");
  auto* sphere = sub->add_option("--sphere", a->sphere,
                                 "ellipsoid radius per spatial axis, mm (default) or vox, e.g. "
                                 "5mm, 2vox; at most 15 voxels (7 in 4D)");
  box->excludes(sphere);
  add_mask_options(*sub, a->mask);
}

void add_median(CLI::App& app) {
  auto a = std::make_shared<MedianArgs>();
  CLI::App* sub = add_filter_command(app, "median", kMedianHelp, *a,
                                     [a] { run_jobs_of(a->files, *a, run_median); });
  sub->add_option("--radius", a->radius,
                  "radius in voxels, one or one per spatial axis (1 = 3x3x3, 1x1x0 = 3x3 in each "
                  "slice), at most 7")
      ->capture_default_str();
}

void add_gradient(CLI::App& app, bool laplacian) {
  auto a = std::make_shared<GaussianArgs>();
  CLI::App* sub = add_filter_command(
      app, laplacian ? "laplacian" : "gradient", laplacian ? kLaplacianHelp : kGradientHelp, *a,
      [a, laplacian] {
        run_jobs_of(a->files, *a,
                    [laplacian](const GaussianArgs& one) { run_gradient(one, laplacian); });
      });
  add_sigma_options(*sub, *a);
}

void add_derivative(CLI::App& app) {
  auto a = std::make_shared<GaussianArgs>();
  CLI::App* sub = add_filter_command(app, "derivative", kDerivativeHelp, *a,
                                     [a] { run_jobs_of(a->files, *a, run_derivative); });
  add_sigma_options(*sub, *a);
  sub->add_option("--order", a->orders, "order per spatial axis, e.g. 1x0x0 (d/dx), 0x0x2")
      ->required();
}

void add_unsharp(CLI::App& app) {
  auto a = std::make_shared<UnsharpArgs>();
  CLI::App* sub = add_filter_command(app, "unsharp", kUnsharpHelp, *a,
                                     [a] { run_jobs_of(a->files, *a, run_unsharp); });
  add_sigma_options(*sub, *a);
  sub->add_option("--amount", a->amount, "strength of the sharpening (negative: blurs)")
      ->capture_default_str()
      ->check(number_in({-kMaxUnsharpAmount, kMaxUnsharpAmount}));
  sub->add_option("--threshold", a->threshold,
                  "leave voxels whose |in - G*in| is at most this (intensity units, >= 0)")
      ->capture_default_str()
      ->check(number_in({0, kMaxFloatValue}));
}

}  // namespace

void add_filter_commands(CLI::App& app) {
  add_mean(app);
  add_median(app);
  add_gradient(app, false);
  add_gradient(app, true);
  add_derivative(app);
  add_unsharp(app);
}

}  // namespace ndconv::cli
