// `ndconv adaptive IN OUT`: orientation-adaptive denoising (ndconv/adaptive.h, docs/adaptive.md).
// It smooths along structures and across flat regions while keeping edges, as published for
// echocardiography. A 4D series is filtered in true 4D (time as the 4th axis) unless --frames
// asks for each 3D frame on its own.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "filter_args.h"
#include "number_options.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/plan.h"

namespace ndconv::cli {

namespace {

struct AdaptiveArgs : FilterArgs {
  std::string preset = "default";
  double smoothing = 0, relaxation = -1, threshold = 0, anisotropy = 0, blend = 0;
  int quadrature_size = 0, reconstruction_size = 0;
  bool frames = false, coarse_orientation = false;
};

// The preset, then the options given on the command line over it.
AdaptiveParameters parameters_of(const AdaptiveArgs& a) {
  AdaptiveParameters p = adaptive_preset(parse_adaptive_preset(a.preset));
  if (a.smoothing > 0)
    p.reconstruction.lowpass_sigma = a.smoothing;
  if (a.relaxation >= 0)
    p.relaxation_sigma = a.relaxation;
  if (a.threshold > 0)
    p.magnitude_sigma = a.threshold;
  if (a.anisotropy > 0)
    p.eigen_alpha = a.anisotropy;
  if (a.quadrature_size > 0)
    p.quadrature.size = a.quadrature_size;
  if (a.reconstruction_size > 0)
    p.reconstruction.size = a.reconstruction_size;
  p.blend = a.blend;
  p.time_as_axis = !a.frames;
  if (a.coarse_orientation)
    p.orientation_downsampling = 2;
  return p;
}

void run_adaptive(const AdaptiveArgs& a) {
  const AdaptiveParameters parameters = parameters_of(a);
  const Plan plan = plan_output(a.in, a.out, a.common, a.output);
  const int dims = plan.input.geometry.dims;
  if (a.frames && dims != 4)
    throw UsageError("--frames: " + a.in + " is " + std::to_string(dims) +
                     "D; only a 4D series has frames");
  // Design the filters before reading the image: a bad size or parameter fails early.
  const int design_dims = dims == 4 && a.frames ? 3 : dims;
  try {
    design_quadrature_filters(design_dims, parameters.quadrature);
    const auto r = design_reconstruction_filters(design_dims, parameters.reconstruction);
    if (a.common.verbose) {
      print_line(
          "plan: %s, lowpass sigma %.3g voxels, relaxation sigma %.3g voxels, threshold "
          "%.3g, anisotropy alpha %.3g, quadrature %d^%d, reconstruction %d^%d (lowpass "
          "error %.2e, worst highpass error %.3f)",
          dims == 4 ? (a.frames ? "3D per frame" : "true 4D") : "whole volume",
          parameters.reconstruction.lowpass_sigma, parameters.relaxation_sigma,
          parameters.magnitude_sigma, parameters.eigen_alpha, parameters.quadrature.size,
          design_dims, parameters.reconstruction.size, design_dims, r[0].relative_error, [&] {
            double worst = 0;
            for (size_t k = 1; k < r.size(); ++k)
              worst = std::max(worst, r[k].relative_error);
            return worst;
          }());
    }
    std::vector<std::vector<float>> none(design_dims * (design_dims + 1) / 2,
                                         std::vector<float>(1));
    control_tensor(none, design_dims, parameters, 1);  // checks the mapping parameters
  } catch (const InvalidArgument& e) {
    throw UsageError(std::string("adaptive: ") + e.what());
  }

  // The memory the whole filter needs, checked before the image is read: true 4D keeps the tensor's
  // components of the whole series (one of them in the output's buffer) and a slab's buffers,
  // frame by frame only one frame's (adaptive_working_volumes).
  const bool on_gpu = parse_device(a.common.device).backend == Backend::Cuda;
  AdaptiveParameters planned = parameters;
  planned.time_as_axis = !a.frames;
  try {
    check_memory_plan(a.in, a.out, plan, plan.input.geometry.extent,
                      adaptive_working_volumes(dims, plan.input.geometry.extent, planned, on_gpu,
                                               parse_boundary(a.boundary)),
                      a.common);
  } catch (const io::IoError& e) {
    std::string hint;
    if (dims == 4 && !a.frames)
      hint += "--frames (each 3D frame alone)";
    if (!on_gpu)
      hint += std::string(hint.empty() ? "" : " or ") + "--device cuda (the tensor on the GPU)";
    throw io::IoError(std::string(e.what()) + (hint.empty() ? "" : "; try " + hint));
  }

  // The CPU's estimate (the GPU's stages have none): the progress bar's filter share, and with
  // -v a line before the work.
  const double estimate = on_gpu ? 0.0
                                 : adaptive_estimated_cpu_seconds(dims, plan.input.geometry.extent,
                                                                  parameters, a.common.threads) *
                                       plan.input.components;
  if (a.common.verbose && !on_gpu)
    print_line("plan: estimated %.3g s on the CPU", estimate);
  read_filter_write(
      "adaptive", a, plan,
      [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        const AdaptiveReport r = adaptive_filter(in, out, parameters, o);
        if (a.common.verbose) {
          for (const auto& [stage, seconds] : r.stage_seconds)
            print_line("timings: %s %.3f s", stage.c_str(), seconds);
        }
        RunReport report = r.bank;
        report.seconds_total = r.seconds_total;
        report.seconds_compute = r.seconds_total;
        return report;
      },
      estimate);
}

// An option that overrides the preset's value within [min, max]: its help names the defaults, so
// CLI11 shows none.
void add_preset_override(CLI::App& sub, const std::string& name, double& value, AdaptiveRange range,
                         const std::string& help) {
  sub.add_option(name, value, help)->default_str("")->check(number_in({range.min, range.max}));
}
void add_preset_override(CLI::App& sub, const std::string& name, int& value, AdaptiveRange range,
                         const std::string& help) {
  sub.add_option(name, value, help)
      ->default_str("")
      ->check(CLI::Range(static_cast<int>(range.min), static_cast<int>(range.max)));
}

}  // namespace

void add_adaptive_command(CLI::App& app) {
  auto a = std::make_shared<AdaptiveArgs>();
  CLI::App* sub = app.add_subcommand(
      "adaptive",
      "Orientation-adaptive denoising: smooths flat regions and along structures, keeps edges "
      "(2D, 3D, true 4D). See docs/adaptive.md.");
  add_input_output_args(*sub, *a, "output image");
  sub->add_option("--preset", a->preset,
                  "parameter set: default, or echo (ultrasound speckle: stronger smoothing)")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "echo"}));
  add_preset_override(*sub, "--smoothing", a->smoothing, kSmoothingRange,
                      "lowpass strength: the sigma in voxels of the smoothing in flat regions "
                      "(default 1.5, echo 2)");
  add_preset_override(
      *sub, "--relaxation", a->relaxation, kRelaxationRange,
      "sigma in voxels of the smoothing of the orientation tensor; 0: none (default 1, echo 2)");
  add_preset_override(*sub, "--threshold", a->threshold, kThresholdRange,
                      "structure threshold, relative to the strongest structure in the image: "
                      "below it the image is smoothed in every direction (default 0.3)");
  add_preset_override(*sub, "--anisotropy", a->anisotropy, kAnisotropyRange,
                      "eigenvalue mapping alpha in (0, 1): smaller keeps more of the weaker "
                      "orientations (default 0.5, echo 0.2)");
  sub->add_option("--blend", a->blend, "weight of the input in the output, 0 to 1")
      ->capture_default_str()
      ->check(number_in({kBlendRange.min, kBlendRange.max}));
  add_preset_override(*sub, "--quadrature-size", a->quadrature_size, kFilterSizeRange,
                      "taps per axis of the orientation filters, odd (default 7)");
  add_preset_override(*sub, "--reconstruction-size", a->reconstruction_size, kFilterSizeRange,
                      "taps per axis of the reconstruction filters, odd (default 11, echo 9)");
  sub->add_flag("--coarse-orientation", a->coarse_orientation,
                "estimate the orientation on the image lowpass filtered and subsampled by 2 "
                "(a coarser scale, faster)");
  sub->add_flag("--frames", a->frames, "4D: filter each 3D frame on its own instead of true 4D");
  add_boundary_and_common_args(*sub, *a);
  sub->callback([a] { run_jobs_of(a->files, *a, run_adaptive); });
}

}  // namespace ndconv::cli
