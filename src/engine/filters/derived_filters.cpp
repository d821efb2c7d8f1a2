// Filters made of one or more engine calls (filter_separable, filter_dense) and a voxel-wise
// combination: the box mean, Gaussian derivatives, gradient magnitude, Laplacian of Gaussian,
// unsharp masking and normalized (masked) convolution. Every engine call runs on the backend the
// options choose, so these run on the GPU as well as the CPU.
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>

#include "engine/filter_checks.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"
#include "ndconv/gaussian.h"

namespace ndconv {

namespace {

// A contiguous float32 volume with the input's shape, for intermediate results.
struct Scratch {
  std::vector<float> values;
  VolumeView view;
  explicit Scratch(const ConstVolumeView& like) {
    values.assign(static_cast<size_t>(like.voxel_count()), 0.0f);
    view = make_view(values.data(), like.dims, like.extent, like.spacing);
  }
};

// Calls `f(linear index into a contiguous volume, voxel index)` for every voxel of `extent`.
template <typename F>
void for_each_voxel(int dims, const Index& extent, F f) {
  int64_t i = 0;
  const Index e{extent[0], dims > 1 ? extent[1] : 1, dims > 2 ? extent[2] : 1,
                dims > 3 ? extent[3] : 1};
  for (int64_t t = 0; t < e[3]; ++t)
    for (int64_t z = 0; z < e[2]; ++z)
      for (int64_t y = 0; y < e[1]; ++y)
        for (int64_t x = 0; x < e[0]; ++x, ++i)
          f(i, Index{x, y, z, t});
}

void check_same_extents(const ConstVolumeView& a, const ConstVolumeView& b, const char* what) {
  bool same = a.dims == b.dims;
  for (int d = 0; same && d < a.dims; ++d)
    same = a.extent[d] == b.extent[d];
  if (!same)
    throw InvalidArgument(std::string(what) + " does not have the input's extents");
}

// Runs several engine calls as one: each reports progress as its share of the whole, and the
// timings add up in one report.
class Runs {
 public:
  Runs(const Options& options, int count) : options_(options), count_(count) {}

  RunReport& total() { return total_; }

  template <typename Call>
  void run(Call call) {
    Options o = options_;
    const int index = done_;
    if (options_.progress) {
      o.progress = [this, index](double f) {
        return options_.progress((index + f) / static_cast<double>(count_));
      };
    }
    const RunReport r = call(o);
    const double total_seconds = total_.seconds_total + r.seconds_total;
    const double upload = total_.seconds_upload + r.seconds_upload;
    const double compute = total_.seconds_compute + r.seconds_compute;
    const double download = total_.seconds_download + r.seconds_download;
    total_ = r;
    total_.seconds_total = total_seconds;
    total_.seconds_upload = upload;
    total_.seconds_compute = compute;
    total_.seconds_download = download;
    ++done_;
  }

