// Kernels from a short text (`box:3x3x3`, `gauss:1.5`, `sobel:x`, `laplace`, ...), so that
// `convolve` and `ndconv kernel` need no hand-written kernel file.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/number_text.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"
#include "ndconv/gaussian.h"

namespace ndconv {

namespace {

struct SpecText {
  std::string name;
  std::vector<double> values;  ///< the numbers after ':' (empty when there are none)
  std::string axis;            ///< sobel / prewitt: the axis name
};

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

[[noreturn]] void fail(const std::string& spec, const std::string& why) {
  throw InvalidArgument("kernel '" + spec + "': " + why);
}

SpecText split(const std::string& spec) {
  SpecText s;
  const size_t colon = spec.find(':');
  s.name = spec.substr(0, colon);
  if (colon == std::string::npos)
    return s;
  const std::string args = spec.substr(colon + 1);
  if (args.empty())
    fail(spec, "nothing after ':'");
  if (s.name == "sobel" || s.name == "prewitt") {
    s.axis = args;
    return s;
  }
  size_t pos = 0;
  while (true) {
    const size_t x = args.find('x', pos);
    const std::string part = args.substr(pos, x == std::string::npos ? x : x - pos);
    double v = 0;
    if (!detail::parse_number(part, v) || v < 0)
      fail(spec, "'" + part + "' is not a non-negative number");
    s.values.push_back(v);
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  return s;
}

int axis_index(const std::string& spec, const std::string& axis, int spatial) {
  static const char* names[] = {"x", "y", "z"};
  for (int a = 0; a < spatial; ++a) {
    if (axis == names[a] || axis == std::to_string(a))
      return a;
  }
  fail(spec, "axis '" + axis + "' is not one of the image's spatial axes (x, y" +
                 (spatial == 3 ? ", z" : "") + ")");
}

// The per-axis values for an image of `dims`: one value over the spatial axes, or one per
// spatial axis, or one per axis.
std::array<double, kMaxDims> per_axis(const std::string& spec, const std::vector<double>& values,
                                      int dims, double unused_axis) {
  const int spatial = spatial_axes(dims);
  const int n = static_cast<int>(values.size());
  std::array<double, kMaxDims> out{unused_axis, unused_axis, unused_axis, unused_axis};
  if (n == 1) {
    for (int a = 0; a < spatial; ++a)
      out[a] = values[0];
  } else if (n == spatial || n == dims) {
    for (int a = 0; a < n; ++a)
      out[a] = values[a];
  } else {
    fail(spec, std::to_string(n) + " values for a " + std::to_string(dims) +
                   "D image; give one, or one per axis");
  }
  return out;
}

void check_extent(const std::string& spec, const Kernel& k) {
  const int64_t limit = k.dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D;
  for (int a = 0; a < k.dims; ++a) {
    if (k.extent[a] > limit) {
      fail(spec, "needs " + std::to_string(k.extent[a]) + " taps along axis " + std::to_string(a) +
                     "; the limit for " + std::to_string(k.dims) + "D kernels is " +
                     std::to_string(limit) +
                     " (smooth and mean filter with larger separable filters)");
    }
  }
}

// A kernel of `extent` whose tap at each index (x fastest) is `tap(index)`.
template <typename Tap>
Kernel make_kernel(int dims, const Index& extent, Tap tap) {
  Kernel k;
  k.dims = dims;
  k.extent = extent;
  k.taps.reserve(static_cast<size_t>(extent[0] * extent[1] * extent[2] * extent[3]));
  for (int64_t t = 0; t < extent[3]; ++t)
    for (int64_t z = 0; z < extent[2]; ++z)
      for (int64_t y = 0; y < extent[1]; ++y)
        for (int64_t x = 0; x < extent[0]; ++x)
          k.taps.push_back(static_cast<float>(tap(Index{x, y, z, t})));
  return k;
}

// The outer product of one 1D filter per axis (an empty one is a single tap 1).
Kernel outer_product(int dims, const std::array<std::vector<float>, kMaxDims>& axes) {
  Index extent{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a)
    extent[a] = axes[a].empty() ? 1 : static_cast<int64_t>(axes[a].size());
  return make_kernel(dims, extent, [&](const Index& at) {
    double v = 1;
    for (int a = 0; a < dims; ++a)
      v *= axes[a].empty() ? 1.0 : axes[a][at[a]];
    return v;
  });
}

Kernel difference_kernel(const std::string& spec, const SpecText& s, int dims, float side) {
  if (s.axis.empty())
    fail(spec, "name the axis, e.g. " + s.name + ":x");
  const int spatial = spatial_axes(dims);
  const int along = axis_index(spec, s.axis, spatial);
  std::array<std::vector<float>, kMaxDims> axes;
  for (int a = 0; a < spatial; ++a)
    axes[a] = a == along ? std::vector<float>{1, 0, -1} : std::vector<float>{1, side, 1};
  return outer_product(dims, axes);
}

}  // namespace

DenseFilter Kernel::filter() const {
  DenseFilter f;
  f.dims = dims;
  f.extent = extent;
  f.taps = taps.data();
  return f;
}

const char* kernel_spec_grammar() {
  return "box:N[xN...] (mean of N voxels per axis), gauss:S[xS...] (Gaussian, sigma S voxels, "
         "4-sigma radius, sum 1), sphere:R[xR...] (mean over an ellipsoid of radius R voxels), "
         "sobel:AXIS and prewitt:AXIS (central difference along AXIS = x, y or z), laplace "
         "(discrete Laplacian); one value applies to every spatial axis";
}

int spatial_axes(int dims) {
  return dims == 4 ? 3 : dims;
}

int kernel_spec_dims(const std::string& spec) {
  const SpecText s = split(spec);
  return s.values.size() > 1 ? static_cast<int>(s.values.size()) : 3;
}

Kernel parse_kernel_spec(const std::string& spec, int dims) {
  const SpecText s = split(spec);
  if (dims == 0)
    dims = kernel_spec_dims(spec);
  if (dims < 2 || dims > 4)
    fail(spec, "kernels are 2D, 3D or 4D, not " + std::to_string(dims) + "D");
  Kernel k;
  if (s.name == "box") {
    if (s.values.empty())
      fail(spec, "give the size, e.g. box:3 or box:3x3x1");
    const auto n = per_axis(spec, s.values, dims, 1);
    std::array<std::vector<float>, kMaxDims> axes;
    for (int a = 0; a < dims; ++a) {
      if (n[a] < 1 || n[a] != std::floor(n[a]))
        fail(spec, "box sizes are whole numbers of voxels >= 1");
      if (n[a] > static_cast<double>(kMaxDenseExtent3D))
        fail(spec, "box size " + std::to_string(static_cast<long long>(n[a])) +
                       " is beyond the dense limit; use `ndconv mean`");
      axes[a].assign(static_cast<size_t>(n[a]), static_cast<float>(1.0 / n[a]));
    }
    k = outer_product(dims, axes);
  } else if (s.name == "gauss" || s.name == "gaussian") {
    if (s.values.empty())
      fail(spec, "give sigma in voxels, e.g. gauss:1.5");
    const auto sigma = per_axis(spec, s.values, dims, 0);
    std::array<std::vector<float>, kMaxDims> axes;
    for (int a = 0; a < dims; ++a) {
      if (sigma[a] > 0 && 2 * std::floor(4 * sigma[a] + 0.5) + 1 > kMaxDenseExtent3D)
        fail(spec, "sigma " + number(sigma[a]) +
                       " voxels is too wide for a dense kernel (at most 3.75); use `ndconv "
                       "smooth`");
      if (sigma[a] > 0)
        axes[a] = gaussian_taps(sigma[a], 4.0);
    }
    k = outer_product(dims, axes);
  } else if (s.name == "sphere" || s.name == "ellipsoid") {
    if (s.values.empty())
      fail(spec, "give the radius in voxels, e.g. sphere:2");
    try {
      k = ellipsoid_mean_kernel(dims, per_axis(spec, s.values, dims, 0));
    } catch (const InvalidArgument& e) {
      fail(spec, e.what());
    }
  } else if (s.name == "sobel") {
    k = difference_kernel(spec, s, dims, 2);
  } else if (s.name == "prewitt") {
    k = difference_kernel(spec, s, dims, 1);
  } else if (s.name == "laplace" || s.name == "laplacian") {
    if (!s.values.empty() || !s.axis.empty())
      fail(spec, "laplace takes no values");
    const int spatial = spatial_axes(dims);
    k.dims = dims;
    for (int a = 0; a < spatial; ++a)
      k.extent[a] = 3;
    k.taps.assign(static_cast<size_t>(k.extent[0] * k.extent[1] * k.extent[2]), 0.0f);
    const int64_t centre = (k.taps.size() - 1) / 2;
    k.taps[centre] = static_cast<float>(-2 * spatial);
    int64_t stride = 1;
    for (int a = 0; a < spatial; ++a, stride *= 3) {
      k.taps[centre - stride] = 1;
      k.taps[centre + stride] = 1;
    }
  } else {
    fail(spec, "unknown kernel '" + s.name + "'; use " + kernel_spec_grammar());
  }
  check_extent(spec, k);
  return k;
}

Kernel ellipsoid_mean_kernel(int dims, const std::array<double, kMaxDims>& radius) {
  Kernel k;
  k.dims = dims;
  const int64_t limit = dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D;
  for (int a = 0; a < dims; ++a) {
    if (!(radius[a] >= 0) || !std::isfinite(radius[a]))
      throw InvalidArgument("the radius must be a non-negative number of voxels");
    // Capped before the conversion, which a radius past int64_t's range would make undefined.
    k.extent[a] = 2 * static_cast<int64_t>(std::floor(std::min<double>(radius[a], limit))) + 1;
  }
  for (int a = 0; a < dims; ++a) {
    if (k.extent[a] > limit) {
      throw InvalidArgument("a radius of " + number(radius[a]) + " voxels needs " +
                            std::to_string(k.extent[a]) + " taps along axis " + std::to_string(a) +
                            "; the dense limit is " + std::to_string(limit));
    }
  }
  int64_t inside = 0;
  k = make_kernel(dims, k.extent, [&](const Index& at) {
    double r2 = 0;
    for (int a = 0; a < dims; ++a) {
      if (radius[a] > 0) {
        const double d = static_cast<double>(at[a] - k.extent[a] / 2) / radius[a];
        r2 += d * d;
      }
    }
    const bool in = r2 <= 1.0 + 1e-12;
    inside += in;
    return in ? 1.0 : 0.0;
  });
  for (float& t : k.taps)
    t = static_cast<float>(t / static_cast<double>(inside));
  return k;
}

}  // namespace ndconv
