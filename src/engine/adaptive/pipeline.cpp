// The adaptive filter's stages (ndconv/adaptive.h):
//  0. optionally, the input lowpass filtered and subsampled by 2 for the orientation estimate
//     (the control tensor is interpolated back before the reconstruction);
//  1. quadrature bank: the 2K real filters (real and imaginary parts of the K quadrature
//     filters) in one filter-bank pass per slab of the last axis; T = sum_k |q_k| M_k per voxel;
//  2. relaxation: Gaussian smoothing of T's components (filter_separable);
//  3. control tensor: T / (the largest eigenvalue or norm in the volume), per voxel the
//     eigen-decomposition T = sum_i l_i e_i e_i^T, C = m(x) sum_i mu(l_i / l_1) e_i e_i^T;
//  4. reconstruction: out = LP * f + sum_k <C, M_k> (HP_k * f), the filter bank's weighted sum
//     with the weights <C, M_k> written over C's components; then the blend with the input.
// A 4D volume is filtered in true 4D, or frame by frame in 3D.
// With the GPU, stages 1 to 4 keep their data on the device from the input's upload to the
// output's download (filter_volume_resident, src/cuda/bank/resident.cu) where the working set
// fits and the orientation is estimated at full resolution; otherwise each GPU stage takes its
// data from host memory and returns it there.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/parallel_for.h"
#include "engine/adaptive/bank_front.h"
#include "core/control_voxel.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "cuda/bank/bank_backend.h"

