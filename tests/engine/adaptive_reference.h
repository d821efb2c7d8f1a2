// The float64 reference of the adaptive filter, in plain loops, written from the definitions in
// ndconv/adaptive.h without the engine's code: filtering with an explicit boundary map, the dual
// tensors of the quadrature directions in closed form (M_k = a n n^T - b I with
// a = d (d + 2) / (2 K), b = d / (2 K)), the reconstruction weights <C, M_k> as the solution of
// sum_k w_k n_k n_k^T = C, and a max-pivot Jacobi eigensolver.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "ndconv/adaptive.h"

namespace ndconv::test {

using Matrix = std::array<double, kMaxDims * kMaxDims>;

/// Input index the boundary reads for i (or -1 for a zero).
inline int64_t reference_boundary(int64_t i, int64_t n, Boundary b) {
  if (i >= 0 && i < n)
    return i;
  if (b == Boundary::Zero)
    return -1;
  if (b == Boundary::Replicate)
    return i < 0 ? 0 : n - 1;
  if (b == Boundary::Periodic)
    return ((i % n) + n) % n;
  if (b == Boundary::Reflect) {
    while (i < 0 || i >= n)  // reflect repeating the edge
      i = i < 0 ? -1 - i : 2 * n - 1 - i;
    return i;
  }
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)  // mirror without repeating the edge
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/// Convolution (same region) of a contiguous volume with taps of `extent` (x fastest).
inline std::vector<double> reference_convolve(const std::vector<double>& in, int dims,
                                              const Index& n, const std::vector<float>& taps,
                                              const Index& k, Boundary boundary) {
  int64_t voxels = 1, tap_count = 1;
  for (int a = 0; a < dims; ++a) {
    voxels *= n[a];
    tap_count *= k[a];
  }
  std::vector<double> out(voxels, 0.0);
  for (int64_t v = 0; v < voxels; ++v) {
    Index o{};
    int64_t rest = v;
    for (int a = 0; a < dims; ++a) {
      o[a] = rest % n[a];
      rest /= n[a];
    }
    double s = 0;
    for (int64_t t = 0; t < tap_count; ++t) {
      int64_t r = t, offset = 0, stride = 1;
      bool zero = false;
      for (int a = 0; a < dims; ++a) {
        const int64_t j = r % k[a];
        r /= k[a];
        // convolution: out[i] = sum_j f[j] in[i - j + c], c = k / 2 (odd k)
        const int64_t i = reference_boundary(o[a] - j + k[a] / 2, n[a], boundary);
        if (i < 0)
          zero = true;
        offset += i * stride;
        stride *= n[a];
      }
      if (!zero)
        s += static_cast<double>(taps[t]) * in[offset];
    }
    out[v] = s;
  }
  return out;
}

inline int reference_components(int dims) {
  return dims * (dims + 1) / 2;
}

/// T = sum_k |q_k| (a n_k n_k^T - b I), components (i <= j) row by row.
inline std::vector<std::vector<double>> reference_structure_tensor(
    const std::vector<double>& in, int dims, const Index& n,
    const std::vector<DesignedFilter>& quadrature, Boundary boundary) {
  const double kk = static_cast<double>(quadrature.size());
  const double a = dims * (dims + 2) / (2 * kk), b = dims / (2 * kk);
  std::vector<std::vector<double>> t(reference_components(dims),
                                     std::vector<double>(in.size(), 0.0));
  for (const DesignedFilter& q : quadrature) {
    const auto re = reference_convolve(in, dims, n, q.real, q.extent, boundary);
    const auto im = reference_convolve(in, dims, n, q.imag, q.extent, boundary);
    for (size_t v = 0; v < in.size(); ++v) {
      const double m = std::sqrt(re[v] * re[v] + im[v] * im[v]);
      int c = 0;
      for (int i = 0; i < dims; ++i)
        for (int j = i; j < dims; ++j, ++c)
          t[c][v] += m * (a * q.direction[i] * q.direction[j] - (i == j ? b : 0.0));
    }
  }
  return t;
}

/// Eigenvalues (decreasing) and eigenvectors (rows) by Jacobi rotations on the largest
/// off-diagonal element.
inline void reference_eigen(int d, Matrix a, double* values, Matrix& vectors) {
  Matrix v{};
  for (int i = 0; i < d; ++i)
    v[i * d + i] = 1;
  for (int it = 0; it < 200; ++it) {
    int p = 0, q = 1;
    for (int i = 0; i < d; ++i)
      for (int j = i + 1; j < d; ++j)
        if (std::abs(a[i * d + j]) > std::abs(a[p * d + q])) {
          p = i;
          q = j;
        }
    if (std::abs(a[p * d + q]) < 1e-300)
      break;
    const double phi = 0.5 * std::atan2(2 * a[p * d + q], a[q * d + q] - a[p * d + p]);
    const double c = std::cos(phi), s = std::sin(phi);
    Matrix r{};
    for (int i = 0; i < d; ++i)
      r[i * d + i] = 1;
    r[p * d + p] = c;
    r[q * d + q] = c;
    r[p * d + q] = s;
    r[q * d + p] = -s;
    Matrix ar{}, rtar{}, vr{};
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        for (int k = 0; k < d; ++k) {
          ar[i * d + j] += a[i * d + k] * r[k * d + j];
          vr[i * d + j] += v[i * d + k] * r[k * d + j];
        }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        for (int k = 0; k < d; ++k)
          rtar[i * d + j] += r[k * d + i] * ar[k * d + j];
    a = rtar;
    v = vr;
  }
  std::vector<int> order(d);
  for (int i = 0; i < d; ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](int x, int y) { return a[x * d + x] > a[y * d + y]; });
  for (int i = 0; i < d; ++i) {
    values[i] = a[order[i] * d + order[i]];
    for (int k = 0; k < d; ++k)
      vectors[i * d + k] = v[k * d + order[i]];
  }
}

