// Filter design for the adaptive filter (ndconv/adaptive.h): filter directions, dual tensors, and
// spatially limited filters fitted to an ideal frequency response by weighted least squares.
//
// The fit: taps h on the S^d grid x in [-S/2, S/2]^d, frequency response
// H(u) = sum_x h(x) exp(-i u.x) sampled on a uniform grid of M = odd(1.5 S) frequencies per axis,
// u_a = 2 pi j / M, j in [-(M-1)/2, (M-1)/2]. We minimise sum_u W(u) |H(u) - F(u)|^2 with
// W(u) = 1 / (|u| + 0.05 pi) (more weight at low frequencies, where image spectra have their
// energy; 100 times more at u = 0) by conjugate gradients on the normal equations A^H W A h = A^H W
// F. A is a separable DFT, applied axis by axis, so one iteration costs O(d M^d S) and no matrix is
// formed; on a uniform grid with M >= S the columns of A are orthogonal, so the system's condition
// number is at most max W / min W and CG converges in a few dozen iterations.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include "cpu/parallel_for.h"
#include "ndconv/adaptive.h"

namespace ndconv {

namespace {

using Complex = std::complex<double>;
using Vector = std::array<double, kMaxDims>;
constexpr double kPi = 3.14159265358979323846;

Vector normalised(Vector v, int dims) {
  double n = 0;
  for (int a = 0; a < dims; ++a)
    n += v[a] * v[a];
  n = std::sqrt(n);
  for (int a = 0; a < dims; ++a)
    v[a] /= n;
  return v;
}

void check_dims(int dims) {
  if (dims < 2 || dims > 4)
    throw InvalidArgument("adaptive filtering works on 2D, 3D and 4D volumes, not " +
                          std::to_string(dims) + "D");
}

// Symmetric d x d tensors in orthonormal coordinates (A_ii, sqrt 2 A_ij for i < j), so that the
// Frobenius inner product is the dot product.
int tensor_components(int dims) {
  return dims * (dims + 1) / 2;
}

std::vector<double> outer_coordinates(const Vector& n, int dims) {
  std::vector<double> c;
  for (int i = 0; i < dims; ++i)
    for (int j = i; j < dims; ++j)
      c.push_back(i == j ? n[i] * n[i] : std::sqrt(2.0) * n[i] * n[j]);
  return c;
}

// Solves the small dense system a x = b (Gaussian elimination with partial pivoting).
std::vector<double> solve_small(std::vector<double> a, std::vector<double> b) {
  const int n = static_cast<int>(b.size());
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c]))
        pivot = r;
    if (std::abs(a[pivot * n + c]) < 1e-12)
      throw InvalidArgument("the filter directions do not span the symmetric tensors");
    for (int k = 0; k < n; ++k)
      std::swap(a[c * n + k], a[pivot * n + k]);
    std::swap(b[c], b[pivot]);
    for (int r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int k = c; k < n; ++k)
        a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (int r = n - 1; r >= 0; --r) {
    double s = b[r];
    for (int k = r + 1; k < n; ++k)
      s -= a[r * n + k] * x[k];
    x[r] = s / a[r * n + r];
  }
  return x;
}

// The design problem's grids and separable transforms.
struct DesignGrid {
  int dims = 0;
  int size = 0;                     // S
  int points = 0;                   // M
  std::vector<double> frequencies;  // M values
  std::vector<Complex> forward;     // [M][S]: exp(-i u_j x_q)
  std::vector<Complex> adjoint;     // [S][M]: exp(+i u_j x_q)

  DesignGrid(int d, int s) : dims(d), size(s) {
    points = (3 * s + 1) / 2;
    points += points % 2 == 0 ? 1 : 0;
    const int half = points / 2, r = s / 2;
    for (int j = -half; j <= half; ++j)
      frequencies.push_back(2 * kPi * j / points);
    forward.resize(points * s);
    adjoint.resize(s * points);
    for (int j = 0; j < points; ++j)
      for (int q = 0; q < s; ++q) {
        const double phase = frequencies[j] * (q - r);
        forward[j * s + q] = Complex(std::cos(phase), -std::sin(phase));
        adjoint[q * points + j] = std::conj(forward[j * s + q]);
      }
  }
  int64_t count(int n) const {
    int64_t c = 1;
    for (int a = 0; a < dims; ++a)
      c *= n;
    return c;
  }
  // Applies `matrix` ([out_n][in_n]) along every axis in turn.
  std::vector<Complex> transform(std::vector<Complex> v, const std::vector<Complex>& matrix,
                                 int in_n, int out_n) const {
    std::array<int64_t, kMaxDims> ext{1, 1, 1, 1};
    for (int a = 0; a < dims; ++a)
      ext[a] = in_n;
    for (int a = 0; a < dims; ++a) {
      int64_t inner = 1, outer = 1;
      for (int b = 0; b < a; ++b)
        inner *= ext[b];
      for (int b = a + 1; b < dims; ++b)
        outer *= ext[b];
      std::vector<Complex> out(static_cast<size_t>(outer * out_n * inner));
      for (int64_t o = 0; o < outer; ++o)
        for (int p = 0; p < out_n; ++p) {
          Complex* dst = out.data() + (o * out_n + p) * inner;
          for (int q = 0; q < in_n; ++q) {
            const Complex m = matrix[p * in_n + q];
            const Complex* src = v.data() + (o * in_n + q) * inner;
            for (int64_t i = 0; i < inner; ++i)
              dst[i] += m * src[i];
          }
        }
      v.swap(out);
      ext[a] = out_n;
    }
    return v;
  }
  // The frequency vector of grid point `index` (x fastest).
  Vector frequency(int64_t index) const {
    Vector u{};
    for (int a = 0; a < dims; ++a) {
      u[a] = frequencies[index % points];
      index /= points;
    }
    return u;
  }
};

