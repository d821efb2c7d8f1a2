// The adaptive filter's stages (ndconv/adaptive.h):
//  0. optionally, the input lowpass filtered and subsampled by 2 for the orientation estimate
//     (the control tensor is interpolated back before the reconstruction);
//  1. quadrature bank: the 2K real filters (real and imaginary parts of the K quadrature
//     filters) in one filter-bank pass per slab of the last axis; T = sum_k |q_k| M_k per voxel;
//  2. relaxation: Gaussian smoothing of T's components (filter_separable);
//  3. control tensor: T / (the largest eigenvalue or norm in the volume, or in its normalisation
//     box, or the scale given), per voxel the eigen-decomposition T = sum_i l_i e_i e_i^T,
//     C = m(x) sum_i mu(l_i / l_1) e_i e_i^T;
//  4. reconstruction: out = LP * f + sum_k <C, M_k> (HP_k * f), the filter bank's weighted sum
//     with the weights <C, M_k> written over C's components; then the blend with the input.
// A 4D volume is filtered in true 4D, or frame by frame in 3D. adaptive_normalisation_scales runs
// stages 0 to 3's first pass only.
// With the GPU, stages 1 to 4 keep their data on the device from the input's upload to the
// output's download (filter_volume_resident, src/cuda/bank/resident.cu) where the working set
// fits and the orientation is estimated at full resolution; otherwise each GPU stage takes its
// data from host memory and returns it there.
//
// This file holds the order of the stages and the frames of a 4D volume; each stage is in its own
// file (orientation.cpp, relaxation.cpp, control.cpp, reconstruction.cpp), the banks in
// stage_banks.cpp and the resident GPU path in resident_stages.cpp.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_backend.h"
#include "engine/adaptive/bank_front.h"
#include "engine/adaptive/resident_stages.h"
#include "engine/adaptive/slab_stages.h"
#include "engine/adaptive/stage_support.h"
#include "engine/filter_checks.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"

