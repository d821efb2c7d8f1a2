// The fit of the adaptive filter's designed filters (design_fit.h): spatially limited filters
// fitted to an ideal frequency response by weighted least squares.
//
// The fit: taps h on the S^d grid x in [-S/2, S/2]^d, frequency response
// H(u) = sum_x h(x) exp(-i u.x) sampled on a uniform grid of M = odd(1.5 S) frequencies per axis,
// u_a = 2 pi j / M, j in [-(M-1)/2, (M-1)/2]. We minimise sum_u W(u) |H(u) - F(u)|^2 with
// W(u) = 1 / (|u| + 0.05 pi) (more weight at low frequencies, where image spectra have their
// energy; 100 times more at u = 0) by conjugate gradients on the normal equations A^H W A h =
// A^H W F, from h = 0 until the residual is below 1e-9 of the right-hand side. A is a separable
// DFT, applied axis by axis, so one product costs O(d M^d S) and no matrix is formed. On a uniform
// grid with M >= S the columns of A are orthogonal and A^H W A is a multilevel Toeplitz matrix
// with symbol W: its eigenvalues lie in [min W, max W] M^d, with one outlier from the peak at
// u = 0, and plain CG takes 20-30 iterations. Three things make the design fast
// (design_method.h): filters whose directions map onto each other by a signed permutation of
// the axes are solved once (3D: 6 quadrature filters from 1; 4D: 12 from 1, 10 highpass from 2);
// the preconditioner A'^H W^-1 A' on a grid of S + 2 points per axis cuts CG to under ten
// iterations; and real filters run their DFTs on the u_0 >= 0 half of the grid. The remaining
// solves run on several threads in 4D, and the most recent designs are kept in a small cache
// (design_cache.cpp).
#include "engine/adaptive/design_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel_for.h"

namespace ndconv::detail {

namespace {

using Complex = std::complex<double>;
using Vector = std::array<double, kMaxDims>;

// Separable DFTs between the S^d taps and a grid of M frequencies per axis, u_j = 2 pi j / M for
// j in [-(M-1)/2, (M-1)/2] (M odd). The half grid keeps u_0 >= 0 only: the response of real taps
// is Hermitian symmetric, so the other half holds nothing new.
struct DesignGrid {
  int dims = 0;
  int size = 0;                       // S
  int points = 0;                     // M
  int half_points = 0;                // (M + 1) / 2: the frequencies u >= 0
  std::vector<double> frequencies;    // M values
  std::vector<Complex> forward;       // [M][S]: exp(-i u_j x_q)
  std::vector<Complex> adjoint;       // [S][M]: exp(+i u_j x_q)
  std::vector<Complex> half_forward;  // [(M + 1) / 2][S]: the rows of `forward` with u_j >= 0
  // [S][(M + 1) / 2]: the columns of `adjoint` with u_j >= 0, doubled where u_j > 0, so that for
  // a Hermitian symmetric g (g(-u) = conj g(u)) the real part of half_adjoint g is adjoint g.
  std::vector<Complex> half_adjoint;

  DesignGrid(int d, int s, int m) : dims(d), size(s), points(m), half_points((m + 1) / 2) {
    const int half = points / 2, r = s / 2;
    for (int j = -half; j <= half; ++j)
      frequencies.push_back(2 * kPi * j / points);
    forward.resize(points * s);
    adjoint.resize(s * points);
    half_forward.resize(half_points * s);
    half_adjoint.resize(s * half_points);
    for (int j = 0; j < points; ++j)
      for (int q = 0; q < s; ++q) {
        const double phase = frequencies[j] * (q - r);
        forward[j * s + q] = Complex(std::cos(phase), -std::sin(phase));
        adjoint[q * points + j] = std::conj(forward[j * s + q]);
        if (j >= half) {
          half_forward[(j - half) * s + q] = forward[j * s + q];
          half_adjoint[q * half_points + j - half] =
              (j > half ? 2.0 : 1.0) * adjoint[q * points + j];
        }
      }
  }
  int axis_points(int axis, bool half) const { return half && axis == 0 ? half_points : points; }
  int64_t tap_count() const {
    int64_t c = 1;
    for (int a = 0; a < dims; ++a)
      c *= size;
    return c;
  }
  int64_t frequency_count(bool half) const {
    int64_t c = 1;
    for (int a = 0; a < dims; ++a)
      c *= axis_points(a, half);
    return c;
  }
  // The frequency vector of grid point `index` (x fastest).
  Vector frequency(int64_t index, bool half) const {
    Vector u{};
    for (int a = 0; a < dims; ++a) {
      const int n = axis_points(a, half);
      u[a] = frequencies[index % n + points - n];
      index /= n;
    }
    return u;
  }
  // A h: the response of the taps h on the grid (on the half grid, h must be real).
  std::vector<Complex> to_frequencies(std::vector<Complex> v, bool half) const {
    Extents ext = uniform(size);
    for (int a = 0; a < dims; ++a)
      v = along_axis(v, ext, a, half && a == 0 ? half_forward : forward, axis_points(a, half));
    return v;
  }
  // A^H g; on the half grid, A^H of g's Hermitian symmetric extension to the whole grid (real).
  std::vector<Complex> to_taps(std::vector<Complex> v, bool half) const {
    Extents ext = uniform(points);
    ext[0] = axis_points(0, half);
    for (int a = dims - 1; a >= 0; --a)
      v = along_axis(v, ext, a, half && a == 0 ? half_adjoint : adjoint, size);
    if (half)
      for (Complex& c : v)
        c = c.real();
    return v;
  }

