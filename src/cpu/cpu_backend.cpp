// PLACEHOLDER (being replaced by the fast CPU backend): a direct, single-threaded loop.
#include "engine/cpu_backend.h"

#include "ndconv/errors.h"

namespace ndconv::cpu_backend {

const std::vector<int>& supported_blocking_factors() {
  static const std::vector<int> f{1};
  return f;
}

namespace {
float sample(const ConstVolumeView& in, Index i, Boundary b) {
  for (int a = 0; a < in.dims; ++a) {
    i[a] = detail::boundary_index(i[a], in.extent[a], b);
    if (i[a] < 0)
      return 0.0f;
  }
  return in.at(i);
}
}  // namespace

void run_dense(const detail::CorrelationProblem& p, const Options&, RunReport& report) {
  const auto& out = p.output;
  Index o{0, 0, 0, 0};
  for (o[3] = 0; o[3] < out.extent[3]; ++o[3])
    for (o[2] = 0; o[2] < out.extent[2]; ++o[2])
      for (o[1] = 0; o[1] < out.extent[1]; ++o[1])
        for (o[0] = 0; o[0] < out.extent[0]; ++o[0]) {
          double acc = 0;
          Index j{0, 0, 0, 0};
          const float* t = p.taps;
          for (j[3] = 0; j[3] < p.filter_extent[3]; ++j[3])
            for (j[2] = 0; j[2] < p.filter_extent[2]; ++j[2])
              for (j[1] = 0; j[1] < p.filter_extent[1]; ++j[1])
                for (j[0] = 0; j[0] < p.filter_extent[0]; ++j[0]) {
                  Index i;
                  for (int a = 0; a < 4; ++a)
                    i[a] = o[a] + p.offset[a] + j[a];
                  acc += double(*t++) * sample(p.input, i, p.boundary);
                }
          out.at(o) = static_cast<float>(acc);
        }
  report.threads = 1;
  report.outputs_per_thread = 1;
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&) {
  throw Error("separable CPU path not implemented yet");
}

}  // namespace ndconv::cpu_backend