/// The control tensor from the (relaxed) structure tensor, as documented in ndconv/adaptive.h.
inline std::vector<std::vector<double>> reference_control_tensor(
    const std::vector<std::vector<double>>& t, int dims, const AdaptiveParameters& p) {
  const size_t voxels = t[0].size();
  auto matrix = [&](size_t v) {
    Matrix m{};
    int c = 0;
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j, ++c)
        m[i * dims + j] = m[j * dims + i] = t[c][v];
    return m;
  };
  const bool by_norm = p.normalisation == TensorNormalisation::Norm;
  double scale = 0;
  std::vector<double> values(voxels * dims);
  std::vector<Matrix> vectors(voxels);
  std::vector<double> norms(voxels);
  for (size_t v = 0; v < voxels; ++v) {
    const Matrix m = matrix(v);
    double n2 = 0;
    for (int e = 0; e < dims * dims; ++e)
      n2 += m[e] * m[e];
    norms[v] = std::sqrt(n2);
    reference_eigen(dims, m, &values[v * dims], vectors[v]);
    scale = std::max(scale, by_norm ? norms[v] : values[v * dims]);
  }
  std::vector<std::vector<double>> out(t.size(), std::vector<double>(voxels, 0.0));
  for (size_t v = 0; v < voxels; ++v) {
    const double l1 = values[v * dims];
    if (!(l1 > 0) || !(scale > 0))
      continue;
    const double x = (by_norm ? norms[v] : l1) / scale;
    const double gamma =
        std::pow(x, p.magnitude_beta) /
        (std::pow(x, p.magnitude_beta) + std::pow(p.magnitude_sigma, p.magnitude_beta));
    Matrix c{};
    for (int i = 0; i < dims; ++i) {
      const double r = std::min(1.0, std::max(0.0, values[v * dims + i] / l1));
      const double num = std::pow(r * (1 - p.eigen_alpha), p.eigen_beta);
      const double den = num + std::pow(p.eigen_alpha * (1 - r), p.eigen_beta);
      const double mu = den > 0 ? num / den : 0.0;
      for (int a = 0; a < dims; ++a)
        for (int b = 0; b < dims; ++b)
          c[a * dims + b] += gamma * mu * vectors[v][i * dims + a] * vectors[v][i * dims + b];
    }
    int k = 0;
    for (int i = 0; i < dims; ++i)
      for (int j = i; j < dims; ++j, ++k)
        out[k][v] = c[i * dims + j];
  }
  return out;
}