 private:
  using Extents = std::array<int64_t, kMaxDims>;
  Extents uniform(int n) const {
    Extents ext{1, 1, 1, 1};
    for (int a = 0; a < dims; ++a)
      ext[a] = n;
    return ext;
  }
  // Applies `matrix` ([out_n][ext[axis]]) along `axis` of v; ext[axis] becomes out_n.
  std::vector<Complex> along_axis(const std::vector<Complex>& v, Extents& ext, int axis,
                                  const std::vector<Complex>& matrix, int out_n) const {
    const int64_t in_n = ext[axis];
    int64_t inner = 1, outer = 1;
    for (int b = 0; b < axis; ++b)
      inner *= ext[b];
    for (int b = axis + 1; b < dims; ++b)
      outer *= ext[b];
    std::vector<Complex> out(static_cast<size_t>(outer * out_n * inner));
    for (int64_t o = 0; o < outer; ++o)
      for (int p = 0; p < out_n; ++p) {
        Complex* dst = out.data() + (o * out_n + p) * inner;
        for (int64_t q = 0; q < in_n; ++q) {
          // Written out: std::complex's operator* handles infinities (C99 Annex G), which keeps
          // the loop from vectorising.
          const double mr = matrix[p * in_n + q].real(), mi = matrix[p * in_n + q].imag();
          const Complex* src = v.data() + (o * in_n + q) * inner;
          for (int64_t i = 0; i < inner; ++i)
            dst[i] = Complex(dst[i].real() + mr * src[i].real() - mi * src[i].imag(),
                             dst[i].imag() + mr * src[i].imag() + mi * src[i].real());
        }
      }
    ext[axis] = out_n;
    return out;
  }
};

// odd(1.5 S) frequencies per axis for the fit.
int fit_points(int size) {
  const int m = (3 * size + 1) / 2;
  return m % 2 == 0 ? m + 1 : m;
}

double dot(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i].real() * b[i].real() + a[i].imag() * b[i].imag();
  return s;
}

// 1 / (|u| + 0.05 pi), and 100 times that at u = 0: the DC response decides how much of the
// local mean leaks into the quadrature magnitudes and the highpass responses.
double frequency_weight(const Vector& u, int dims) {
  double rho = 0;
  for (int a = 0; a < dims; ++a)
    rho += u[a] * u[a];
  return (rho > 0 ? 1.0 : 100.0) / (std::sqrt(rho) + 0.05 * kPi);
}

// A^H diag(weight) A h on `grid` (weight sampled on the half grid where `half`).
std::vector<Complex> weighted_normal(const DesignGrid& grid, const std::vector<double>& weight,
                                     const std::vector<Complex>& h, bool half) {
  std::vector<Complex> response = grid.to_frequencies(h, half);
  for (size_t i = 0; i < response.size(); ++i)
    response[i] *= weight[i];
  return grid.to_taps(std::move(response), half);
}

// `scale` times frequency_weight(u)^power at every point of the grid.
std::vector<double> weights_on(const DesignGrid& grid, bool half, int power, double scale) {
  std::vector<double> w(grid.frequency_count(half));
  for (int64_t i = 0; i < static_cast<int64_t>(w.size()); ++i)
    w[i] = scale * std::pow(frequency_weight(grid.frequency(i, half), grid.dims), power);
  return w;
}

// Solves N h = b (N Hermitian positive definite) by conjugate gradients from h = 0, with z =
// precondition(r) as the preconditioner (the identity gives plain conjugate gradients). Stops
// when the residual |b - N h| is below 1e-9 |b|, or after 500 iterations; two preconditioners
// then give taps that agree to about 1e-7 of the largest tap, float precision.
template <typename Normal, typename Precondition>
std::vector<Complex> conjugate_gradients(const std::vector<Complex>& b, const Normal& normal,
                                         const Precondition& precondition) {
  const size_t n = b.size();
  std::vector<Complex> h(n), r = b, z = precondition(r), p = z;
  double rz = dot(r, z), rr = dot(r, r);
  const double stop = 1e-18 * rr;
  for (int it = 0; it < 500 && rr > stop; ++it) {
    const std::vector<Complex> ap = normal(p);
    const double alpha = rz / dot(p, ap);
    for (size_t i = 0; i < n; ++i) {
      h[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    rr = dot(r, r);
    if (rr <= stop)
      break;
    z = precondition(r);
    const double rz_next = dot(r, z);
    for (size_t i = 0; i < n; ++i)
      p[i] = z[i] + (rz_next / rz) * p[i];
    rz = rz_next;
  }
  return h;
}

// The grids of one design: the fit's, and the preconditioner's coarser one.
struct DesignGrids {
  DesignGrid fit;
  DesignGrid coarse;
  DesignGrids(int dims, int size)
      : fit(dims, size, fit_points(size)), coarse(dims, size, size + 2) {}
};

// Fits taps to target.ideal and fills `filter` (all but its direction).
void fit(const DesignGrids& grids, const DesignTarget& target, bool complex_taps,
         const DesignMethod& method, DesignedFilter& filter) {
  const DesignGrid& grid = grids.fit;
  const int dims = grid.dims;
  const int64_t n_freq = grid.frequency_count(false), n_taps = grid.tap_count();
  const std::vector<double> weight = weights_on(grid, false, 1, 1.0);
  std::vector<Complex> ideal(n_freq), weighted(n_freq);
  for (int64_t i = 0; i < n_freq; ++i) {
    ideal[i] = target.ideal(grid.frequency(i, false));
    weighted[i] = weight[i] * ideal[i];
  }
  // Real filters have a real, even ideal response and so a real right-hand side.
  const bool half = method.half_spectrum && !complex_taps;
  std::vector<Complex> rhs = grid.to_taps(weighted, false);
  if (half)
    for (Complex& c : rhs)
      c = c.real();
  const std::vector<double> iteration_weight = half ? weights_on(grid, true, 1, 1.0) : weight;
  auto normal = [&](const std::vector<Complex>& h) {
    return weighted_normal(grid, iteration_weight, h, half);
  };
  std::vector<Complex> h;
  if (method.preconditioned) {
    // A'^H W^-1 A' / M'^2d, the inverse of A'^H W A' when M' = S, on a grid of S + 2 points:
    // the preconditioned matrix's eigenvalues cluster within a factor of about 1.3, with one
    // outlier from the weight's peak at u = 0 (a grid of M points clusters them as well but
    // costs more; one of S points spreads them over a factor of 4 to 6).
    const double m = static_cast<double>(grids.coarse.frequency_count(false));
    const std::vector<double> inverse = weights_on(grids.coarse, half, -1, 1.0 / (m * m));
    h = conjugate_gradients(rhs, normal, [&](const std::vector<Complex>& r) {
      return weighted_normal(grids.coarse, inverse, r, half);
    });
  } else {
    h = conjugate_gradients(rhs, normal, [](const std::vector<Complex>& r) { return r; });
  }
  const std::vector<Complex> response = grid.to_frequencies(h, false);
  double err = 0, norm = 0;
  for (int64_t i = 0; i < n_freq; ++i) {
    err += weight[i] * std::norm(response[i] - ideal[i]);
    norm += weight[i] * std::norm(ideal[i]);
  }
  filter.extent = Index{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a)
    filter.extent[a] = grid.size;
  filter.real.resize(n_taps);
  Complex dc = 0;
  for (int64_t i = 0; i < n_taps; ++i) {
    filter.real[i] = static_cast<float>(h[i].real());
    dc += h[i];
  }
  if (complex_taps) {
    filter.imag.resize(n_taps);
    for (int64_t i = 0; i < n_taps; ++i)
      filter.imag[i] = static_cast<float>(h[i].imag());
  } else {
    dc = dc.real();
  }
  filter.dc_response = std::abs(dc);
  filter.ideal_dc_response = std::abs(target.ideal(Vector{}));
  filter.relative_error = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

// A signed permutation Q of the axes: (Q v)[a] = sign[a] v[from[a]].
struct AxisMap {
  std::array<int, kMaxDims> from{0, 1, 2, 3};
  std::array<int, kMaxDims> sign{1, 1, 1, 1};
};

// A signed permutation Q with Q m = n (to 1e-12), if there is one.
std::optional<AxisMap> axis_map(const Vector& m, const Vector& n, int dims) {
  AxisMap q;
  do {
    bool maps = true;
    for (int a = 0; a < dims && maps; ++a) {
      const double v = m[q.from[a]];
      q.sign[a] = std::abs(n[a] - v) <= 1e-12 ? 1 : -1;
      maps = std::abs(n[a] - q.sign[a] * v) <= 1e-12;
    }
    if (maps)
      return q;
  } while (std::next_permutation(q.from.begin(), q.from.begin() + dims));
  return std::nullopt;
}

// The filter h moved by Q: h'(x) = h(Q^T x), whose response is H(Q^T u).
DesignedFilter moved(const DesignedFilter& f, const AxisMap& q, int dims) {
  DesignedFilter g = f;
  const int s = static_cast<int>(f.extent[0]), r = s / 2;
  for (size_t t = 0; t < f.real.size(); ++t) {
    std::array<int, kMaxDims> y{};  // Q^T x: y[from[a]] = sign[a] x[a]
    size_t rest = t;
    for (int a = 0; a < dims; ++a) {
      y[q.from[a]] = q.sign[a] * (static_cast<int>(rest % s) - r);
      rest /= s;
    }
    size_t source = 0;
    for (int b = dims - 1; b >= 0; --b)
      source = source * s + (y[b] + r);
    g.real[t] = f.real[source];
    if (!f.imag.empty())
      g.imag[t] = f.imag[source];
  }
  return g;
}

// Runs design(k) for k < count on `threads` threads (0 = every hardware thread).
template <typename Design>
void design_in_parallel(int threads, int64_t count, Design design) {
  core::parallel_for(core::resolve_thread_count(threads), count,
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t k = begin; k < end; ++k)
                         design(k);
                     },
                     {});
}

}  // namespace

// Designs a filter of `size` taps per axis for every target; with method.reuse_symmetric, a
// target that a signed permutation maps from an earlier one of its family is that filter moved.
std::vector<DesignedFilter> design_filters(int dims, int size, bool complex_taps,
                                           const std::vector<DesignTarget>& targets,
                                           const DesignMethod& method) {
  if (size < 3 || size > 15 || size % 2 == 0)
    throw InvalidArgument("designed filters have an odd size from 3 to 15 taps per axis, not " +
                          std::to_string(size));
  const DesignGrids grids(dims, size);
  std::vector<int> source(targets.size());
  std::vector<AxisMap> maps(targets.size());
  std::vector<int> solved;
  for (size_t k = 0; k < targets.size(); ++k) {
    source[k] = static_cast<int>(k);
    for (int j : solved) {
      if (!method.reuse_symmetric || targets[j].family != targets[k].family)
        continue;
      if (const std::optional<AxisMap> q =
              axis_map(targets[j].direction, targets[k].direction, dims)) {
        source[k] = j;
        maps[k] = *q;
        break;
      }
    }
    if (source[k] == static_cast<int>(k))
      solved.push_back(source[k]);
  }
  // Threads pay only for 4D solves (some ms each); smaller ones take less than starting them.
  const bool large = grids.fit.frequency_count(false) * size >= 100000;
  std::vector<DesignedFilter> filters(targets.size());
  design_in_parallel(
      large ? method.threads : 1, static_cast<int64_t>(solved.size()),
      [&](int64_t i) { fit(grids, targets[solved[i]], complex_taps, method, filters[solved[i]]); });
  for (size_t k = 0; k < targets.size(); ++k) {
    if (source[k] != static_cast<int>(k))
      filters[k] = moved(filters[source[k]], maps[k], dims);
    filters[k].direction = targets[k].direction;
  }
  return filters;
}

}  // namespace ndconv::detail