 private:
  const Options& options_;
  int count_;
  int done_ = 0;
  RunReport total_;
};

std::array<double, kMaxDims> spatial_sigma_checked(const ConstVolumeView& input,
                                                   const std::array<double, kMaxDims>& sigma) {
  for (int a = 0; a < spatial_axes(input.dims); ++a) {
    if (!(sigma[a] > 0) || !std::isfinite(sigma[a]))
      throw InvalidArgument("sigma must be a positive number of voxels along every spatial axis");
  }
  return sigma;
}

// Runs one Gaussian derivative filter per spatial axis (order `order` along it, 0 along the
// others) and hands each result to `accumulate(axis, derivative)`.
RunReport per_axis_derivatives(
    const ConstVolumeView& input, const std::array<double, kMaxDims>& sigma, int order,
    double truncate, const Options& options,
    const std::function<void(int, const std::vector<float>&)>& accumulate) {
  const int spatial = spatial_axes(input.dims);
  spatial_sigma_checked(input, sigma);
  Options correlation = options;
  correlation.operation = Operation::Correlation;
  correlation.region = OutputRegion::Same;
  Runs runs(correlation, spatial);
  Scratch derivative(input);
  for (int axis = 0; axis < spatial; ++axis) {
    std::array<int, kMaxDims> orders{0, 0, 0, 0};
    orders[axis] = order;
    const SeparableFilter f =
        gaussian_derivative_filter(input.dims, sigma, orders, input.spacing, truncate);
    runs.run([&](const Options& o) { return filter_separable(input, f, derivative.view, o); });
    accumulate(axis, derivative.values);
  }
  return runs.total();
}

}  // namespace

SeparableFilter box_filter(int dims, const Index& extent) {
  SeparableFilter f;
  f.dims = dims;
  for (int a = 0; a < dims; ++a) {
    if (extent[a] < 0 || extent[a] > kMaxSeparableExtent) {
      throw InvalidArgument("a box of " + std::to_string(extent[a]) + " voxels is outside 1.." +
                            std::to_string(kMaxSeparableExtent));
    }
    if (extent[a] > 1)
      f.taps[a].assign(static_cast<size_t>(extent[a]), static_cast<float>(1.0 / extent[a]));
  }
  return f;
}

std::vector<float> gaussian_derivative_taps(double sigma_voxels, int order, double truncate) {
  if (order < 0 || order > 2)
    throw InvalidArgument("derivative order " + std::to_string(order) + " is not 0, 1 or 2");
  const std::vector<float> smoothing = gaussian_taps(sigma_voxels, truncate);
  if (order == 0)
    return smoothing;
  // Recompute the normalised Gaussian in float64, then multiply by the derivative's polynomial
  // (scipy's _gaussian_kernel1d); correlation order flips the odd one.
  const int64_t radius = static_cast<int64_t>(smoothing.size() / 2);
  const double s2 = sigma_voxels * sigma_voxels;
  std::vector<double> phi(smoothing.size());
  double sum = 0;
  for (int64_t m = -radius; m <= radius; ++m) {
    phi[m + radius] = std::exp(-0.5 * static_cast<double>(m * m) / s2);
    sum += phi[m + radius];
  }
  std::vector<float> taps(phi.size());
  for (int64_t m = -radius; m <= radius; ++m) {
    const double x = static_cast<double>(m);
    const double p = phi[m + radius] / sum;
    taps[m + radius] =
        static_cast<float>(order == 1 ? x / s2 * p : (x * x / (s2 * s2) - 1.0 / s2) * p);
  }
  return taps;
}

SeparableFilter gaussian_derivative_filter(int dims, const std::array<double, kMaxDims>& sigma,
                                           const std::array<int, kMaxDims>& orders,
                                           const std::array<double, kMaxDims>& spacing,
                                           double truncate) {
  SeparableFilter f;
  f.dims = dims;
  for (int a = 0; a < dims; ++a) {
    if (sigma[a] == 0 && orders[a] == 0)
      continue;
    f.taps[a] = gaussian_derivative_taps(sigma[a], orders[a], truncate);
    if (orders[a] > 0) {
      const double h = std::abs(spacing[a]);
      if (!(h > 0) || !std::isfinite(h))
        throw InvalidArgument("the spacing along axis " + std::to_string(a) +
                              " is not a positive number; derivatives need it");
      const double scale = 1.0 / std::pow(h, orders[a]);
      for (float& t : f.taps[a])
        t = static_cast<float>(t * scale);
    }
  }
  return f;
}

namespace {

// Sums term(derivative) of the given order over the spatial axes, in float64, and writes
// finish(sum) into the output.
RunReport combine_derivatives(const ConstVolumeView& input, const VolumeView& output,
                              const std::array<double, kMaxDims>& sigma, int order,
                              const Options& options, double truncate, double (*term)(double),
                              double (*finish)(double)) {
  check_same_extents(input, as_const(output), "the output volume");
  std::vector<double> sum(static_cast<size_t>(input.voxel_count()), 0.0);
  RunReport r = per_axis_derivatives(input, sigma, order, truncate, options,
                                     [&](int, const std::vector<float>& d) {
                                       for (size_t i = 0; i < d.size(); ++i)
                                         sum[i] += term(d[i]);
                                     });
  for_each_voxel(input.dims, input.extent, [&](int64_t i, const Index& at) {
    output.at(at) = static_cast<float>(finish(sum[i]));
  });
  return r;
}

double square(double v) {
  return v * v;
}
double identity(double v) {
  return v;
}
double square_root(double v) {
  return std::sqrt(v);
}

}  // namespace

RunReport gradient_magnitude(const ConstVolumeView& input, const VolumeView& output,
                             const std::array<double, kMaxDims>& sigma, const Options& options,
                             double truncate) {
  return combine_derivatives(input, output, sigma, 1, options, truncate, square, square_root);
}

RunReport laplacian_of_gaussian(const ConstVolumeView& input, const VolumeView& output,
                                const std::array<double, kMaxDims>& sigma, const Options& options,
                                double truncate) {
  return combine_derivatives(input, output, sigma, 2, options, truncate, identity, identity);
}

RunReport unsharp_mask(const ConstVolumeView& input, const VolumeView& output,
                       const UnsharpParameters& p, const Options& options) {
  check_same_extents(input, as_const(output), "the output volume");
  if (!std::isfinite(p.amount))
    throw InvalidArgument("the amount must be a number");
  if (!(p.threshold >= 0) || !std::isfinite(p.threshold))
    throw InvalidArgument("the threshold must be a number >= 0");
  const SeparableFilter blur = gaussian_filter(input.dims, p.sigma_voxels, p.truncate);
  Options correlation = options;
  correlation.operation = Operation::Correlation;
  correlation.region = OutputRegion::Same;
  Scratch blurred(input);
  RunReport r = filter_separable(input, blur, blurred.view, correlation);
  for_each_voxel(input.dims, input.extent, [&](int64_t i, const Index& at) {
    const double v = input.at(at);
    const double d = v - blurred.values[i];
    output.at(at) = static_cast<float>(std::abs(d) > p.threshold ? v + p.amount * d : v);
  });
  return r;
}

RunReport masked_filter(const ConstVolumeView& input, const ConstVolumeView& mask,
                        const VolumeView& output, const MaskedOptions& masked,
                        const Options& options, const VolumeFilter& call) {
  detail::backend_boundary(options, "the masked (normalized) convolution");
  check_same_extents(input, mask, "the mask");
  check_same_extents(input, as_const(output), "the output volume");
  Scratch weighted(input), weight(input), filtered(input), filtered_weight(input);
  for_each_voxel(input.dims, input.extent, [&](int64_t i, const Index& at) {
    const float m = mask.at(at) != 0 ? 1.0f : 0.0f;
    weight.values[i] = m;
    weighted.values[i] = m != 0 ? input.at(at) : 0.0f;
  });
  Runs runs(options, 2);
  runs.run([&](const Options& o) { return call(as_const(weighted.view), filtered.view, o); });
  runs.run([&](const Options& o) { return call(as_const(weight.view), filtered_weight.view, o); });
  // Weights below this fraction of the centre's are rounding noise of a filter that sums to 0
  // there, not a neighbourhood.
  constexpr float kSmallestWeight = 1e-6f;
  for_each_voxel(input.dims, input.extent, [&](int64_t i, const Index& at) {
    const float w = filtered_weight.values[i];
    if (weight.values[i] != 0 && std::abs(w) > kSmallestWeight)
      output.at(at) = filtered.values[i] / w;
    else
      output.at(at) = masked.keep_input_outside ? input.at(at) : masked.outside_value;
  });
  return runs.total();
}

namespace {

// The engine call that applies `filter` (filter_dense or filter_separable, by its type).
template <typename Filter>
VolumeFilter engine_call(const Filter& filter) {
  return [&filter](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
    if constexpr (std::is_same_v<Filter, DenseFilter>)
      return filter_dense(in, filter, out, o);
    else
      return filter_separable(in, filter, out, o);
  };
}

}  // namespace

RunReport masked_filter_separable(const ConstVolumeView& input, const ConstVolumeView& mask,
                                  const SeparableFilter& filter, const VolumeView& output,
                                  const MaskedOptions& masked, const Options& options) {
  return masked_filter(input, mask, output, masked, options, engine_call(filter));
}

RunReport masked_filter_dense(const ConstVolumeView& input, const ConstVolumeView& mask,
                              const DenseFilter& filter, const VolumeView& output,
                              const MaskedOptions& masked, const Options& options) {
  return masked_filter(input, mask, output, masked, options, engine_call(filter));
}

}  // namespace ndconv
