// The adaptive filter's orientation estimate (ndconv/adaptive.h, stages 0 and 1): the input's
// lowpass and subsampling for a coarse estimate, the structure tensor from the quadrature bank
// (on the GPU, or slab by slab on the CPU), and the tensor's interpolation back to full
// resolution.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_backend.h"
#include "engine/adaptive/bank_front.h"
#include "engine/adaptive/slab_stages.h"
#include "engine/adaptive/stage_banks.h"
#include "engine/adaptive/stage_support.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"

namespace ndconv {

using detail::component_count;
using detail::plane_voxels;
using detail::quadrature_bank;
using detail::QuadratureBank;
using detail::seconds_since;
using detail::stage_options;
using detail::Tensor;
using detail::voxels_of;

std::vector<std::vector<float>> structure_tensor(const ConstVolumeView& input,
                                                 const std::vector<DesignedFilter>& quadrature,
                                                 const Options& options, RunReport* report) {
  const int dims = input.dims;
  const QuadratureBank bank = quadrature_bank(dims, quadrature, options);
  const int k = bank.filters;
  const int m = component_count(dims);
  const std::vector<Tensor> upper_duals = bank.upper_duals();
  const Options& bank_options = bank.options;
  const Index extent = input.extent;
  const int64_t voxels = input.voxel_count();
  std::vector<std::vector<float>> tensor(m, std::vector<float>(static_cast<size_t>(voxels)));
  const int last = dims - 1;

  // On the GPU the responses stay on the device, where the tensor is formed.
  RunReport chosen;
  detail::choose_bank_backend(bank_options, chosen, &bank.extent, dims);
  if (chosen.backend == Backend::Cuda) {
    std::vector<float*> components;
    for (auto& c : tensor)
      components.push_back(c.data());
    const auto t0 = std::chrono::steady_clock::now();
    cuda_bank::run_structure_tensor(bank.slab(input, 0, extent[last]), bank.flat_duals(),
                                    components, bank_options, chosen);
    chosen.seconds_total = seconds_since(t0);
    if (report != nullptr)
      *report = chosen;
    return tensor;
  }

  // Slabs along the last axis keep the 2K responses under about 256 MiB.
  const int64_t plane = plane_voxels(dims, extent);
  const int64_t slab_planes =
      std::clamp<int64_t>((int64_t{256} << 20) / (2 * k * plane * 4), 1, extent[last]);
  std::vector<std::vector<float>> responses(
      2 * k, std::vector<float>(static_cast<size_t>(slab_planes * plane)));
  const int threads = core::resolve_thread_count(options.threads);
  for (int64_t first = 0; first < extent[last]; first += slab_planes) {
    const int64_t planes = std::min(slab_planes, extent[last] - first);
    detail::BankProblem p = bank.slab(input, first, planes);
    for (auto& r : responses)
      p.outputs.push_back(make_view(r.data(), dims, p.output_extent));
    const Options slab_options =
        stage_options(bank_options, static_cast<double>(first) / static_cast<double>(extent[last]),
                      static_cast<double>(planes) / static_cast<double>(extent[last]));
    const RunReport r = detail::run_bank_problem(p, slab_options);
    if (report != nullptr) {
      const double seconds = report->seconds_compute + r.seconds_compute;
      *report = r;
      report->seconds_compute = seconds;
      report->seconds_total = seconds;
    }
    std::vector<const float*> response_data;
    for (const auto& r : responses)
      response_data.push_back(r.data());
    std::vector<float*> components;
    for (auto& c : tensor)
      components.push_back(c.data());
    const int64_t base = first * plane;
    core::parallel_for(threads, planes * plane,
                       [&](int64_t begin, int64_t end, int) {
                         detail::tensor_from_responses(response_data.data(), k, m, upper_duals,
                                                       begin, components.data(), base + begin,
                                                       end - begin);
                       },
                       {});
  }
  return tensor;
}

std::vector<float> downsample_for_orientation(const ConstVolumeView& input, const Options& options,
                                              Index& coarse_extent) {
  const int dims = input.dims;
  const int spatial = dims == 4 ? 3 : dims;
  std::array<double, kMaxDims> sigmas{0, 0, 0, 0};
  for (int a = 0; a < spatial; ++a)
    sigmas[a] = 1.0;
  Options o = options;
  o.operation = Operation::Correlation;
  o.region = OutputRegion::Same;
  o.progress = {};
  std::vector<float> smooth(static_cast<size_t>(input.voxel_count()));
  filter_separable(input, gaussian_filter(dims, sigmas, 3.0),
                   make_view(smooth.data(), dims, input.extent), o);
  coarse_extent = input.extent;
  for (int a = 0; a < spatial; ++a)
    coarse_extent[a] = (input.extent[a] + 1) / 2;
  const VolumeView fine = make_view(smooth.data(), dims, input.extent);
  std::vector<float> coarse(static_cast<size_t>(voxels_of(dims, coarse_extent)));
  for (int64_t v = 0; v < static_cast<int64_t>(coarse.size()); ++v) {
    Index i{0, 0, 0, 0};
    int64_t rest = v;
    for (int a = 0; a < dims; ++a) {
      i[a] = (rest % coarse_extent[a]) * (a < spatial ? 2 : 1);
      rest /= coarse_extent[a];
    }
    coarse[v] = fine.at(i);
  }
  return coarse;
}

void upsample_tensor(std::vector<std::vector<float>>& tensor, int dims, const Index& coarse,
                     const Index& fine, int threads) {
  const int64_t voxels = voxels_of(dims, fine);
  const int used = core::resolve_thread_count(threads);
  for (auto& component : tensor) {
    const VolumeView from = make_view(component.data(), dims, coarse);
    std::vector<float> to(static_cast<size_t>(voxels));
    core::parallel_for(used, voxels,
                       [&](int64_t begin, int64_t end, int) {
                         for (int64_t v = begin; v < end; ++v) {
                           // Corners of the coarse cell around fine voxel v, and their weights
                           // along each axis.
                           Index base{0, 0, 0, 0};
                           std::array<double, kMaxDims> frac{0, 0, 0, 0};
                           int64_t rest = v;
                           for (int a = 0; a < dims; ++a) {
                             const int64_t i = rest % fine[a];
                             rest /= fine[a];
                             const bool subsampled = coarse[a] != fine[a];
                             base[a] = subsampled ? i / 2 : i;
                             frac[a] =
                                 subsampled && i % 2 == 1 && base[a] + 1 < coarse[a] ? 0.5 : 0.0;
                           }
                           double sum = 0;
                           for (int corner = 0; corner < (1 << dims); ++corner) {
                             double w = 1;
                             Index at = base;
                             for (int a = 0; a < dims; ++a) {
                               const bool upper = (corner >> a) & 1;
                               w *= upper ? frac[a] : 1 - frac[a];
                               at[a] += upper ? 1 : 0;
                             }
                             if (w > 0)
                               sum += w * from.at(at);
                           }
                           to[v] = static_cast<float>(sum);
                         }
                       },
                       {});
    component.swap(to);
  }
}

}  // namespace ndconv
