// The FFT path's geometry and the direct-or-FFT choice (fft_policy.h). Host code only, compiled
// with or without CUDA: the engine's plan and the CI tests run it.
#include "cuda/fft/fft_policy.h"

#include <algorithm>
#include <climits>
#include <cstdio>

namespace ndconv::cuda_backend {

namespace {

bool smooth(int64_t n, int largest_prime, int factors_above_3) {
  int above_3 = 0;
  for (int64_t p = 2; p <= largest_prime && n > 1; ++p) {
    while (n % p == 0) {
      n /= p;
      above_3 += p > 3 ? 1 : 0;
    }
  }
  return n == 1 && above_3 <= factors_above_3;
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
  return text;
}

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  return text;
}

}  // namespace

int64_t fft_friendly_extent(int64_t n, bool even, int largest_prime, int factors_above_3) {
  int64_t m = n < 1 ? 1 : n;
  while (!smooth(m, largest_prime < 2 ? 2 : largest_prime,
                 factors_above_3 < 0 ? 0 : factors_above_3) ||
         (even && m % 2 != 0))
    ++m;
  return m;
}

int64_t fft_transform_extent(int64_t n, bool even, const FftPolicy& policy) {
  // At least 2: a box of 1 is padded rather than given to cuFFT as a transform of length 1.
  return std::max<int64_t>(
      2, fft_friendly_extent(n, even, policy.largest_prime, policy.factors_above_3));
}

FftShape fft_shape(int dims, const Index& output, const Index& filter, const FftPolicy& policy) {
  FftShape s;
  s.dims = dims;
  s.points = 1;
  for (int a = 0; a < dims; ++a) {
    s.box[a] = output[a] + filter[a] - 1;
    s.transform[a] = fft_transform_extent(s.box[a], a == 0, policy);
    s.points *= s.transform[a];
  }
  const int64_t half = s.transform[0] / 2 + 1;
  s.row_pitch = 2 * half;
  s.complex_points = s.points / s.transform[0] * half;
  s.buffer_bytes = static_cast<std::size_t>(s.complex_points) * 2 * sizeof(double);
  s.spectrum_bytes = s.buffer_bytes;
  return s;
}

double direct_seconds(int dims, const Index& output, const Index& filter, const FftPolicy& policy) {
  double fmas = 1;
  for (int a = 0; a < dims; ++a)
    fmas *= static_cast<double>(output[a]) * static_cast<double>(filter[a]);
  return fmas / policy.direct_fmas_per_second;
}

double fft_seconds(const FftShape& shape, FftCached cached, const FftPolicy& policy) {
  const double points = static_cast<double>(shape.points);
  return policy.fixed_seconds + points * policy.seconds_per_point +
         (cached.spectrum || cached.repeated ? 0.0 : points * policy.filter_seconds_per_point) +
         (cached.plans || cached.repeated ? 0.0 : policy.plan_seconds);
}

FftPolicy forced_fft_policy(FftPolicy policy) {
  policy.allowed = true;
  policy.min_speedup = 0;
  policy.direct_fmas_per_second = 1e-30;
  return policy;
}

FftBox make_fft_box(const detail::CorrelationProblem& p, const FftShape& shape) {
  FftBox g;
  for (int a = 0; a < shape.dims; ++a) {
    g.in_extent[a] = p.input.extent[a];
    g.in_stride[a] = p.input.stride[a];
    g.out_extent[a] = p.output.extent[a];
    g.out_stride[a] = p.output.stride[a];
    g.offset[a] = p.offset[a];
    g.box[a] = shape.box[a];
    g.filter[a] = p.filter_extent[a];
    g.transform[a] = shape.transform[a];
  }
  g.row_pitch = shape.row_pitch;
  g.boundary = static_cast<int>(p.boundary);
  return g;
}

std::string extent_text(int dims, const Index& extent) {
  std::string t;
  for (int a = 0; a < dims; ++a)
    t += (a ? "x" : "") + std::to_string(extent[a]);
  return t;
}

DenseMethodChoice choose_dense_method(int dims, const Index& output, const Index& filter,
                                      const FftPolicy& policy, bool taps_finite, double free_bytes,
                                      double work_bytes, FftCached cached) {
  DenseMethodChoice c;
  c.direct_seconds = direct_seconds(dims, output, filter, policy);
  if (dims < 2 || dims > 3) {
    c.reason =
        "direct: cuFFT's transforms here have 2 or 3 axes, the volume " + std::to_string(dims);
    return c;
  }
  for (int a = 0; a < dims; ++a) {
    if (output[a] < 1) {
      c.reason = "direct: no output";
      return c;
    }
  }
  c.shape = fft_shape(dims, output, filter, policy);
  c.fft_seconds = fft_seconds(c.shape, cached, policy);
  const std::string transform = "FFT " + extent_text(dims, c.shape.transform) + " (float64)";
  const std::string model = transform + " modelled " + ms(c.fft_seconds) +
                            (cached.plans      ? ""
                             : cached.repeated ? " (asked before: its plans made once)"
                                               : " with its plans made") +
                            " against direct " + ms(c.direct_seconds);
  if (!policy.allowed) {
    c.reason = "direct: the FFT is not allowed by the tuning";
    return c;
  }
  if (!taps_finite) {
    c.reason = "direct: a tap is not finite (an FFT would spread it to every output)";
    return c;
  }
  if (c.shape.complex_points * 2 > INT_MAX) {
    c.reason = "direct: " + transform + " has more points than one cuFFT plan takes here";
    return c;
  }
  if (c.fft_seconds * policy.min_speedup > c.direct_seconds) {
    c.reason = "direct: " + model;
    return c;
  }
  const double needed = static_cast<double>(c.shape.buffer_bytes) + work_bytes +
                        (cached.spectrum ? 0.0 : static_cast<double>(c.shape.spectrum_bytes));
  if (free_bytes >= 0 && needed > free_bytes) {
    c.reason = "direct: " + transform + " needs " + mib(needed) + " of device memory, " +
               mib(free_bytes) + " free";
    return c;
  }
  c.fft = true;
  c.reason = model;
  return c;
}

}  // namespace ndconv::cuda_backend