double dot(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += std::real(std::conj(a[i]) * b[i]);
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

// Fits taps to `ideal` (a function of the frequency vector) and fills `filter`.
template <typename Ideal>
void fit(int dims, int size, Ideal ideal, bool complex_taps, DesignedFilter& filter) {
  if (size < 3 || size > 15 || size % 2 == 0)
    throw InvalidArgument("designed filters have an odd size from 3 to 15 taps per axis, not " +
                          std::to_string(size));
  const DesignGrid grid(dims, size);
  const int64_t n_freq = grid.count(grid.points), n_taps = grid.count(size);
  std::vector<double> weight(n_freq);
  std::vector<Complex> target(n_freq);
  for (int64_t i = 0; i < n_freq; ++i) {
    const Vector u = grid.frequency(i);
    weight[i] = frequency_weight(u, dims);
    target[i] = ideal(u);
  }
  auto normal = [&](const std::vector<Complex>& h) {
    std::vector<Complex> response = grid.transform(h, grid.forward, size, grid.points);
    for (int64_t i = 0; i < n_freq; ++i)
      response[i] *= weight[i];
    return grid.transform(response, grid.adjoint, grid.points, size);
  };
  std::vector<Complex> weighted(n_freq);
  for (int64_t i = 0; i < n_freq; ++i)
    weighted[i] = weight[i] * target[i];
  const std::vector<Complex> rhs = grid.transform(weighted, grid.adjoint, grid.points, size);
  // Conjugate gradients from h = 0.
  std::vector<Complex> h(n_taps), r = rhs, p = rhs;
  double rr = dot(r, r);
  const double stop = 1e-18 * rr;  // residual 1e-9 of the right-hand side: below float precision
  for (int it = 0; it < 500 && rr > stop; ++it) {
    const std::vector<Complex> ap = normal(p);
    const double alpha = rr / dot(p, ap);
    for (int64_t i = 0; i < n_taps; ++i) {
      h[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_next = dot(r, r);
    for (int64_t i = 0; i < n_taps; ++i)
      p[i] = r[i] + (rr_next / rr) * p[i];
    rr = rr_next;
  }
  const std::vector<Complex> response = grid.transform(h, grid.forward, size, grid.points);
  double err = 0, norm = 0;
  for (int64_t i = 0; i < n_freq; ++i) {
    err += weight[i] * std::norm(response[i] - target[i]);
    norm += weight[i] * std::norm(target[i]);
  }
  filter.extent = Index{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a)
    filter.extent[a] = size;
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
  filter.ideal_dc_response = std::abs(ideal(Vector{}));
  filter.relative_error = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

double radius(const Vector& u, int dims) {
  double s = 0;
  for (int a = 0; a < dims; ++a)
    s += u[a] * u[a];
  return std::sqrt(s);
}

// (u_hat . n)^2, and whether u . n > 0.
double directional(const Vector& u, const Vector& n, int dims, bool& positive) {
  const double rho = radius(u, dims);
  double c = 0;
  for (int a = 0; a < dims; ++a)
    c += u[a] * n[a];
  positive = c > 0;
  return rho > 0 ? (c / rho) * (c / rho) : 0.0;
}

// Runs design(k) for k < count on every hardware thread (the filters are independent).
template <typename Design>
void design_in_parallel(int64_t count, Design design) {
  cpu::parallel_for(cpu::resolve_thread_count(0), count,
                    [&](int64_t begin, int64_t end, int) {
                      for (int64_t k = begin; k < end; ++k)
                        design(k);
                    },
                    {});
}

}  // namespace

std::vector<Vector> quadrature_directions(int dims) {
  check_dims(dims);
  std::vector<Vector> d;
  if (dims == 2) {
    for (int k = 0; k < 3; ++k)
      d.push_back({std::cos(k * kPi / 3), std::sin(k * kPi / 3), 0, 0});
  } else if (dims == 3) {
    const double a = 2, b = 1 + std::sqrt(5.0);
    for (const Vector& v : {Vector{a, 0, b, 0}, Vector{-a, 0, b, 0}, Vector{b, a, 0, 0},
                            Vector{b, -a, 0, 0}, Vector{0, b, a, 0}, Vector{0, b, -a, 0}})
      d.push_back(normalised(v, 3));
  } else {
    // The 24-cell: e_i + e_j and e_i - e_j for every pair of axes.
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        for (double s : {1.0, -1.0}) {
          Vector v{0, 0, 0, 0};
          v[i] = 1;
          v[j] = s;
          d.push_back(normalised(v, 4));
        }
  }
  return d;
}

std::vector<Vector> reconstruction_directions(int dims) {
  check_dims(dims);
  if (dims < 4)
    return quadrature_directions(dims);
  // The axes and the diagonals e_i + e_j: their outer products are a basis of the 10
  // symmetric 4 x 4 tensors.
  std::vector<Vector> d;
  for (int i = 0; i < 4; ++i) {
    Vector v{0, 0, 0, 0};
    v[i] = 1;
    d.push_back(v);
  }
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) {
      Vector v{0, 0, 0, 0};
      v[i] = 1;
      v[j] = 1;
      d.push_back(normalised(v, 4));
    }
  return d;
}

std::vector<std::array<double, kMaxDims * kMaxDims>> dual_tensors(
    int dims, const std::vector<Vector>& directions) {
  check_dims(dims);
  const int m = tensor_components(dims);
  // Frame operator S = sum_k c_k c_k^T; dual coordinates S^-1 c_k.
  std::vector<double> s(m * m, 0.0);
  std::vector<std::vector<double>> coords;
  for (const Vector& n : directions) {
    coords.push_back(outer_coordinates(n, dims));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        s[i * m + j] += coords.back()[i] * coords.back()[j];
  }
  std::vector<std::array<double, kMaxDims * kMaxDims>> duals;
  for (const auto& c : coords) {
    const std::vector<double> dual = solve_small(s, c);
    std::array<double, kMaxDims * kMaxDims> t{};
    int idx = 0;
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j, ++idx) {
        const double v = i == j ? dual[idx] : dual[idx] / std::sqrt(2.0);
        t[i * dims + j] = v;
        t[j * dims + i] = v;
      }
    duals.push_back(t);
  }
  return duals;
}

std::vector<DesignedFilter> design_quadrature_filters(int dims, const QuadratureDesign& design) {
  check_dims(dims);
  if (!(design.centre_frequency > 0 && design.centre_frequency < kPi))
    throw InvalidArgument("the quadrature filters' centre frequency must lie in (0, pi)");
  if (!(design.bandwidth_octaves > 0 && design.bandwidth_octaves <= 8))
    throw InvalidArgument("the quadrature filters' bandwidth must lie in (0, 8] octaves");
  const double c = 4.0 / (design.bandwidth_octaves * design.bandwidth_octaves * std::log(2.0));
  const std::vector<Vector> directions = quadrature_directions(dims);
  std::vector<DesignedFilter> filters(directions.size());
  design_in_parallel(static_cast<int64_t>(filters.size()), [&](int64_t k) {
    const Vector& n = directions[k];
    DesignedFilter& f = filters[k];
    f.direction = n;
    auto ideal = [&](const Vector& u) -> Complex {
      const double rho = radius(u, dims);
      if (rho <= 0)
        return 0.0;
      bool positive = false;
      const double d = directional(u, n, dims, positive);
      if (!positive)
        return 0.0;
      const double l = std::log(rho / design.centre_frequency);
      return std::exp(-c * l * l) * d;
    };
    fit(dims, design.size, ideal, true, f);
  });
  return filters;
}

std::vector<DesignedFilter> design_reconstruction_filters(int dims,
                                                          const ReconstructionDesign& design) {
  check_dims(dims);
  if (!(design.lowpass_sigma > 0 && design.lowpass_sigma <= 10))
    throw InvalidArgument("the lowpass sigma must lie in (0, 10] voxels");
  const double s2 = design.lowpass_sigma * design.lowpass_sigma;
  auto lowpass = [&](const Vector& u) {
    const double rho = radius(u, dims);
    return std::exp(-0.5 * rho * rho * s2);
  };
  std::vector<DesignedFilter> filters(1);
  fit(
      dims, design.size, [&](const Vector& u) -> Complex { return lowpass(u); }, false, filters[0]);
  for (const Vector& n : reconstruction_directions(dims)) {
    DesignedFilter f;
    f.direction = n;
    auto ideal = [&](const Vector& u) -> Complex {
      bool positive = false;
      return (1.0 - lowpass(u)) * directional(u, n, dims, positive);
    };
    fit(dims, design.size, ideal, false, f);
    filters.push_back(std::move(f));
  }
  return filters;
}

}  // namespace ndconv
