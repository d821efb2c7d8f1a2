// The adaptive filter's tensor relaxation (ndconv/adaptive.h, stage 2): Gaussian smoothing of
// each of the structure tensor's components.
#include <algorithm>
#include <vector>

#include "engine/adaptive/stage_support.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"

namespace ndconv {

using detail::relaxation_gaussian;
using detail::report_progress;

// The relaxation's Gaussian: `sigma` voxels along every axis.
SeparableFilter detail::relaxation_gaussian(int dims, double sigma) {
  std::array<double, kMaxDims> sigmas{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    sigmas[a] = sigma;
  return gaussian_filter(dims, sigmas, 3.0);
}

AdaptiveReach adaptive_reach(const AdaptiveParameters& parameters) {
  validate_adaptive_parameters(parameters);
  const int64_t relaxation =
      parameters.relaxation_sigma > 0
          ? static_cast<int64_t>(
                relaxation_gaussian(1, parameters.relaxation_sigma).taps[0].size() / 2)
          : 0;
  AdaptiveReach r;
  r.structure_tensor = parameters.quadrature.size / 2 + relaxation;
  r.output = std::max<int64_t>(r.structure_tensor, parameters.reconstruction.size / 2);
  return r;
}

void relax_tensor(std::vector<std::vector<float>>& tensor, int dims, const Index& extent,
                  double sigma, const Options& options) {
  if (sigma <= 0)
    return;
  const SeparableFilter gaussian = relaxation_gaussian(dims, sigma);
  Options o = options;
  o.operation = Operation::Correlation;
  o.region = OutputRegion::Same;
  o.progress = {};
  std::vector<float> smoothed(tensor.empty() ? 0 : tensor[0].size());
  for (size_t c = 0; c < tensor.size(); ++c) {
    filter_separable(as_const(make_view(tensor[c].data(), dims, extent)), gaussian,
                     make_view(smoothed.data(), dims, extent), o);
    tensor[c].swap(smoothed);
    report_progress(options, static_cast<double>(c + 1) / static_cast<double>(tensor.size()));
  }
}

}  // namespace ndconv