namespace ndconv {

namespace {

using detail::check_components;
using detail::control_mapping;
using detail::filter_volume_resident;
using detail::report_progress;
using detail::seconds_since;
using detail::stage_options;

// The stages after the filter design, on one 2D, 3D or 4D volume; appends the stage timings and
// the normalising scale. With `scale_only`, stops once the scale is known (`output` unused).
void filter_volume(const ConstVolumeView& input, const VolumeView& output,
                   const AdaptiveParameters& parameters, const Options& options,
                   const std::vector<DesignedFilter>& quadrature,
                   const std::vector<DesignedFilter>& reconstruction, AdaptiveReport& report,
                   bool scale_only) {
  const int dims = input.dims;
  const detail::MagnitudeRegion region = detail::magnitude_region(dims, input.extent, parameters);
  // Shares of the progress bar: each stage's estimated seconds (cost.cpp).
  const detail::AdaptiveStageSeconds estimate =
      detail::adaptive_stage_seconds(dims, static_cast<double>(input.voxel_count()), parameters,
                                     core::resolve_thread_count(options.threads));
  const double q_share = estimate.orientation / estimate.total(),
               relax_share = estimate.relaxation / estimate.total(),
               control_share = estimate.control / estimate.total(),
               r_share = estimate.reconstruction / estimate.total();

  // Orientation estimation, on the input or on its subsampled lowpass version.
  auto t0 = std::chrono::steady_clock::now();
  const bool downsample = parameters.orientation_downsampling == 2;
  Index coarse_extent = input.extent;
  std::vector<float> coarse;
  ConstVolumeView orientation_input = input;
  if (downsample) {
    coarse = downsample_for_orientation(input, options, coarse_extent);
    orientation_input = as_const(make_view(coarse.data(), dims, coarse_extent));
  }
  report.stage_seconds.emplace_back("lowpass and downsampling", seconds_since(t0));

  std::string fallback_note;  // why the GPU stages went through host memory
  if (filter_volume_resident(input, output, parameters, options, quadrature, reconstruction,
                             q_share, report, fallback_note, region, scale_only))
    return;

  // On the CPU at full resolution the stages run in slabs, only the relaxed tensor kept whole
  // (slab_stages.h); a periodic boundary, which joins the first planes to the last, and the coarse
  // orientation estimate run stage by stage on whole volumes.
  RunReport chosen;
  detail::choose_bank_backend(options, chosen);
  if (chosen.backend != Backend::Cuda && !downsample && options.boundary != Boundary::Periodic) {
    detail::filter_volume_cpu_slabs(input, output, parameters, options, quadrature, reconstruction,
                                    {q_share, relax_share, control_share, r_share}, report, 0,
                                    region, scale_only);
    report_progress(options, 1.0);
    return;
  }

  t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<float>> tensor = structure_tensor(
      orientation_input, quadrature, stage_options(options, 0, q_share), &report.quadrature_bank);
  report.stage_seconds.emplace_back("quadrature bank and structure tensor", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  relax_tensor(tensor, dims, coarse_extent, parameters.relaxation_sigma / (downsample ? 2.0 : 1.0),
               stage_options(options, q_share, relax_share));
  report.stage_seconds.emplace_back("tensor relaxation", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  bool on_gpu = false;
  double scale = 0;
  if (chosen.backend == Backend::Cuda) {
    check_components(tensor, dims);
    on_gpu =
        cuda_bank::run_control_tensor(control_mapping(dims, parameters), tensor, options, region,
                                      parameters.normalisation_scale.value_or(-1.0), scale);
  }
  const Options control_options = stage_options(options, q_share + relax_share, control_share);
  if (!on_gpu)
    scale = detail::control_tensor_scaled(tensor, dims, parameters, options.threads,
                                          control_options.progress, region, !scale_only);
  report.normalisation_scales.push_back(scale);
  if (scale_only)
    return;
  if (downsample)
    upsample_tensor(tensor, dims, coarse_extent, input.extent, options.threads);
  report_progress(control_options, 1.0);
  report.stage_seconds.emplace_back("control tensor", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  report.bank = reconstruct(input, tensor, reconstruction, parameters.blend, output,
                            stage_options(options, 1.0 - r_share, r_share));
  if (!fallback_note.empty())
    report.bank.notes.push_back(fallback_note);
  report.stage_seconds.emplace_back("reconstruction", seconds_since(t0));
  report_progress(options, 1.0);
}

// adaptive_filter, or with `scale_only` the stages up to the normalising scale.
AdaptiveReport run_adaptive(const ConstVolumeView& input, const VolumeView& output,
                            const AdaptiveParameters& parameters, const Options& options,
                            bool scale_only) {
  const auto t_start = std::chrono::steady_clock::now();
  AdaptiveReport report;
  validate_adaptive_parameters(parameters);
  detail::backend_boundary(options, "the adaptive filter");
  if (input.data == nullptr || (output.data == nullptr && !scale_only))
    throw InvalidArgument("the adaptive filter needs an input and an output volume");
  if (input.dims < 2 || input.dims > 4)
    throw InvalidArgument("the adaptive filter works on 2D, 3D and 4D volumes");
  if (!scale_only && (output.dims != input.dims || output.extent != input.extent))
    throw InvalidArgument("the output volume must have the input's extents");
  if (parameters.normalisation_scale &&
      !(*parameters.normalisation_scale >= 0 && std::isfinite(*parameters.normalisation_scale)))
    throw InvalidArgument("the normalisation scale must be finite and >= 0");
  for (int a = 0; a < input.dims; ++a)
    if (input.extent[a] < 1)
      throw InvalidArgument("the input volume is empty");
  if (parameters.orientation_downsampling != 1 && parameters.orientation_downsampling != 2)
    throw InvalidArgument("the orientation downsampling factor must be 1 or 2");
  const bool frames = input.dims == 4 && !parameters.time_as_axis;
  const int dims = frames ? 3 : input.dims;

  auto t0 = std::chrono::steady_clock::now();
  const std::vector<DesignedFilter> quadrature =
      design_quadrature_filters(dims, parameters.quadrature);
  const std::vector<DesignedFilter> reconstruction =
      design_reconstruction_filters(dims, parameters.reconstruction);
  const double design_seconds = seconds_since(t0);

  if (!frames) {
    report.stage_seconds.emplace_back("filter design", design_seconds);
    filter_volume(input, output, parameters, options, quadrature, reconstruction, report,
                  scale_only);
  } else {
    // Each 3D frame on its own, with the same filters; stage timings summed over the frames.
    const int64_t count = input.extent[3];
    for (int64_t t = 0; t < count; ++t) {
      ConstVolumeView in = input;
      VolumeView out = output;
      in.dims = out.dims = 3;
      in.extent[3] = out.extent[3] = 1;
      in.data += t * input.stride[3];
      out.data += t * output.stride[3];
      AdaptiveReport frame;
      frame.stage_seconds.emplace_back("filter design", t == 0 ? design_seconds : 0.0);
      filter_volume(in, out, parameters,
                    stage_options(options, static_cast<double>(t) / static_cast<double>(count),
                                  1.0 / static_cast<double>(count)),
                    quadrature, reconstruction, frame, scale_only);
      if (t == 0) {
        report.stage_seconds = frame.stage_seconds;
      } else {
        for (size_t i = 0; i < frame.stage_seconds.size(); ++i)
          report.stage_seconds[i].second += frame.stage_seconds[i].second;
      }
      report.bank = frame.bank;
      report.quadrature_bank = frame.quadrature_bank;
      report.normalisation_scales.push_back(frame.normalisation_scales.at(0));
    }
  }
  // The notes of the filter's run (what --verbose prints) say which kernels took the quadrature
  // bank too: the tensor cores, or the FP32 kernels and why.
  for (const std::string& note : report.quadrature_bank.notes)
    if (note.rfind("GPU quadrature bank", 0) == 0)
      report.bank.notes.push_back(note);
  report.seconds_total = seconds_since(t_start);
  return report;
}

}  // namespace

AdaptiveReport adaptive_filter(const ConstVolumeView& input, const VolumeView& output,
                               const AdaptiveParameters& parameters, const Options& options) {
  return run_adaptive(input, output, parameters, options, false);
}

std::vector<double> adaptive_normalisation_scales(const ConstVolumeView& input,
                                                  const AdaptiveParameters& parameters,
                                                  const Options& options) {
  return run_adaptive(input, VolumeView{}, parameters, options, true).normalisation_scales;
}

}  // namespace ndconv
