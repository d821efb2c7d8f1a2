#include "cpu/recursive_gaussian.h"

#include <cmath>
#include <complex>
#include <vector>

#include "core/parallel_for.h"

namespace ndconv::cpu {

namespace {

// Poles of the third-order filter for sigma 2 (Young, van Vliet and van Ginkel, "Recursive Gabor
// filtering", IEEE TSP 2002, the L-infinity optimised set), scaled as d^(1/q) to other sigmas.
const std::complex<double> kBasePoles[3] = {
    {1.41650, 1.00829}, {1.41650, -1.00829}, {1.86543, 0.0}};

// The variance of the forward-backward filter with these poles.
double filter_variance(double q) {
  double v = 0;
  for (const auto& d0 : kBasePoles) {
    const std::complex<double> d = std::pow(d0, 1.0 / q);
    v += (2.0 * d / ((d - 1.0) * (d - 1.0))).real();
  }
  return v;
}

}  // namespace

recursive::Coefficients young_van_vliet(double sigma) {
  // The scale q whose filter has variance sigma^2 exactly (Newton's method from sigma / 2, which
  // converges in a few steps: the variance grows smoothly, about as q^2).
  double q = sigma / 2;
  for (int i = 0; i < 50; ++i) {
    const double v = filter_variance(q), h = 1e-6 * q;
    const double slope = (filter_variance(q + h) - v) / h;
    const double step = (sigma * sigma - v) / slope;
    q += step;
    if (std::abs(step) < 1e-12 * q)
      break;
  }
  // The denominator prod_k (1 - z^-1 / d_k) = 1 - a1 z^-1 - a2 z^-2 - a3 z^-3.
  std::complex<double> c[4] = {1.0, 0.0, 0.0, 0.0};
  for (const auto& d0 : kBasePoles) {
    const std::complex<double> p = 1.0 / std::pow(d0, 1.0 / q);
    for (int k = 3; k >= 1; --k)
      c[k] -= p * c[k - 1];
  }
  recursive::Coefficients r;
  r.a1 = -c[1].real();
  r.a2 = -c[2].real();
  r.a3 = -c[3].real();
  r.B = 1 - (r.a1 + r.a2 + r.a3);  // unit gain at frequency 0
  return r;
}

int64_t recursive_margin(double sigma) {
  // The impulse response has decayed below 1e-7 of its peak by 6 sigma.
  return static_cast<int64_t>(std::ceil(6 * sigma)) + 3;
}

namespace {

// One axis: every line along `axis` of `from` filtered into `to` (which may be `from`: each line
// is read whole before it is written).
template <typename T>
void filter_axis(const BasicVolumeView<T>& from, const VolumeView& to, int axis, double sigma,
                 Boundary boundary, float outside, int threads,
                 const core::ProgressSpan& progress) {
  const recursive::Coefficients c = young_van_vliet(sigma);
  const int64_t n = from.extent[axis], margin = recursive_margin(sigma);
  const int64_t padded = n + 2 * margin;
  // The other axes, in order, for turning a line number into its first voxel.
  int others[kMaxDims - 1];
  int other_count = 0;
  int64_t lines = 1;
  for (int a = 0; a < from.dims; ++a) {
    if (a != axis) {
      others[other_count++] = a;
      lines *= from.extent[a];
    }
  }
  const int workers = core::resolve_thread_count(threads);
  std::vector<std::vector<double>> buffers(workers, std::vector<double>(padded));
  core::parallel_for(
      workers, lines,
      [&](int64_t begin, int64_t end, int worker) {
        std::vector<double>& w = buffers[worker];
        for (int64_t line = begin; line < end; ++line) {
          int64_t rest = line, in_offset = 0, out_offset = 0;
          for (int k = 0; k < other_count; ++k) {
            const int a = others[k];
            const int64_t i = rest % from.extent[a];
            rest /= from.extent[a];
            in_offset += i * from.stride[a];
            out_offset += i * to.stride[a];
          }
          const T* in = from.data + in_offset;
          float* out = to.data + out_offset;
          const int64_t step_in = from.stride[axis], step_out = to.stride[axis];
          recursive::filter_line(
              c, n, margin, static_cast<int>(boundary), outside,
              [&](int64_t i) { return in[i * step_in]; },
              [&](int64_t i) -> double& { return w[i]; },
              [&](int64_t i, double v) { out[i * step_out] = static_cast<float>(v); });
        }
      },
      progress);
}

}  // namespace

void recursive_gaussian(const ConstVolumeView& input, const VolumeView& output,
                        const std::array<double, kMaxDims>& sigma, Boundary boundary, float outside,
                        int threads, const std::function<bool(double)>& progress) {
  int passes = 0;
  for (int a = 0; a < input.dims; ++a)
    passes += sigma[a] > 0;
  int done = 0;
  bool first = true;
  for (int a = 0; a < input.dims; ++a) {
    if (!(sigma[a] > 0))
      continue;
    const core::ProgressSpan span{&progress, static_cast<double>(done) / passes, 1.0 / passes};
    if (first)
      filter_axis(input, output, a, sigma[a], boundary, outside, threads, span);
    else
      filter_axis(as_const(output), output, a, sigma[a], boundary, outside, threads, span);
    first = false;
    ++done;
  }
  if (first) {  // no axis filtered: a copy
    for (int64_t t = 0; t < input.extent[3]; ++t)
      for (int64_t z = 0; z < input.extent[2]; ++z)
        for (int64_t y = 0; y < input.extent[1]; ++y)
          for (int64_t x = 0; x < input.extent[0]; ++x)
            output.at({x, y, z, t}) = input.at({x, y, z, t});
  }
}

}  // namespace ndconv::cpu
