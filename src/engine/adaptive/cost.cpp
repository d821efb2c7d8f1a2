// The adaptive filter's estimated CPU time (ndconv/adaptive.h): each stage as the CPU cost model
// (engine/backend_cost.h) sees it, summed; the measured table is in docs/performance.md.
#include <algorithm>
#include <cmath>

#include "core/parallel_for.h"
#include "engine/adaptive/stage_support.h"
#include "engine/backend_cost.h"
#include "ndconv/adaptive.h"

namespace ndconv {

using detail::CpuWork;

detail::AdaptiveStageSeconds detail::adaptive_stage_seconds(int dims, double voxels,
                                                            const AdaptiveParameters& p,
                                                            int threads) {
  const detail::CostConstants& k = detail::kCostConstants;
  const int m = detail::component_count(dims);
  // Quadrature directions: 3 in 2D, 6 in 3D, 12 in 4D; each a real and an imaginary filter.
  const int directions = dims == 2 ? 3 : dims == 3 ? 6 : 12;
  const double coarse = p.orientation_downsampling == 2 ? std::pow(0.5, std::min(dims, 3)) : 1.0;
  const auto seconds = [&](CpuWork::Kind kind, double outputs, double taps, int passes) {
    CpuWork w;
    w.kind = kind;
    w.output_voxels = static_cast<int64_t>(outputs);
    w.taps_per_output = taps;
    w.passes = passes;
    // The relaxation's components reuse one output buffer, allocated and touched once: its
    // passes cost what slab-by-slab ones do.
    w.slab_passes = kind == CpuWork::Kind::Separable;
    w.threads = threads;
    return detail::estimate_cpu_seconds(w, k);
  };
  // The banks: the padded copy; the quadrature's responses written, then read back to form the
  // tensor; the reconstruction's weights read by its fused sum (a second pass).
  const double q_taps = std::pow(p.quadrature.size, dims) * 2 * directions;
  const double r_taps = std::pow(p.reconstruction.size, dims) * (m + 1);
  AdaptiveStageSeconds s;
  s.orientation = seconds(CpuWork::Kind::Bank, voxels * coarse, q_taps, 1) +
                  voxels * coarse * 2 * directions * k.cpu_response_seconds_per_voxel / threads;
  s.reconstruction = seconds(CpuWork::Kind::Bank, voxels, r_taps, 2);
  const double sigma = p.relaxation_sigma / (coarse < 1 ? 2.0 : 1.0);
  if (sigma > 0) {
    const double taps = 2 * std::ceil(3 * sigma) + 1;
    s.relaxation = m * seconds(CpuWork::Kind::Separable, voxels * coarse, taps * dims, dims);
  }
  // The control tensor: one Jacobi eigen-decomposition per voxel, about d^3 work.
  s.control = voxels * coarse * k.cpu_control_seconds_per_voxel_cube * dims * dims * dims /
              std::max(1, threads);
  return s;
}

double adaptive_estimated_cpu_seconds(int dims, const Index& extent,
                                      const AdaptiveParameters& parameters, int threads) {
  const int used = core::resolve_thread_count(threads);
  double voxels = 1;
  for (int a = 0; a < dims; ++a)
    voxels *= static_cast<double>(extent[a]);
  // Frame by frame, a 4D series costs the sum of its 3D frames'.
  const int d = dims == 4 && !parameters.time_as_axis ? 3 : dims;
  return detail::adaptive_stage_seconds(d, voxels, parameters, used).total();
}

}  // namespace ndconv
