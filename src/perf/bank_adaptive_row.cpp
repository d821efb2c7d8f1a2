// The adaptive_4d bench row (bank_adaptive_row.h).
#include "perf/bank_adaptive_row.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ndconv/adaptive.h"
#include "perf/check.h"
#include "perf/phantom.h"

namespace ndconv::perf {

namespace {

std::vector<float> echo_floats(const Shape& shape, uint64_t seed) {
  const std::vector<uint8_t> bytes = make_echo_sequence(shape, seed);
  return std::vector<float>(bytes.begin(), bytes.end());
}

}  // namespace

Json adaptive_row(const Shape& volume, double target_seconds, const BenchConfig& cfg, int device,
                  const gpu::Ceilings& c, uint64_t seed, int& failures) {
  const AdaptiveParameters parameters;
  Options gpu_options = run_options(Backend::Cuda, Operation::Correlation, Boundary::Replicate);
  gpu_options.cuda_device = device;
  Json row = Json::object();
  {
    const Shape small = parse_shape("32x24x20x6", "volume");
    const std::vector<float> input = echo_floats(small, seed);
    std::vector<float> cpu(input.size()),
        gpu(input.size(), std::numeric_limits<float>::quiet_NaN());
    const ConstVolumeView in = make_view<const float>(input.data(), 4, small.extent);
    adaptive_filter(in, make_view(cpu.data(), 4, small.extent), parameters,
                    run_options(Backend::Cpu, Operation::Correlation, Boundary::Replicate));
    adaptive_filter(in, make_view(gpu.data(), 4, small.extent), parameters, gpu_options);
    CheckPlan whole;  // one window: the whole output
    whole.windows.push_back(CheckWindow{small, {0, 0, 0, 0}, cpu});
    const double err = window_error(whole, small, gpu);
    row.update({{"checked_on", format_shape(small)}, {"rel_l2_error", err}});
    if (!(err <= cfg.tolerance)) {
      ++failures;
      row["error"] = "validation failed";
      return row;
    }
  }
  const std::vector<float> input = echo_floats(volume, seed);
  std::vector<float> output(input.size());
  const ConstVolumeView in = make_view<const float>(input.data(), 4, volume.extent);
  const VolumeView out = make_view(output.data(), 4, volume.extent);
  std::map<std::string, std::vector<double>> stage_samples;
  std::vector<std::string> order;
  std::vector<double> totals, quadrature_compute, reconstruction_compute;
  std::vector<std::string> notes;  // the last run's reconstruction notes: where the stages ran
  const int runs = std::max(1, std::min(cfg.call_repetitions, 3));
  for (int r = 0; r <= runs; ++r) {  // run 0 is the warm-up
    const AdaptiveReport report = adaptive_filter(in, out, parameters, gpu_options);
    if (r == 0)
      continue;
    notes = report.bank.notes;
    double design = 0;
    for (const auto& [stage, seconds] : report.stage_seconds) {
      if (r == 1)
        order.push_back(stage);
      stage_samples[stage].push_back(seconds * 1e3);
      if (stage == "filter design")
        design = seconds;
    }
    totals.push_back((report.seconds_total - design) * 1e3);
    quadrature_compute.push_back(report.quadrature_bank.seconds_compute * 1e3);
    reconstruction_compute.push_back(report.bank.seconds_compute * 1e3);
  }
  if (!std::all_of(output.begin(), output.end(), [](float v) { return std::isfinite(v); })) {
    ++failures;
    row["error"] = "the output holds NaN or Inf";
    return row;
  }
  const int64_t voxels = volume.count();
  const double q_taps = std::pow(parameters.quadrature.size, 4);
  const double r_taps = std::pow(parameters.reconstruction.size, 4);
  // Useful FMAs: the real and imaginary part of each quadrature filter; the lowpass and each
  // highpass filter of the reconstruction.
  const double q_fmas = static_cast<double>(voxels) * q_taps * 2 *
                        static_cast<double>(quadrature_directions(4).size());
  const double r_fmas = static_cast<double>(voxels) * r_taps *
                        (1 + static_cast<double>(reconstruction_directions(4).size()));
  Json stages = Json::array();
  for (const std::string& stage : order) {
    const double ms = summarize(stage_samples[stage]).median_ms;
    Json st = {{"stage", stage}, {"median_ms", ms}};
    if (stage.rfind("quadrature", 0) == 0)
      st["pct_fma_peak"] = pct_of_peak(q_fmas, ms, c);
    else if (stage == "reconstruction")
      st["pct_fma_peak"] = pct_of_peak(r_fmas, ms, c);
    stages.push_back(st);
  }
  const double total_ms = summarize(totals).median_ms;
  const double q_ms = summarize(quadrature_compute).median_ms;
  const double r_ms = summarize(reconstruction_compute).median_ms;
  row.update({{"runs", runs},
              {"stages", stages},
              {"total_without_design_ms", total_ms},
              {"call_time", {{"median_ms", total_ms}, {"repetitions", runs}}},
              {"bank_kernels",
               {{"quadrature_fmas", q_fmas},
                {"quadrature_compute_ms", q_ms},
                {"quadrature_pct_fma_peak", pct_of_peak(q_fmas, q_ms, c)},
                {"reconstruction_fmas", r_fmas},
                {"reconstruction_compute_ms", r_ms},
                {"reconstruction_pct_fma_peak", pct_of_peak(r_fmas, r_ms, c)}}},
              {"target_met", total_ms <= target_seconds * 1e3},
              {"notes", notes}});
  return row;
}

}  // namespace ndconv::perf
