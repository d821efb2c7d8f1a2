#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ndconv::test {
namespace {

// The input value at index i along one axis of extent n under the boundary condition, or
// "outside" (returns false) for the outside value (zero, or the constant).
bool resolve(int64_t i, int64_t n, Boundary b, int64_t& r) {
  if (i >= 0 && i < n) {
    r = i;
    return true;
  }
  switch (b) {
    case Boundary::Zero:
    case Boundary::Constant:
      return false;
    case Boundary::Replicate:
      r = i < 0 ? 0 : n - 1;
      return true;
    case Boundary::Periodic:
      r = ((i % n) + n) % n;
      return true;
    case Boundary::Mirror:
      // Walk the reflections one step at a time: obviously right, not fast.
      if (n == 1) {
        r = 0;
        return true;
      }
      while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * (n - 1) - i;
      r = i;
      return true;
    case Boundary::Reflect:
      // The same walk, each reflection about the half-sample point beyond the edge voxel.
      while (i < 0 || i >= n)
        i = i < 0 ? -1 - i : 2 * n - 1 - i;
      r = i;
      return true;
  }
  return false;
}

// The index of the voxel at `flat` in a volume of `extent` (x fastest) over the first `dims` axes.
Index unflatten(int64_t flat, const Index& extent, int dims) {
  Index i{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a) {
    i[a] = flat % extent[a];
    flat /= extent[a];
  }
  return i;
}

// The voxels of a volume of `extent` over the first `dims` axes.
int64_t count_of(const Index& extent, int dims) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

// The flat index of voxel i in a volume of `extent` (x fastest) over the first `dims` axes.
int64_t flatten(const Index& i, const Index& extent, int dims) {
  int64_t flat = 0;
  for (int a = dims - 1; a >= 0; --a)
    flat = flat * extent[a] + i[a];
  return flat;
}

// Separable filtering one 1D pass at a time along filter.pass_order, each pass reading its own
// input extended by the boundary (so under the constant boundary each pass pads with the value,
// as scipy.ndimage does); for `valid` each pass keeps the outputs whose taps lie inside.
std::vector<double> separable_by_passes(const ConstVolumeView& input, const SeparableFilter& filter,
                                        Operation operation, Boundary boundary, OutputRegion region,
                                        double boundary_value) {
  const int dims = input.dims;
  Index extent = input.extent;
  const int64_t count = count_of(extent, dims);
  std::vector<double> cur(count);
  for (int64_t flat = 0; flat < count; ++flat)
    cur[flat] = static_cast<double>(input.at(unflatten(flat, extent, dims)));
  for (int p = 0; p < dims; ++p) {
    const int a = filter.pass_order[p];
    const std::vector<float>& taps = filter.taps[a];
    if (taps.empty())
      continue;
    const int64_t k = static_cast<int64_t>(taps.size()), c = k / 2, n = extent[a];
    const int64_t start =
        region == OutputRegion::Valid ? (operation == Operation::Correlation ? c : k - 1 - c) : 0;
    Index out_extent = extent;
    out_extent[a] = region == OutputRegion::Valid ? n - k + 1 : n;
    const int64_t out_count = count_of(out_extent, dims);
    std::vector<double> next(out_count);
    for (int64_t flat = 0; flat < out_count; ++flat) {
      const Index o = unflatten(flat, out_extent, dims);
      Index src = o;
      double acc = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t centre = o[a] + start;
        const int64_t at = operation == Operation::Correlation ? centre + j - c : centre - j + c;
        const bool inside = resolve(at, n, boundary, src[a]);
        acc += static_cast<double>(taps[j]) *
               (inside ? cur[flatten(src, extent, dims)] : boundary_value);
      }
      next[flat] = acc;
    }
    cur.swap(next);
    extent = out_extent;
  }
  return cur;
}

}  // namespace

Index reference_output_extent(const ConstVolumeView& input, const Index& filter_extent,
                              OutputRegion region) {
  Index e{1, 1, 1, 1};
  for (int a = 0; a < input.dims; ++a) {
    e[a] = region == OutputRegion::Same ? input.extent[a] : input.extent[a] - filter_extent[a] + 1;
    if (e[a] < 1)
      throw std::invalid_argument("empty valid region");
  }
  return e;
}

