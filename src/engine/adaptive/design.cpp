// Filter design for the adaptive filter (ndconv/adaptive.h): filter directions, dual tensors, and
// spatially limited filters fitted to an ideal frequency response by weighted least squares.
//
// This file holds the filter families: their directions, the dual tensors, and the ideal
// responses of the quadrature and the reconstruction filters with their checks; the fit of taps
// to an ideal response is in design_fit.cpp, the cache of recent designs in design_cache.cpp.
#include <array>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "engine/adaptive/design_cache.h"
#include "engine/adaptive/design_fit.h"
#include "engine/adaptive/design_method.h"
#include "ndconv/adaptive.h"

namespace ndconv {

namespace {

using detail::DesignKey;
using detail::DesignMethod;
using detail::kPi;
using Complex = std::complex<double>;
using Vector = std::array<double, kMaxDims>;

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
  return detail::design_quadrature_filters(dims, design, DesignMethod{});
}

std::vector<DesignedFilter> design_reconstruction_filters(int dims,
                                                          const ReconstructionDesign& design) {
  return detail::design_reconstruction_filters(dims, design, DesignMethod{});
}

namespace detail {

DesignMethod plain_design_method() {
  DesignMethod method;
  method.reuse_symmetric = false;
  method.preconditioned = false;
  method.half_spectrum = false;
  method.threads = 1;
  method.cached = false;
  return method;
}

std::vector<DesignedFilter> design_quadrature_filters(int dims, const QuadratureDesign& design,
                                                      const DesignMethod& method) {
  check_dims(dims);
  if (!(design.centre_frequency > 0 && design.centre_frequency < kPi))
    throw InvalidArgument("the quadrature filters' centre frequency must lie in (0, pi)");
  if (!(design.bandwidth_octaves > 0 && design.bandwidth_octaves <= 8))
    throw InvalidArgument("the quadrature filters' bandwidth must lie in (0, 8] octaves");
  const DesignKey key{0, dims, design.size, {design.centre_frequency, design.bandwidth_octaves}};
  return cached_design(key, method, [&] {
    const double c = 4.0 / (design.bandwidth_octaves * design.bandwidth_octaves * std::log(2.0));
    const double centre = design.centre_frequency;
    std::vector<detail::DesignTarget> targets;
    for (const Vector& n : quadrature_directions(dims))
      targets.push_back({n, 0, [=](const Vector& u) -> Complex {
                           const double rho = radius(u, dims);
                           if (rho <= 0)
                             return 0.0;
                           bool positive = false;
                           const double d = directional(u, n, dims, positive);
                           if (!positive)
                             return 0.0;
                           const double l = std::log(rho / centre);
                           return std::exp(-c * l * l) * d;
                         }});
    return detail::design_filters(dims, design.size, true, targets, method);
  });
}

std::vector<DesignedFilter> design_reconstruction_filters(int dims,
                                                          const ReconstructionDesign& design,
                                                          const DesignMethod& method) {
  check_dims(dims);
  if (!(design.lowpass_sigma > 0 && design.lowpass_sigma <= 10))
    throw InvalidArgument("the lowpass sigma must lie in (0, 10] voxels");
  const DesignKey key{1, dims, design.size, {design.lowpass_sigma, 0.0}};
  return cached_design(key, method, [&] {
    const double s2 = design.lowpass_sigma * design.lowpass_sigma;
    auto lowpass = [=](const Vector& u) {
      const double rho = radius(u, dims);
      return std::exp(-0.5 * rho * rho * s2);
    };
    std::vector<detail::DesignTarget> targets{
        {Vector{}, 0, [=](const Vector& u) -> Complex { return lowpass(u); }}};
    for (const Vector& n : reconstruction_directions(dims))
      targets.push_back({n, 1, [=](const Vector& u) -> Complex {
                           bool positive = false;
                           return (1.0 - lowpass(u)) * directional(u, n, dims, positive);
                         }});
    return detail::design_filters(dims, design.size, false, targets, method);
  });
}

}  // namespace detail
}  // namespace ndconv