/// out = LP * f + sum_k w_k (HP_k * f) with sum_k w_k n_k n_k^T = C, then the blend.
inline std::vector<double> reference_reconstruct(const std::vector<double>& in, int dims,
                                                 const Index& n,
                                                 const std::vector<std::vector<double>>& control,
                                                 const std::vector<DesignedFilter>& filters,
                                                 double blend, Boundary boundary) {
  const int m = reference_components(dims);
  std::vector<double> out =
      reference_convolve(in, dims, n, filters[0].real, filters[0].extent, boundary);
  // The m x m system: row (i, j), column k: n_k[i] n_k[j].
  std::vector<double> a(m * m);
  int row = 0;
  for (int i = 0; i < dims; ++i)
    for (int j = i; j < dims; ++j, ++row)
      for (int k = 0; k < m; ++k)
        a[row * m + k] = filters[k + 1].direction[i] * filters[k + 1].direction[j];
  std::vector<std::vector<double>> responses;
  for (int k = 0; k < m; ++k)
    responses.push_back(
        reference_convolve(in, dims, n, filters[k + 1].real, filters[k + 1].extent, boundary));
  for (size_t v = 0; v < in.size(); ++v) {
    std::vector<double> lu = a, w(m);
    for (int r = 0; r < m; ++r)
      w[r] = control[r][v];
    for (int c = 0; c < m; ++c) {  // Gaussian elimination, partial pivoting
      int piv = c;
      for (int r = c + 1; r < m; ++r)
        if (std::abs(lu[r * m + c]) > std::abs(lu[piv * m + c]))
          piv = r;
      for (int k = 0; k < m; ++k)
        std::swap(lu[c * m + k], lu[piv * m + k]);
      std::swap(w[c], w[piv]);
      for (int r = c + 1; r < m; ++r) {
        const double f = lu[r * m + c] / lu[c * m + c];
        for (int k = c; k < m; ++k)
          lu[r * m + k] -= f * lu[c * m + k];
        w[r] -= f * w[c];
      }
    }
    for (int r = m - 1; r >= 0; --r) {
      for (int k = r + 1; k < m; ++k)
        w[r] -= lu[r * m + k] * w[k];
      w[r] /= lu[r * m + r];
    }
    for (int k = 0; k < m; ++k)
      out[v] += w[k] * responses[k][v];
    out[v] = (1 - blend) * out[v] + blend * in[v];
  }
  return out;
}

/// Subsampling by 2 along the spatial axes (all but t in 4D) of `in` (already lowpass filtered):
/// coarse voxel i is fine voxel 2 i. Returns the coarse extents in `coarse`.
inline std::vector<double> reference_subsample(const std::vector<double>& in, int dims,
                                               const Index& n, Index& coarse) {
  const int spatial = dims == 4 ? 3 : dims;
  coarse = n;
  for (int a = 0; a < spatial; ++a)
    coarse[a] = (n[a] + 1) / 2;
  std::vector<double> out;
  for (int64_t t = 0; t < coarse[3]; ++t)
    for (int64_t z = 0; z < coarse[2]; ++z)
      for (int64_t y = 0; y < coarse[1]; ++y)
        for (int64_t x = 0; x < coarse[0]; ++x) {
          const int64_t fx = 2 * x, fy = spatial > 1 ? 2 * y : y, fz = spatial > 2 ? 2 * z : z;
          out.push_back(in[((t * n[2] + fz) * n[1] + fy) * n[0] + fx]);
        }
  return out;
}

/// Linear interpolation back: fine voxel i lies at coarse position i / 2 along every axis whose
/// extent differs; at the last coarse voxel the value is repeated.
inline std::vector<double> reference_upsample(const std::vector<double>& c, int dims,
                                              const Index& coarse, const Index& fine) {
  int64_t voxels = 1;
  for (int a = 0; a < dims; ++a)
    voxels *= fine[a];
  std::vector<double> out(voxels);
  for (int64_t v = 0; v < voxels; ++v) {
    std::array<int64_t, kMaxDims> lo{}, hi{};
    std::array<double, kMaxDims> w{};
    int64_t rest = v;
    for (int a = 0; a < dims; ++a) {
      const int64_t i = rest % fine[a];
      rest /= fine[a];
      if (coarse[a] == fine[a]) {
        lo[a] = hi[a] = i;
        w[a] = 0;
      } else {
        const double pos = std::min(i / 2.0, static_cast<double>(coarse[a] - 1));
        lo[a] = static_cast<int64_t>(std::floor(pos));
        hi[a] = std::min(lo[a] + 1, coarse[a] - 1);
        w[a] = pos - static_cast<double>(lo[a]);
      }
    }
    double s = 0;
    for (int corner = 0; corner < (1 << dims); ++corner) {
      double weight = 1;
      int64_t index = 0, stride = 1;
      for (int a = 0; a < dims; ++a) {
        const bool upper = (corner >> a) & 1;
        weight *= upper ? w[a] : 1 - w[a];
        index += (upper ? hi[a] : lo[a]) * stride;
        stride *= coarse[a];
      }
      s += weight * c[index];
    }
    out[v] = s;
  }
  return out;
}

}  // namespace ndconv::test
