// The adaptive filter's control tensor on the CPU (ndconv/adaptive.h, stage 3): the checked
// control mapping of the parameters, and one eigen-decomposition per voxel (core/control_voxel.h,
// several voxels at once: control_batch.h) in two passes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/control_voxel.h"
#include "engine/adaptive/control_batch.h"
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

namespace {

// The first pass over voxels [begin, end): kControlLanes voxels at a time (control_batch.h), the
// rest one by one; C over T in `tensor`, the magnitudes in `magnitude`, their largest in `largest`.
template <int d>
void first_pass(const detail::ControlMapping& mapping, float* const* tensor, int64_t begin,
                int64_t end, float* magnitude, double& largest,
                const detail::MagnitudeRegion& region) {
  constexpr int m = d * (d + 1) / 2;
  constexpr int lanes = detail::kControlLanes;
  const cpu::JacobiLanesFn jacobi = cpu::select_jacobi_lanes();
  int64_t v = begin;
  for (; v + lanes <= end; v += lanes) {
    double t[m * lanes], c[m * lanes], x[lanes];
    for (int k = 0; k < m; ++k)
      for (int l = 0; l < lanes; ++l)
        t[k * lanes + l] = tensor[k][v + l];
    detail::control_shape_lanes<d>(jacobi, mapping, t, c, x);
    for (int l = 0; l < lanes; ++l) {
      magnitude[v + l] = static_cast<float>(x[l]);
      if (region.holds(v + l))
        largest = std::max(largest, x[l]);
    }
    for (int k = 0; k < m; ++k)
      for (int l = 0; l < lanes; ++l)
        tensor[k][v + l] = static_cast<float>(c[k * lanes + l]);
  }
  for (; v < end; ++v) {
    double t[m], c[m];
    for (int k = 0; k < m; ++k)
      t[k] = tensor[k][v];
    const double x = detail::control_shape_of<d>(mapping, t, c);
    magnitude[v] = static_cast<float>(x);
    if (region.holds(v))
      largest = std::max(largest, x);
    for (int k = 0; k < m; ++k)
      tensor[k][v] = static_cast<float>(c[k]);
  }
}

}  // namespace

double detail::control_shape_pass(const ControlMapping& mapping, float* const* tensor,
                                  float* magnitude, int64_t voxels, int threads,
                                  const std::function<bool(double)>& progress, double base,
                                  double span, const MagnitudeRegion& region) {
  const int used = core::resolve_thread_count(threads);
  std::vector<double> largest(used, 0.0);
  core::parallel_for(
      used, voxels,
      [&](int64_t begin, int64_t end, int worker) {
        switch (mapping.dims) {
          case 2:
            return first_pass<2>(mapping, tensor, begin, end, magnitude, largest[worker], region);
          case 3:
            return first_pass<3>(mapping, tensor, begin, end, magnitude, largest[worker], region);
          default:
            return first_pass<4>(mapping, tensor, begin, end, magnitude, largest[worker], region);
        }
      },
      {&progress, base, span});
  return *std::max_element(largest.begin(), largest.end());
}

double detail::control_largest_magnitude(const ControlMapping& mapping, float* const* tensor,
                                         float* scratch, int64_t voxels, double largest,
                                         int threads, const MagnitudeRegion& region) {
  const int m = component_count(mapping.dims);
  const int used = core::resolve_thread_count(threads);
  // A voxel's x is its largest eigenvalue or its norm |T| (or 0), never above |T|: with a margin
  // for the bound's rounding to float and the Jacobi rotations' rounding, a voxel whose bound does
  // not exceed the largest x found so far cannot change it.
  constexpr double kMargin = 1.0 + 1e-6;
  std::vector<double> bound_max(used, 0.0);
  std::vector<int64_t> at_max(used, -1);
  core::parallel_for(used, voxels,
                     [&](int64_t begin, int64_t end, int worker) {
                       for (int64_t v = begin; v < end; ++v) {
                         double t[kMaxDims * kMaxDims], a[kMaxDims * kMaxDims];
                         for (int k = 0; k < m; ++k)
                           t[k] = tensor[k][v];
                         double norm = 0;
                         switch (mapping.dims) {
                           case 2:
                             norm = control_matrix<2>(t, a);
                             break;
                           case 3:
                             norm = control_matrix<3>(t, a);
                             break;
                           default:
                             norm = control_matrix<4>(t, a);
                         }
                         // Voxels outside the region never count: bound 0 keeps them out.
                         const double bound = region.holds(v) ? std::sqrt(norm) : 0.0;
                         scratch[v] = static_cast<float>(bound);
                         if (bound > bound_max[worker]) {
                           bound_max[worker] = bound;
                           at_max[worker] = v;
                         }
                       }
                     },
                     {});
  // The voxels of the largest bounds first, then every voxel whose bound exceeds the largest x
  // found (the survivors moved to the front of the buffers), through the first pass.
  const auto exact = [&](int64_t count) {
    return count > 0 ? control_shape_pass(mapping, tensor, scratch, count, threads, {}, 0.0, 1.0)
                     : 0.0;
  };
  std::vector<float> seed(static_cast<size_t>(m * used));
  std::vector<float*> seed_tensor(m);
  int seeds = 0;
  for (int w = 0; w < used; ++w)
    if (at_max[w] >= 0) {
      for (int k = 0; k < m; ++k)
        seed[k * used + seeds] = tensor[k][at_max[w]];
      ++seeds;
    }
  for (int k = 0; k < m; ++k)
    seed_tensor[k] = seed.data() + k * used;
  std::vector<float> seed_magnitude(static_cast<size_t>(used));
  if (seeds > 0)
    largest = std::max(largest, control_shape_pass(mapping, seed_tensor.data(),
                                                   seed_magnitude.data(), seeds, 1, {}, 0.0, 1.0));
  int64_t kept = 0;
  for (int64_t v = 0; v < voxels; ++v) {
    if (!(static_cast<double>(scratch[v]) * kMargin > largest))  // NaN bounds: x is 0
      continue;
    for (int k = 0; k < m; ++k)
      tensor[k][kept] = tensor[k][v];
    ++kept;
  }
  return std::max(largest, exact(kept));
}

