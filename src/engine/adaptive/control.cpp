// The adaptive filter's control tensor on the CPU (ndconv/adaptive.h, stage 3): the checked
// control mapping of the parameters, and one eigen-decomposition per voxel (core/control_voxel.h)
// in two passes.
#include <algorithm>
#include <string>
#include <vector>

#include "core/control_voxel.h"
#include "core/parallel_for.h"
#include "engine/adaptive/stage_support.h"
#include "ndconv/adaptive.h"

namespace ndconv {

using detail::check_components;
using detail::component_count;
using detail::control_mapping;

// The control mapping of `parameters`, checked.
detail::ControlMapping detail::control_mapping(int dims, const AdaptiveParameters& parameters) {
  if (!(parameters.magnitude_sigma > 0) || !(parameters.magnitude_beta > 0) ||
      !(parameters.eigen_alpha > 0 && parameters.eigen_alpha < 1) || !(parameters.eigen_beta > 0))
    throw InvalidArgument(
        "the control tensor needs magnitude sigma > 0, magnitude beta > 0, 0 < eigen alpha < 1 "
        "and eigen beta > 0");
  detail::ControlMapping m;
  m.dims = dims;
  m.by_norm = parameters.normalisation == TensorNormalisation::Norm;
  m.eigen_alpha = parameters.eigen_alpha;
  m.eigen_beta = parameters.eigen_beta;
  m.magnitude_sigma_beta =
      detail::control_power(parameters.magnitude_sigma, parameters.magnitude_beta);
  m.magnitude_beta = parameters.magnitude_beta;
  return m;
}

void detail::check_components(const std::vector<std::vector<float>>& tensor, int dims) {
  const int m = component_count(dims);
  if (static_cast<int>(tensor.size()) != m)
    throw InvalidArgument("the tensor has " + std::to_string(tensor.size()) +
                          " components, expected " + std::to_string(m));
}

void control_tensor(std::vector<std::vector<float>>& tensor, int dims,
                    const AdaptiveParameters& parameters, int threads) {
  check_components(tensor, dims);
  const detail::ControlMapping mapping = control_mapping(dims, parameters);
  const int m = component_count(dims);
  const int64_t voxels = static_cast<int64_t>(tensor[0].size());
  const int used = core::resolve_thread_count(threads);
  // One eigen-decomposition per voxel (control_voxel.h): the first pass stores the eigenvalue
  // mapping's tensor over T and the magnitude x; the second scales by gamma once the largest x is
  // known.
  std::vector<float> magnitude(static_cast<size_t>(voxels));
  std::vector<double> largest(used, 0.0);
  core::parallel_for(used, voxels,
                     [&](int64_t begin, int64_t end, int worker) {
                       double t[kMaxDims * kMaxDims], c[kMaxDims * kMaxDims];
                       for (int64_t v = begin; v < end; ++v) {
                         for (int k = 0; k < m; ++k)
                           t[k] = tensor[k][v];
                         const double x = detail::control_shape(mapping, t, c);
                         magnitude[v] = static_cast<float>(x);
                         largest[worker] = std::max(largest[worker], x);
                         for (int k = 0; k < m; ++k)
                           tensor[k][v] = static_cast<float>(c[k]);
                       }
                     },
                     {});
  const double scale = *std::max_element(largest.begin(), largest.end());
  core::parallel_for(used, voxels,
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t v = begin; v < end; ++v) {
                         const double gamma = detail::control_gain(mapping, magnitude[v], scale);
                         for (int k = 0; k < m; ++k)
                           tensor[k][v] = static_cast<float>(gamma * tensor[k][v]);
                       }
                     },
                     {});
}

}  // namespace ndconv
