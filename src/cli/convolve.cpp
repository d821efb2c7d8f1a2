// `ndconv convolve IN KERNEL OUT`: dense convolution (or correlation) with a kernel image. The
// kernel has the image's dimension; a 3D kernel on a 4D series filters each frame, which is the
// dense 4D filter of extent 1 along t.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "io/image.h"
#include "progress.h"
#include "ndconv/engine.h"
#include "ndconv/filters.h"
#include "ndconv/stored.h"

namespace ndconv::cli {

namespace {

constexpr char kConvolveHelp[] =
    "Convolve with a kernel image (dense filter). A 3D kernel on 4D filters each frame.";

struct ConvolveArgs {
  std::vector<std::string> files;  ///< IN KERNEL OUT, or the inputs and then KERNEL of a batch
  BatchOptions batch;
  std::string in, kernel, out, spec, boundary = "replicate", region = "same";
  bool correlate = false, normalize = false;
  CommonOptions common;
  OutputOptions output;
};

// Reads the kernel file into the engine's dense filter for an image of `dims`; returns the taps.
std::vector<float> read_kernel_file(const ConvolveArgs& a, int dims, DenseFilter& filter) {
  const io::ImageInfo info = io::read_info(a.kernel);
  const int kd = info.geometry.dims;
  if (info.components != 1) {
    throw Error(a.kernel + ": the kernel has " + std::to_string(info.components) +
                "-component pixels; a kernel must be scalar");
  }
  if (kd != dims && !(dims == 4 && kd == 3)) {
    throw Error(a.kernel + ": the kernel is " + std::to_string(kd) + "D but " + a.in + " is " +
                std::to_string(dims) + "D; the kernel needs the image's dimension" +
                (dims == 4 ? " (or 3D to filter each frame)" : ""));
  }
  filter.dims = dims;
  filter.extent = {1, 1, 1, 1};
  for (int ax = 0; ax < kd; ++ax)
    filter.extent[ax] = info.geometry.extent[ax];
  // Check the limits on the header alone, before reading a possibly huge kernel.
  try {
    const int64_t limit = dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D;
    for (int ax = 0; ax < dims; ++ax) {
      if (filter.extent[ax] > limit) {
        throw InvalidArgument("the kernel has " + std::to_string(filter.extent[ax]) +
                              " taps along axis " + std::to_string(ax) + "; the limit for " +
                              std::to_string(dims) + "D images is " + std::to_string(limit) +
                              " (use smooth for large Gaussians)");
      }
    }
  } catch (const InvalidArgument& e) {
    throw Error(a.kernel + ": " + e.what());
  }
  io::Image k = io::read_image(a.kernel);
  return std::move(k.planes[0]);
}

// The kernel (a file, or --kernel SPEC) as the engine's dense filter for an image of `dims`.
std::vector<float> load_kernel(const ConvolveArgs& a, int dims, DenseFilter& filter) {
  std::vector<float> taps;
  const std::string source = a.spec.empty() ? a.kernel : "--kernel " + a.spec;
  if (a.spec.empty()) {
    taps = read_kernel_file(a, dims, filter);
  } else {
    Kernel k;
    try {
      k = parse_kernel_spec(a.spec, dims);
    } catch (const InvalidArgument& e) {
      throw UsageError(std::string("--kernel: ") + e.what());
    }
    filter.dims = k.dims;
    filter.extent = k.extent;
    taps = std::move(k.taps);
  }
  double sum = 0, sum_abs = 0;
  for (float t : taps) {
    if (!std::isfinite(t))
      throw Error(source + ": the kernel has NaN or Inf values");
    sum += t;
    sum_abs += std::abs(t);
  }
  if (a.normalize) {
    if (!(std::abs(sum) > 1e-12 * sum_abs) || sum_abs == 0)
      throw Error(source + ": the kernel sums to 0; --normalize needs a non-zero sum");
    for (float& t : taps)
      t = static_cast<float>(t / sum);
  }
  filter.taps = taps.data();
  try {
    validate_dense_filter(filter);
  } catch (const InvalidArgument& e) {
    throw Error(source + ": " + e.what());
  }
  return taps;
}

void run_convolve(const ConvolveArgs& a) {
  if (a.spec.empty())
    io::read_info(a.kernel);  // a missing or unreadable kernel fails before anything else
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const int dims = plan.input.geometry.dims;
  DenseFilter filter;
  const std::vector<float> taps = load_kernel(a, dims, filter);
  filter.taps = taps.data();

  Options options = engine_options(a.common);
  options.operation = a.correlate ? Operation::Correlation : Operation::Convolution;
  options.boundary = parse_boundary(a.boundary);
  options.region = a.region == "valid" ? OutputRegion::Valid : OutputRegion::Same;
  OutputGeometry g;
  try {
    g = output_geometry(dims, plan.input.geometry.extent, filter.extent, options.operation,
                        options.region);
  } catch (const InvalidArgument& e) {
    throw Error(a.in + ": " + e.what());
  }
  if (a.common.verbose) {
    std::string shape;
    for (int ax = 0; ax < dims; ++ax)
      shape += (ax ? "x" : "") + std::to_string(filter.extent[ax]);
    print_line("plan: %s with a %s kernel, boundary %s, region %s", to_string(options.operation),
               shape.c_str(), to_string(options.boundary), to_string(options.region));
  }

  // The CPU path's boundary-padded rows (a padded copy of the input, or a window per thread), in
  // float copies of the input, and what it holds besides (per-thread rows and scratch): 0.3
  // copies, fitted to the peak RSS of the 3^3 convolutions of CliHostile's memory test.
  const double padded =
      cpu_dense_scratch_bytes(dims, plan.input.geometry.extent, filter.extent, options) /
      (4.0 * static_cast<double>(plan.input.geometry.voxel_count()));
  check_memory_plan(a.in, a.out, plan, g.extent, padded + 0.3, a.common);
  FilterRequest request = filter_request(plan, a.common);
  request.kind = FilterKind::Dense;
  request.filter_extent = filter.extent;
  request.options.operation = options.operation;
  request.options.region = options.region;
  if (a.output.preview.empty())
    request.input_bytes_per_voxel = io::component_bytes(plan.input.component_type);
  const bool gpu = gpu_may_win(request, true, a.common);

  const double filter_seconds = print_plan_before_work(request, a.common);
  Progress progress(
      a.common, "convolve",
      estimate_stage_seconds(plan, a.out, a.output, a.common.threads, filter_seconds));
  double seconds_read = 0;
  // Without a preview (which shows the input) the stored type: a GPU uploads it as it is.
  const FilterInput input =
      read_filter_input(a.in, progress, seconds_read, gpu && a.output.preview.empty(), a.common);

  filter_and_write(
      progress, input, g, options,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_dense(in, filter, out, o);
      },
      [&](const StoredVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_dense_stored(in, filter, out, o);
      },
      a.out, plan, a.common, a.output, seconds_read);
}

}  // namespace

