// The bench's CPU rows (bench_rows.h): ndconv's CPU backend on a dense 7^3 convolution against
// itk::ConvolutionImageFilter, which the ITK-linked front end supplies as the config's peer, and
// the CPU filter bank on float and on 8-bit input (the AMX-INT8 path where the CPU has it, its
// useful multiply-adds counted); all against the CPU's FP32 FMA peak measured beside them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_backend.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/check.h"
#include "perf/report.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

double rel_l2(const std::vector<float>& got, const std::vector<float>& ref) {
  double d = 0, r = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    d += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    r += double(ref[i]) * ref[i];
  }
  return std::sqrt(d / r);
}

// The CPU's FP32 multiply-add ceiling around a row: measured before and after it (the larger, so
// that a clock that drops under the row's own load does not flatter it).
struct CpuCeiling {
  double before = 0;
  double after = 0;
  std::string isa;
  double peak() const { return std::max(before, after); }
};

constexpr double kCeilingSeconds = 0.5;

CpuCeiling cpu_ceiling_before(int threads) {
  CpuCeiling c;
  const cpu_backend::FmaPeak p = cpu_backend::measure_fma_peak(threads, kCeilingSeconds);
  c.before = p.multiply_adds_per_second;
  c.isa = p.isa;
  return c;
}

void add_ceiling(Json& row, CpuCeiling c, int threads, double fmas, double seconds) {
  c.after = cpu_backend::measure_fma_peak(threads, kCeilingSeconds).multiply_adds_per_second;
  row.update({{"cpu_fma_peak_gfma", c.peak() * 1e-9},
              {"cpu_fma_peak_before_after_gfma", {c.before * 1e-9, c.after * 1e-9}},
              {"cpu_isa", c.isa},
              {"pct_cpu_fma_peak", 100.0 * fmas / seconds / c.peak()}});
}

}  // namespace

Json cpu_row(const Workload& w, const BenchConfig& cfg, uint64_t seed, int& failures) {
  Json row = Json::object();
  // Convolution with the replicate boundary: itk::ConvolutionImageFilter's defaults.
  const DenseCase c = make_dense_case(w.volume, w.filter, Boundary::Replicate, seed);
  const double flops = 2.0 * c.fmas();
  const std::size_t n = static_cast<std::size_t>(w.volume.count());
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
  const Options o =
      run_options(Backend::Cpu, Operation::Convolution, Boundary::Replicate, cfg.threads);
  RunReport rep;
  const CpuCeiling ceiling = cpu_ceiling_before(cfg.threads);
  const Timing t =
      time_host([&] { rep = filter_dense_case(c, out, o); }, 1, std::max(3, cfg.call_repetitions));
  const double s = t.median_ms * 1e-3;
  add_ceiling(row, ceiling, cfg.threads, c.fmas(), s);
  row.update({{"device_time", timing_json(t)},
              {"voxels_per_s", static_cast<double>(n) / s},
              {"gflops", flops / s * 1e-9},
              {"threads", rep.threads},
              {"plan",
               {{"ko", rep.outputs_per_thread},
                {"ko_reason", rep.outputs_per_thread_reason},
                {"block", ""},
                {"describe", "CPU blocking factor " + std::to_string(rep.outputs_per_thread) +
                                 ", " + std::to_string(rep.threads) + " threads"}}}});
  if (!cfg.cpu_peer) {
    row.update({{"peer",
                 "itk::ConvolutionImageFilter not run: this build has no ITK "
                 "(run `ndconv bench --workload cpu3d_7`)"},
                {"target_met", nullptr}});
    return row;
  }
  const PeerRun peer = cfg.cpu_peer(c, rep.threads, cfg.cpu_peer_repetitions);
  const double err = rel_l2(out, peer.output);
  const double speedup = peer.median_ms / t.median_ms;
  if (!(err <= cfg.tolerance))
    ++failures;
  row.update({{"peer", peer.name},
              {"peer_median_ms", peer.median_ms},
              {"peer_repetitions", peer.repetitions},
              {"rel_l2_error_vs_peer", err},
              {"speedup_vs_peer", speedup},
              {"target_met", speedup >= w.target}});
  return row;
}

Json cpu_bank_row(const Workload& w, const BenchConfig& cfg, uint64_t seed, int& failures) {
  QuadratureDesign design;
  design.size = static_cast<int>(w.filter.extent[0]);
  std::vector<float> taps;
  for (const DesignedFilter& f : design_quadrature_filters(w.volume.dims, design)) {
    taps.insert(taps.end(), f.real.begin(), f.real.end());
    taps.insert(taps.end(), f.imag.begin(), f.imag.end());
  }
  FilterBank bank;
  bank.dims = w.volume.dims;
  bank.extent = w.filter.extent;
  bank.count = static_cast<int>(static_cast<int64_t>(taps.size()) / w.filter.count());
  bank.taps = taps.data();
  std::vector<float> input = random_volume(w.volume.count(), seed);
  if (w.eight_bit_input) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    for (float& v : input)
      v = static_cast<float>(byte(rng));
  }
  const std::size_t n = input.size();
  std::vector<std::vector<float>> outputs(static_cast<std::size_t>(bank.count),
                                          std::vector<float>(n, std::nanf("")));
  std::vector<VolumeView> views;
  for (std::vector<float>& o : outputs)
    views.push_back(make_view(o.data(), w.volume.dims, w.volume.extent));
  const ConstVolumeView in =
      make_view(static_cast<const float*>(input.data()), w.volume.dims, w.volume.extent);
  const Options o = run_options(Backend::Cpu, Operation::Correlation, Boundary::Zero, cfg.threads);
  RunReport rep;
  const CpuCeiling ceiling = cpu_ceiling_before(cfg.threads);
  const Timing t = time_host([&] { rep = filter_bank(in, bank, views, o); }, 1,
                             std::max(3, cfg.call_repetitions));
  const double s = t.median_ms * 1e-3;
  const double fmas = static_cast<double>(n) * static_cast<double>(taps.size());
  Json row = Json::object();
  add_ceiling(row, ceiling, cfg.threads, fmas, s);
  // Filter 0's responses against the dense filter of its taps (the CPU's dense kernels).
  std::vector<float> dense(n, std::nanf(""));
  filter_dense(in, DenseFilter{bank.dims, bank.extent, bank.taps},
               make_view(dense.data(), w.volume.dims, w.volume.extent), o);
  const double err = rel_l2(outputs[0], dense);
  if (!(err <= cfg.tolerance))
    ++failures;
  row.update(
      {{"device_time", timing_json(t)},
       {"voxels_per_s", static_cast<double>(n) / s},
       {"gflops", 2.0 * fmas / s * 1e-9},
       {"threads", rep.threads},
       {"filters", bank.count},
       {"rel_l2_error_vs_dense", err},
       {"path", rep.notes.empty() ? std::string() : rep.notes.back()},
       {"plan",
        {{"ko", rep.outputs_per_thread},
         {"ko_reason", rep.outputs_per_thread_reason},
         {"block", ""},
         {"describe", "CPU bank, " + std::to_string(rep.outputs_per_thread) +
                          " outputs per block, " + std::to_string(rep.threads) + " threads"}}},
       {"target_met", number(row, "pct_cpu_fma_peak") >= w.target}});
  return row;
}

}  // namespace ndconv::perf
