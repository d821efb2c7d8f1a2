// The adaptive filter's resident GPU path (resident_stages.h): both banks, the relaxation and
// the control tensor on the device (cuda_bank::ResidentAdaptive), with the same parameter checks
// and stage timings as the host-memory stages.
#include <chrono>
#include <string>
#include <vector>

#include "core/seconds_since.h"
#include "cuda/bank/bank_backend.h"
#include "engine/adaptive/bank_front.h"
#include "engine/adaptive/resident_stages.h"
#include "engine/adaptive/stage_banks.h"
#include "engine/adaptive/stage_support.h"

namespace ndconv::detail {

bool filter_volume_resident(const ConstVolumeView& input, const VolumeView& output,
                            const AdaptiveParameters& parameters, const Options& options,
                            const std::vector<DesignedFilter>& quadrature,
                            const std::vector<DesignedFilter>& reconstruction, double q_share,
                            AdaptiveReport& report, std::string& fallback_note,
                            const MagnitudeRegion& region, bool scale_only) {
  const int dims = input.dims;
  if (parameters.orientation_downsampling != 1)
    return false;
  const QuadratureBank qb = quadrature_bank(dims, quadrature, options);
  const ReconstructionBank rb = reconstruction_bank(dims, reconstruction, options);
  RunReport quadrature_report, reconstruction_report;
  detail::choose_bank_backend(qb.options, quadrature_report, &qb.extent, dims);
  detail::choose_bank_backend(rb.options, reconstruction_report, &rb.extent, dims);
  if (quadrature_report.backend != Backend::Cuda || reconstruction_report.backend != Backend::Cuda)
    return false;
  // The parameters' checks of the control and reconstruction stages, before any GPU work.
  const detail::ControlMapping mapping = control_mapping(dims, parameters);
  check_blend(parameters.blend);

  cuda_bank::ResidentProblem problem;
  problem.quadrature = qb.slab(input, 0, input.extent[dims - 1]);
  problem.duals = qb.flat_duals();
  if (parameters.relaxation_sigma > 0)
    problem.relaxation = relaxation_gaussian(dims, parameters.relaxation_sigma);
  std::vector<float> flipped;
  problem.reconstruction = detail::prepare_bank(input, rb.filter_bank(), rb.options, flipped);
  problem.reconstruction.sum_output = output;
  problem.coefficients = rb.coefficients;
  cuda_bank::ResidentAdaptive gpu(problem, options);
  if (!gpu.fits()) {
    fallback_note = gpu.memory_note();
    return false;
  }

  auto t0 = std::chrono::steady_clock::now();
  report.quadrature_bank = quadrature_report;
  gpu.structure_tensor(report.quadrature_bank);
  report.quadrature_bank.seconds_total = seconds_since(t0);
  report.stage_seconds.emplace_back("quadrature bank and structure tensor", seconds_since(t0));
  report_progress(options, q_share);

  t0 = std::chrono::steady_clock::now();
  gpu.relax();
  report.stage_seconds.emplace_back("tensor relaxation", seconds_since(t0));
  report_progress(options, q_share + 0.03);

  t0 = std::chrono::steady_clock::now();
  report.normalisation_scales.push_back(
      gpu.control_tensor(mapping, region, parameters.normalisation_scale.value_or(-1.0)));
  report.stage_seconds.emplace_back("control tensor", seconds_since(t0));
  report_progress(options, q_share + 0.05);
  if (scale_only)
    return true;

  t0 = std::chrono::steady_clock::now();
  report.bank = reconstruction_report;
  gpu.reconstruct(parameters.blend, report.bank);
  report.bank.seconds_total = seconds_since(t0);
  report.bank.notes.push_back(gpu.memory_note());
  report.stage_seconds.emplace_back("reconstruction", seconds_since(t0));
  report_progress(options, 1.0);
  return true;
}

}  // namespace ndconv::detail
