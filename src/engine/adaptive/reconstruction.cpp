// The adaptive filter's reconstruction (ndconv/adaptive.h, stage 4): the reconstruction bank's
// weighted sum with the weights <C, M_k> formed from the control tensor (on the GPU, or on the
// CPU), then the blend with the input.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "core/view_copy.h"
#include "cuda/bank/bank_backend.h"
#include "engine/adaptive/bank_front.h"
#include "engine/adaptive/slab_stages.h"
#include "engine/adaptive/stage_banks.h"
#include "engine/adaptive/stage_support.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"

namespace ndconv {

using detail::check_blend;
using detail::component_count;
using detail::reconstruction_bank;
using detail::ReconstructionBank;
using detail::seconds_since;
using detail::stage_options;

void detail::check_blend(double blend) {
  if (!(blend >= 0 && blend <= 1))
    throw InvalidArgument("the blend with the input must lie in [0, 1]");
}

RunReport reconstruct(const ConstVolumeView& input, const std::vector<std::vector<float>>& control,
                      const std::vector<DesignedFilter>& reconstruction, double blend,
                      const VolumeView& output, const Options& options) {
  const int dims = input.dims;
  const int m = component_count(dims);
  if (static_cast<int>(reconstruction.size()) != m + 1 || static_cast<int>(control.size()) != m)
    throw InvalidArgument("reconstruct needs the lowpass, " + std::to_string(m) +
                          " highpass filters and " + std::to_string(m) + " tensor components");
  check_blend(blend);
  const ReconstructionBank rb = reconstruction_bank(dims, reconstruction, options);
  const FilterBank bank = rb.filter_bank();
  const std::vector<double>& coefficients = rb.coefficients;
  const Options& o = rb.options;
  const int64_t voxels = input.voxel_count();
  const Index extent = input.extent;

  RunReport report;
  // On the GPU the weights are formed there from the control tensor.
  detail::choose_bank_backend(o, report, &bank.extent, dims);
  if (report.backend == Backend::Cuda) {
    if (output.dims != dims || output.extent != extent)
      throw InvalidArgument("the output volume must have the input's extents");
    std::vector<float> flipped;
    detail::BankProblem p = detail::prepare_bank(input, bank, o, flipped);
    p.sum_output = output;
    std::vector<const float*> components;
    for (const auto& c : control)
      components.push_back(c.data());
    const auto t0 = std::chrono::steady_clock::now();
    cuda_bank::run_bank_with_control(p, components, coefficients, o, report);
    report.seconds_total = seconds_since(t0);
  }
  if (report.backend != Backend::Cuda) {
    // Slab by slab along z (y in 2D): the weights of one slab at a time (slab_stages.h).
    const int threads = core::resolve_thread_count(options.threads);
    const int axis = dims == 2 ? 1 : 2;
    const int64_t planes = extent[axis], plane = voxels / planes;
    const int64_t step = detail::reconstruction_slab_planes(dims, extent);
    std::vector<std::vector<float>> slab(m + 1,
                                         std::vector<float>(static_cast<size_t>(step * plane)));
    std::fill(slab[m].begin(), slab[m].end(), 1.0f);  // the lowpass's weights
    std::vector<float*> slab_weights;
    std::vector<const float*> weights{slab[m].data()};
    for (int c = 0; c < m; ++c) {
      slab_weights.push_back(slab[c].data());
      weights.push_back(slab[c].data());
    }
    double seconds = 0;
    for (int64_t z0 = 0; z0 < planes; z0 += step) {
      const int64_t n = std::min(step, planes - z0);
      for (int c = 0; c < m; ++c) {
        ConstVolumeView from = make_view(control[c].data(), dims, extent);
        from.data += z0 * from.stride[axis];
        from.extent[axis] = n;
        detail::gather(from, slab[c].data());
      }
      detail::weights_from_control(coefficients, m, slab_weights.data(), n * plane, threads);
      report = detail::reconstruct_planes(
          input, rb, weights, output, axis, z0, n,
          stage_options(o, static_cast<double>(z0) / planes, static_cast<double>(n) / planes));
      seconds += report.seconds_compute;
    }
    report.seconds_compute = report.seconds_total = seconds;
  }
  detail::blend_with_input(input, output, blend);
  return report;
}

}  // namespace ndconv