void add_convolve_command(CLI::App& app) {
  auto a = std::make_shared<ConvolveArgs>();
  CLI::App* sub = app.add_subcommand("convolve", kConvolveHelp);
  sub->add_option("FILES", a->files,
                  "IN KERNEL OUT: input image (2D/3D/4D); kernel image of the same dimension (any "
                  "readable format), at most 31 taps per axis (15 in 4D), left out with --kernel; "
                  "output image (the format follows the extension). With -o DIR: IN... KERNEL");
  add_batch_options(*sub, a->batch);
  sub->add_option(
      "--kernel", a->spec,
      std::string("a built-in kernel instead of a KERNEL file: ") + kernel_spec_grammar());
  sub->add_flag("--correlate", a->correlate, "correlate instead (do not flip the kernel)");
  sub->add_flag("--normalize", a->normalize, "divide the kernel by the sum of its values");
  add_boundary_option(*sub, a->boundary);
  sub->add_option("--region", a->region,
                  "same: output as large as the input; valid: only where the kernel fits inside")
      ->capture_default_str()
      ->check(CLI::IsMember({"same", "valid"}));
  add_input_options(*sub);
  add_output_options(*sub, a->output);
  add_common_options(*sub, a->common);
  sub->callback([a] {
    std::vector<std::string> names = a->files;
    const bool batch = !a->batch.output_dir.empty();
    std::string kernel;
    if (!a->spec.empty()) {
      // --kernel SPEC: IN OUT, or IN... -o DIR.
      if (!batch && names.size() > 2)
        throw UsageError("convolve: give a KERNEL file or --kernel SPEC, not both");
    } else {
      // IN KERNEL OUT, or IN... KERNEL -o DIR: the kernel is the last name before OUT.
      if (names.size() < (batch ? 2u : 3u)) {
        throw UsageError(std::string("convolve: ") +
                         (names.size() < 2 ? "KERNEL and OUT are" : "OUT is") +
                         " required: give IN KERNEL OUT, IN OUT --kernel SPEC, or IN... KERNEL "
                         "-o DIR");
      }
      const size_t k = batch ? names.size() - 1 : 1;
      kernel = names[k];
      names.erase(names.begin() + static_cast<std::ptrdiff_t>(k));
    }
    ConvolveArgs with_kernel = *a;
    with_kernel.kernel = kernel;
    run_jobs_of(names, with_kernel, run_convolve);
  });
}

}  // namespace ndconv::cli