namespace ndconv {

namespace {

using Tensor = std::array<double, kMaxDims * kMaxDims>;

int component_count(int dims) {
  return dims * (dims + 1) / 2;
}

// Splits Options::progress into consecutive stages.
Options stage_options(const Options& options, double base, double span) {
  Options o = options;
  if (options.progress) {
    const std::function<bool(double)> outer = options.progress;
    o.progress = [outer, base, span](double f) { return outer(base + span * f); };
  }
  return o;
}

bool report_progress(const Options& options, double fraction) {
  if (options.progress && !options.progress(fraction))
    throw Aborted();
  return true;
}

int64_t voxels_of(int dims, const Index& extent) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

// Voxels of one index along the last axis.
int64_t plane_voxels(int dims, const Index& extent) {
  int64_t n = 1;
  for (int a = 0; a + 1 < dims; ++a)
    n *= extent[a];
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

namespace {

// The structure tensor's bank: the real part of quadrature filter q at 2q, its imaginary part at
// 2q + 1, run as a convolution over the `same` region (each filter flipped along every axis into
// correlation order), and the dual tensors of the filters' directions.
struct QuadratureBank {
  int dims = 0;
  int filters = 0;  // K
  Index extent{1, 1, 1, 1};
  std::vector<Tensor> duals;
  std::vector<float> flipped;  // 2K filters, correlation order
  Options options;

  // The bank over `planes` planes of the output from plane `first` of the last axis.
  detail::BankProblem slab(const ConstVolumeView& input, int64_t first, int64_t planes) const {
    const int last = dims - 1;
    detail::BankProblem p;
    p.input = input;
    p.filter_extent = extent;
    p.count = 2 * filters;
    p.taps = flipped.data();
    p.boundary = options.boundary;
    p.output_extent = input.extent;
    p.output_extent[last] = planes;
    for (int a = 0; a < dims; ++a) {
      const int64_t kk = extent[a];
      p.offset[a] = -(kk - 1 - kk / 2) + (a == last ? first : 0);
    }
    return p;
  }

  // The duals' upper triangles, filter by filter (the GPU's layout).
  std::vector<double> flat_duals() const {
    std::vector<double> flat;
    for (int q = 0; q < filters; ++q)
      for (int i = 0; i < dims; ++i)
        for (int j = i; j < dims; ++j)
          flat.push_back(duals[q][i * dims + j]);
    return flat;
  }
};

QuadratureBank quadrature_bank(int dims, const std::vector<DesignedFilter>& quadrature,
                               const Options& options) {
  if (quadrature.empty() || quadrature[0].imag.empty())
    throw InvalidArgument("structure_tensor needs complex quadrature filters");
  QuadratureBank b;
  b.dims = dims;
  b.filters = static_cast<int>(quadrature.size());
  b.extent = quadrature[0].extent;
  std::vector<std::array<double, kMaxDims>> directions;
  for (const DesignedFilter& f : quadrature)
    directions.push_back(f.direction);
  b.duals = dual_tensors(dims, directions);
  const size_t taps = quadrature[0].real.size();
  b.flipped.resize(2 * quadrature.size() * taps);
  for (size_t q = 0; q < quadrature.size(); ++q) {
    std::reverse_copy(quadrature[q].real.begin(), quadrature[q].real.end(),
                      b.flipped.begin() + 2 * q * taps);
    std::reverse_copy(quadrature[q].imag.begin(), quadrature[q].imag.end(),
                      b.flipped.begin() + (2 * q + 1) * taps);
  }
  b.options = options;
  b.options.operation = Operation::Convolution;
  b.options.region = OutputRegion::Same;
  return b;
}

}  // namespace

std::vector<std::vector<float>> structure_tensor(const ConstVolumeView& input,
                                                 const std::vector<DesignedFilter>& quadrature,
                                                 const Options& options, RunReport* report) {
  const int dims = input.dims;
  const QuadratureBank bank = quadrature_bank(dims, quadrature, options);
  const std::vector<Tensor>& duals = bank.duals;
  const int k = bank.filters;
  const int m = component_count(dims);
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
    const int64_t base = first * plane;
    core::parallel_for(threads, planes * plane,
                       [&](int64_t begin, int64_t end, int) {
                         for (int64_t v = begin; v < end; ++v) {
                           double t[kMaxDims * kMaxDims] = {};
                           for (int q = 0; q < k; ++q) {
                             const double magnitude =
                                 std::hypot(static_cast<double>(responses[2 * q][v]),
                                            static_cast<double>(responses[2 * q + 1][v]));
                             for (int e = 0; e < dims * dims; ++e)
                               t[e] += magnitude * duals[q][e];
                           }
                           int c = 0;
                           for (int i = 0; i < dims; ++i)
                             for (int j = i; j < dims; ++j)
                               tensor[c++][base + v] = static_cast<float>(t[i * dims + j]);
                         }
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

namespace {

// The relaxation's Gaussian: `sigma` voxels along every axis.
SeparableFilter relaxation_gaussian(int dims, double sigma) {
  std::array<double, kMaxDims> sigmas{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    sigmas[a] = sigma;
  return gaussian_filter(dims, sigmas, 3.0);
}

}  // namespace

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

namespace {

// The control mapping of `parameters`, checked.
detail::ControlMapping control_mapping(int dims, const AdaptiveParameters& parameters) {
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

void check_components(const std::vector<std::vector<float>>& tensor, int dims) {
  const int m = component_count(dims);
  if (static_cast<int>(tensor.size()) != m)
    throw InvalidArgument("the tensor has " + std::to_string(tensor.size()) +
                          " components, expected " + std::to_string(m));
}

}  // namespace

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

namespace {

// The reconstruction's bank: the lowpass, then the m highpass filters, run as a convolution over
// the `same` region, and the coefficients of its weights: 1 for the lowpass, <C, M_k> =
// sum_c coefficients[k * m + c] C_c for highpass k.
struct ReconstructionBank {
  int dims = 0;
  int count = 0;  // m + 1
  Index extent{1, 1, 1, 1};
  std::vector<float> taps;  // m + 1 filters, convolution order
  std::vector<double> coefficients;
  Options options;

  FilterBank filter_bank() const {
    FilterBank bank;
    bank.dims = dims;
    bank.extent = extent;
    bank.count = count;
    bank.taps = taps.data();
    return bank;
  }
};

ReconstructionBank reconstruction_bank(int dims, const std::vector<DesignedFilter>& reconstruction,
                                       const Options& options) {
  const int m = component_count(dims);
  if (static_cast<int>(reconstruction.size()) != m + 1)
    throw InvalidArgument("reconstruct needs the lowpass, " + std::to_string(m) +
                          " highpass filters and " + std::to_string(m) + " tensor components");
  std::vector<std::array<double, kMaxDims>> directions;
  for (int k = 1; k <= m; ++k)
    directions.push_back(reconstruction[k].direction);
  const std::vector<Tensor> duals = dual_tensors(dims, directions);
  ReconstructionBank b;
  b.dims = dims;
  b.count = m + 1;
  b.extent = reconstruction[0].extent;
  const size_t taps = reconstruction[0].real.size();
  b.taps.resize((m + 1) * taps);
  for (int k = 0; k <= m; ++k)
    std::copy(reconstruction[k].real.begin(), reconstruction[k].real.end(),
              b.taps.begin() + k * taps);
  for (int k = 0; k < m; ++k)
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j)
        b.coefficients.push_back((i == j ? 1.0 : 2.0) * duals[k][i * dims + j]);
  b.options = options;
  b.options.operation = Operation::Convolution;
  b.options.region = OutputRegion::Same;
  return b;
}

void check_blend(double blend) {
  if (!(blend >= 0 && blend <= 1))
    throw InvalidArgument("the blend with the input must lie in [0, 1]");
}

}  // namespace

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

namespace {

// The stages after the orientation input's downsampling with the data on the device from the
// first upload to the last download (cuda_bank::ResidentAdaptive), where both banks run on the
// GPU, the orientation is estimated at full resolution and the working set fits in the device's
// memory; appends the stage timings and returns true. Otherwise returns false having done nothing
// (`fallback_note` says why when it was the memory), and the stages go through host memory.
bool filter_volume_resident(const ConstVolumeView& input, const VolumeView& output,
                            const AdaptiveParameters& parameters, const Options& options,
                            const std::vector<DesignedFilter>& quadrature,
                            const std::vector<DesignedFilter>& reconstruction, double q_share,
                            AdaptiveReport& report, std::string& fallback_note) {
  const int dims = input.dims;
  if (parameters.orientation_downsampling != 1)
    return false;
  const QuadratureBank qb = quadrature_bank(dims, quadrature, options);
  const ReconstructionBank rb = reconstruction_bank(dims, reconstruction, options);
  RunReport quadrature_report, reconstruction_report;
  detail::choose_bank_backend(qb.options, quadrature_report, &qb.extent, dims);
  detail::choose_bank_backend(rb.options, reconstruction_report, &rb.extent, dims);
  if (quadrature_report.backend != Backend::Cuda || reconstruction_report.backend != Backend::Cuda)
    return false;
  // The parameters' checks of the control and reconstruction stages, before any GPU work.
  const detail::ControlMapping mapping = control_mapping(dims, parameters);
  check_blend(parameters.blend);

  cuda_bank::ResidentProblem problem;
  problem.quadrature = qb.slab(input, 0, input.extent[dims - 1]);
  problem.duals = qb.flat_duals();
  if (parameters.relaxation_sigma > 0)
    problem.relaxation = relaxation_gaussian(dims, parameters.relaxation_sigma);
  std::vector<float> flipped;
  problem.reconstruction = detail::prepare_bank(input, rb.filter_bank(), rb.options, flipped);
  problem.reconstruction.sum_output = output;
  problem.coefficients = rb.coefficients;
  cuda_bank::ResidentAdaptive gpu(problem, options);
  if (!gpu.fits()) {
    fallback_note = gpu.memory_note();
    return false;
  }

  auto t0 = std::chrono::steady_clock::now();
  report.quadrature_bank = quadrature_report;
  gpu.structure_tensor(report.quadrature_bank);
  report.quadrature_bank.seconds_total = seconds_since(t0);
  report.stage_seconds.emplace_back("quadrature bank and structure tensor", seconds_since(t0));
  report_progress(options, q_share);

  t0 = std::chrono::steady_clock::now();
  gpu.relax();
  report.stage_seconds.emplace_back("tensor relaxation", seconds_since(t0));
  report_progress(options, q_share + 0.03);

  t0 = std::chrono::steady_clock::now();
  gpu.control_tensor(mapping);
  report.stage_seconds.emplace_back("control tensor", seconds_since(t0));
  report_progress(options, q_share + 0.05);

  t0 = std::chrono::steady_clock::now();
  report.bank = reconstruction_report;
  gpu.reconstruct(parameters.blend, report.bank);
  report.bank.seconds_total = seconds_since(t0);
  report.bank.notes.push_back(gpu.memory_note());
  report.stage_seconds.emplace_back("reconstruction", seconds_since(t0));
  report_progress(options, 1.0);
  return true;
}

// The stages after the filter design, on one 2D, 3D or 4D volume; appends the stage timings.
void filter_volume(const ConstVolumeView& input, const VolumeView& output,
                   const AdaptiveParameters& parameters, const Options& options,
                   const std::vector<DesignedFilter>& quadrature,
                   const std::vector<DesignedFilter>& reconstruction, AdaptiveReport& report) {
  const int dims = input.dims;
  // Shares of the progress bar, roughly by work.
  const double q_taps = static_cast<double>(quadrature[0].real.size()) * 2 * quadrature.size();
  const double r_taps = static_cast<double>(reconstruction[0].real.size()) * reconstruction.size();
  const double q_share = q_taps / (q_taps + r_taps) * 0.95,
               r_share = r_taps / (q_taps + r_taps) * 0.95;

  // Orientation estimation, on the input or on its subsampled lowpass version.
  auto t0 = std::chrono::steady_clock::now();
  const bool downsample = parameters.orientation_downsampling == 2;
  Index coarse_extent = input.extent;
  std::vector<float> coarse;
  ConstVolumeView orientation_input = input;
  if (downsample) {
    coarse = downsample_for_orientation(input, options, coarse_extent);
    orientation_input = as_const(make_view(coarse.data(), dims, coarse_extent));
  }
  report.stage_seconds.emplace_back("lowpass and downsampling", seconds_since(t0));

  std::string fallback_note;  // why the GPU stages went through host memory
  if (filter_volume_resident(input, output, parameters, options, quadrature, reconstruction,
                             q_share, report, fallback_note))
    return;

  t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<float>> tensor = structure_tensor(
      orientation_input, quadrature, stage_options(options, 0, q_share), &report.quadrature_bank);
  report.stage_seconds.emplace_back("quadrature bank and structure tensor", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  relax_tensor(tensor, dims, coarse_extent, parameters.relaxation_sigma / (downsample ? 2.0 : 1.0),
               stage_options(options, q_share, 0.03));
  report.stage_seconds.emplace_back("tensor relaxation", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  bool on_gpu = false;
  RunReport chosen;
  detail::choose_bank_backend(options, chosen);
  if (chosen.backend == Backend::Cuda) {
    check_components(tensor, dims);
    on_gpu = cuda_bank::run_control_tensor(control_mapping(dims, parameters), tensor, options);
  }
  if (!on_gpu)
    control_tensor(tensor, dims, parameters, options.threads);
  if (downsample)
    upsample_tensor(tensor, dims, coarse_extent, input.extent, options.threads);
  report_progress(options, q_share + 0.05);
  report.stage_seconds.emplace_back("control tensor", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  report.bank = reconstruct(input, tensor, reconstruction, parameters.blend, output,
                            stage_options(options, q_share + 0.05, r_share));
  if (!fallback_note.empty())
    report.bank.notes.push_back(fallback_note);
  report.stage_seconds.emplace_back("reconstruction", seconds_since(t0));
  report_progress(options, 1.0);
}

}  // namespace

AdaptiveReport adaptive_filter(const ConstVolumeView& input, const VolumeView& output,
                               const AdaptiveParameters& parameters, const Options& options) {
  const auto t_start = std::chrono::steady_clock::now();
  AdaptiveReport report;
  if (input.data == nullptr || output.data == nullptr)
    throw InvalidArgument("the adaptive filter needs an input and an output volume");
  if (input.dims < 2 || input.dims > 4)
    throw InvalidArgument("the adaptive filter works on 2D, 3D and 4D volumes");
  if (output.dims != input.dims || output.extent != input.extent)
    throw InvalidArgument("the output volume must have the input's extents");
  for (int a = 0; a < input.dims; ++a)
    if (input.extent[a] < 1)
      throw InvalidArgument("the input volume is empty");
  if (parameters.orientation_downsampling != 1 && parameters.orientation_downsampling != 2)
    throw InvalidArgument("the orientation downsampling factor must be 1 or 2");
  const bool frames = input.dims == 4 && !parameters.time_as_axis;
  const int dims = frames ? 3 : input.dims;

  auto t0 = std::chrono::steady_clock::now();
  const std::vector<DesignedFilter> quadrature =
      design_quadrature_filters(dims, parameters.quadrature);
  const std::vector<DesignedFilter> reconstruction =
      design_reconstruction_filters(dims, parameters.reconstruction);
  const double design_seconds = seconds_since(t0);

  if (!frames) {
    report.stage_seconds.emplace_back("filter design", design_seconds);
    filter_volume(input, output, parameters, options, quadrature, reconstruction, report);
  } else {
    // Each 3D frame on its own, with the same filters; stage timings summed over the frames.
    const int64_t count = input.extent[3];
    for (int64_t t = 0; t < count; ++t) {
      ConstVolumeView in = input;
      VolumeView out = output;
      in.dims = out.dims = 3;
      in.extent[3] = out.extent[3] = 1;
      in.data += t * input.stride[3];
      out.data += t * output.stride[3];
      AdaptiveReport frame;
      frame.stage_seconds.emplace_back("filter design", t == 0 ? design_seconds : 0.0);
      filter_volume(in, out, parameters,
                    stage_options(options, static_cast<double>(t) / static_cast<double>(count),
                                  1.0 / static_cast<double>(count)),
                    quadrature, reconstruction, frame);
      if (t == 0) {
        report.stage_seconds = frame.stage_seconds;
      } else {
        for (size_t i = 0; i < frame.stage_seconds.size(); ++i)
          report.stage_seconds[i].second += frame.stage_seconds[i].second;
      }
      report.bank = frame.bank;
      report.quadrature_bank = frame.quadrature_bank;
    }
  }
  report.seconds_total = seconds_since(t_start);
  return report;
}

}  // namespace ndconv
