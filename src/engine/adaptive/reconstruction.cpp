// The adaptive filter's reconstruction (ndconv/adaptive.h, stage 4): the reconstruction bank's
// weighted sum with the weights <C, M_k> formed from the control tensor (on the GPU, or on the
// CPU), then the blend with the input.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_backend.h"
#include "engine/adaptive/bank_front.h"
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
    std::vector<std::vector<float>> weights(m + 1, std::vector<float>(static_cast<size_t>(voxels)));
    std::fill(weights[0].begin(), weights[0].end(), 1.0f);
    const int threads = core::resolve_thread_count(options.threads);
    core::parallel_for(threads, voxels,
                       [&](int64_t begin, int64_t end, int) {
                         for (int64_t v = begin; v < end; ++v)
                           for (int k = 0; k < m; ++k) {
                             double s = 0;
                             for (int c = 0; c < m; ++c)
                               s += coefficients[k * m + c] * control[c][v];
                             weights[k + 1][v] = static_cast<float>(s);
                           }
                       },
                       {});
    std::vector<ConstVolumeView> weight_views;
    for (const auto& w : weights)
      weight_views.push_back(make_view(w.data(), dims, extent));
    report = filter_bank_weighted_sum(input, bank, weight_views, output, o);
  }
  if (blend > 0) {
    Index i{0, 0, 0, 0};
    for (int64_t v = 0; v < voxels; ++v) {
      int64_t rest = v;
      for (int a = 0; a < dims; ++a) {
        i[a] = rest % extent[a];
        rest /= extent[a];
      }
      float& out = output.at(i);
      out = static_cast<float>((1 - blend) * out + blend * input.at(i));
    }
  }
  return report;
}

}  // namespace ndconv