std::vector<double> reference_dense(const ConstVolumeView& input, const DenseFilter& filter,
                                    Operation operation, Boundary boundary, OutputRegion region,
                                    double boundary_value) {
  const int dims = input.dims;
  const Index out_extent = reference_output_extent(input, filter.extent, region);
  const int64_t out_count = count_of(out_extent, dims);
  std::vector<double> out(out_count);

  for (int64_t flat = 0; flat < out_count; ++flat) {
    const Index o = unflatten(flat, out_extent, dims);
    // The input voxel the output voxel sits over: itself for `same`; for `valid`, the first voxel
    // whose whole footprint lies inside, i.e. shifted by the anchor.
    Index centre{0, 0, 0, 0};
    for (int a = 0; a < dims; ++a) {
      const int64_t k = filter.extent[a];
      const int64_t c = k / 2;
      const int64_t valid_start = operation == Operation::Correlation ? c : k - 1 - c;
      centre[a] = o[a] + (region == OutputRegion::Valid ? valid_start : 0);
    }
    double acc = 0.0;
    for (int64_t t = 0; t < filter.tap_count(); ++t) {
      const Index j = unflatten(t, filter.extent, dims);
      Index src{0, 0, 0, 0};
      bool inside = true;
      for (int a = 0; a < dims && inside; ++a) {
        const int64_t c = filter.extent[a] / 2;
        const int64_t i =
            operation == Operation::Correlation ? centre[a] + j[a] - c : centre[a] - j[a] + c;
        inside = resolve(i, input.extent[a], boundary, src[a]);
      }
      const double v = inside ? static_cast<double>(input.at(src)) : boundary_value;
      acc += static_cast<double>(filter.taps[t]) * v;
    }
    out[flat] = acc;
  }
  return out;
}

std::vector<double> reference_separable(const ConstVolumeView& input, const SeparableFilter& filter,
                                        Operation operation, Boundary boundary, OutputRegion region,
                                        double boundary_value) {
  if (boundary == Boundary::Constant && boundary_value != 0.0)
    return separable_by_passes(input, filter, operation, boundary, region, boundary_value);
  DenseFilter dense;
  dense.dims = input.dims;
  int64_t count = 1;
  for (int a = 0; a < input.dims; ++a) {
    dense.extent[a] = filter.taps[a].empty() ? 1 : static_cast<int64_t>(filter.taps[a].size());
    count *= dense.extent[a];
  }
  std::vector<float> taps(count);
  for (int64_t t = 0; t < count; ++t) {
    double w = 1.0;
    int64_t r = t;
    for (int a = 0; a < input.dims; ++a) {
      const int64_t j = r % dense.extent[a];
      r /= dense.extent[a];
      if (!filter.taps[a].empty())
        w *= filter.taps[a][j];
    }
    taps[t] = static_cast<float>(w);
  }
  dense.taps = taps.data();
  return reference_dense(input, dense, operation, boundary, region, boundary_value);
}

std::vector<double> reference_separable_passes(const ConstVolumeView& input,
                                               const SeparableFilter& filter, Operation operation,
                                               Boundary boundary, double boundary_value) {
  return separable_by_passes(input, filter, operation, boundary, OutputRegion::Same,
                             boundary_value);
}

std::vector<float> reference_median_bits(const ConstVolumeView& input, const Index& radius,
                                         Boundary boundary, float outside) {
  const int dims = input.dims;
  int64_t count = 1, window = 1;
  Index span{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    count *= input.extent[a];
    span[a] = 2 * radius[a] + 1;
    window *= span[a];
  }
  std::vector<float> out(count), values;
  for (int64_t flat = 0; flat < count; ++flat) {
    const Index o = unflatten(flat, input.extent, dims);
    values.clear();
    for (int64_t w = 0; w < window; ++w) {
      const Index j = unflatten(w, span, dims);
      Index src{0, 0, 0, 0};
      bool inside = true;
      for (int a = 0; a < dims && inside; ++a)
        inside = resolve(o[a] + j[a] - radius[a], input.extent[a], boundary, src[a]);
      values.push_back(inside ? input.at(src) : outside);
    }
    // Sort the whole window (NaN last, -0 before +0), then take the middle: plainly the median.
    std::sort(values.begin(), values.end(), [](float a, float b) {
      if (std::isnan(a) || std::isnan(b))
        return !std::isnan(a);
      return a < b || (a == b && std::signbit(a) && !std::signbit(b));
    });
    const float median = values[values.size() / 2];
    out[flat] = std::isnan(median) ? std::numeric_limits<float>::quiet_NaN() : median;
  }
  return out;
}

std::vector<double> reference_median(const ConstVolumeView& input, const Index& radius,
                                     Boundary boundary) {
  const std::vector<float> median = reference_median_bits(input, radius, boundary, 0.0f);
  return std::vector<double>(median.begin(), median.end());
}

}  // namespace ndconv::test