void detail::control_gain_pass(const ControlMapping& mapping, float* const* tensor,
                               const float* magnitude, int64_t voxels, double largest, int threads,
                               const std::function<bool(double)>& progress, double base,
                               double span) {
  const int m = component_count(mapping.dims);
  core::parallel_for(core::resolve_thread_count(threads), voxels,
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t v = begin; v < end; ++v) {
                         const double gamma = detail::control_gain(mapping, magnitude[v], largest);
                         for (int k = 0; k < m; ++k)
                           tensor[k][v] = static_cast<float>(gamma * tensor[k][v]);
                       }
                     },
                     {&progress, base, span});
}

detail::MagnitudeRegion detail::magnitude_region(int dims, const Index& extent,
                                                 const AdaptiveParameters& parameters) {
  MagnitudeRegion r;
  bool whole = true;
  for (int a = 0; a < dims; ++a) {
    const int64_t start = parameters.normalisation_start[a];
    const int64_t n = parameters.normalisation_extent[a] == 0 ? extent[a] - start
                                                              : parameters.normalisation_extent[a];
    if (start < 0 || n < 1 || start + n > extent[a])
      throw InvalidArgument("the normalisation box must be a non-empty box inside the volume");
    r.extent[a] = extent[a];
    r.lo[a] = start;
    r.hi[a] = start + n;
    whole = whole && start == 0 && n == extent[a];
  }
  r.dims = whole ? 0 : dims;
  if (!whole && parameters.orientation_downsampling != 1)
    throw InvalidArgument(
        "a normalisation box needs the orientation estimated at full resolution (no coarse "
        "orientation)");
  return r;
}

double detail::control_tensor_scaled(std::vector<std::vector<float>>& tensor, int dims,
                                     const AdaptiveParameters& parameters, int threads,
                                     const std::function<bool(double)>& progress,
                                     const MagnitudeRegion& region, bool gain) {
  check_components(tensor, dims);
  const detail::ControlMapping mapping = control_mapping(dims, parameters);
  const int64_t voxels = static_cast<int64_t>(tensor[0].size());
  // One eigen-decomposition per voxel (control_voxel.h): the first pass stores the eigenvalue
  // mapping's tensor over T and the magnitude x; the second scales by gamma once the largest x is
  // known.
  std::vector<float*> components;
  for (auto& c : tensor)
    components.push_back(c.data());
  std::vector<float> magnitude(static_cast<size_t>(voxels));
  const double largest = detail::control_shape_pass(mapping, components.data(), magnitude.data(),
                                                    voxels, threads, progress, 0.0, 0.9, region);
  const double scale = parameters.normalisation_scale.value_or(largest);
  if (gain)
    detail::control_gain_pass(mapping, components.data(), magnitude.data(), voxels, scale, threads,
                              progress, 0.9, 0.1);
  return scale;
}

void control_tensor(std::vector<std::vector<float>>& tensor, int dims,
                    const AdaptiveParameters& parameters, int threads,
                    const std::function<bool(double)>& progress) {
  detail::control_tensor_scaled(tensor, dims, parameters, threads, progress, {}, true);
}

}  // namespace ndconv
