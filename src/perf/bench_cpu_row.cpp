// The bench's CPU row (bench_rows.h): ndconv's CPU backend on a dense 7^3 convolution against
// itk::ConvolutionImageFilter, which the ITK-linked front end supplies as the config's peer.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "perf/bench.h"
#include "perf/bench_rows.h"
#include "perf/check.h"
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
  const Timing t =
      time_host([&] { rep = filter_dense_case(c, out, o); }, 1, std::max(3, cfg.call_repetitions));
  const double s = t.median_ms * 1e-3;
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

}  // namespace ndconv::perf
