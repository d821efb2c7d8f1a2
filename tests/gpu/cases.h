// Test cases shared by the GPU suites: volume and filter extents per dimension (odd extents,
// filters larger than the volume, extent-1 axes), and the conversion of a request into the
// backend contract (problem.h), written out here independently of the engine's front end.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/problem.h"
#include "ndconv/types.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {

struct ShapeCase {
  int dims;
  Index volume;
  Index filter;
};

inline std::ostream& operator<<(std::ostream& os, const ShapeCase& c) {
  os << c.dims << "D vol";
  for (int a = 0; a < c.dims; ++a)
    os << (a ? "x" : " ") << c.volume[a];
  os << " filter";
  for (int a = 0; a < c.dims; ++a)
    os << (a ? "x" : " ") << c.filter[a];
  return os;
}

/// Small shapes: every filter extent of the issue (1, 2, 3, 4, 7, larger than the volume) shows
/// up along the last axis, which is the one the blocked kernel treats specially.
inline std::vector<ShapeCase> shape_cases() {
  return {
      {2, {37, 23, 1, 1}, {1, 1, 1, 1}},
      {2, {37, 23, 1, 1}, {3, 2, 1, 1}},
      {2, {33, 19, 1, 1}, {4, 7, 1, 1}},
      {2, {13, 9, 1, 1}, {17, 15, 1, 1}},
      {2, {1, 21, 1, 1}, {3, 4, 1, 1}},
      {2, {29, 1, 1, 1}, {5, 3, 1, 1}},
      {3, {19, 11, 13, 1}, {3, 3, 3, 1}},
      {3, {17, 9, 21, 1}, {2, 4, 7, 1}},
      {3, {9, 7, 5, 1}, {11, 3, 9, 1}},
      {3, {7, 1, 9, 1}, {1, 2, 4, 1}},
      {3, {35, 5, 3, 1}, {1, 1, 1, 1}},
      {4, {9, 5, 7, 6}, {3, 3, 3, 3}},
      {4, {7, 3, 5, 11}, {2, 1, 4, 7}},
      {4, {5, 4, 3, 3}, {7, 2, 5, 4}},
      {4, {6, 5, 1, 9}, {3, 3, 1, 2}},
      // Long enough along x (and the blocked axis) for warps to take the interior path.
      {2, {100, 40, 1, 1}, {5, 3, 1, 1}},
      {3, {70, 7, 33, 1}, {3, 2, 4, 1}},
      {4, {67, 3, 2, 21}, {3, 1, 2, 5}},
      // Wide and tall enough in x and y for whole plane tiles of the tiled kernel (32 x 32
      // outputs) to lie inside the volume (its load without per-row boundary mapping).
      {3, {80, 44, 9, 1}, {5, 3, 3, 1}},
      {4, {41, 36, 3, 4}, {3, 3, 2, 2}},
  };
}

inline int64_t voxels(int dims, const Index& e) {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= e[a];
  return n;
}

/// Whether `valid` leaves something along every axis.
inline bool valid_fits(const ShapeCase& c) {
  for (int a = 0; a < c.dims; ++a) {
    if (c.filter[a] > c.volume[a])
      return false;
  }
  return true;
}

/// The backend's correlation problem for a request, following the definitions in types.h:
/// convolution flips every axis, the anchor is k/2 for correlation and k-1-k/2 for convolution,
/// `same` reads from -anchor, `valid` from 0. `flipped` receives the correlation taps.
inline detail::CorrelationProblem make_problem(const ConstVolumeView& in, const VolumeView& out,
                                               const DenseFilter& f, Operation op,
                                               OutputRegion region, Boundary b,
                                               std::vector<float>& flipped) {
  detail::CorrelationProblem p;
  p.input = in;
  p.output = out;
  p.filter_extent = f.extent;
  p.boundary = b;
  flipped.assign(f.taps, f.taps + f.tap_count());
  if (op == Operation::Convolution)
    std::reverse(flipped.begin(), flipped.end());
  p.taps = flipped.data();
  for (int a = 0; a < in.dims; ++a) {
    const int64_t k = f.extent[a];
    const int64_t anchor = op == Operation::Correlation ? k / 2 : k - 1 - k / 2;
    p.offset[a] = region == OutputRegion::Same ? -anchor : 0;
  }
  return p;
}

/// Random 1D taps for separable tests: magnitudes in (0, 1], positive. Signed taps make the test
/// ill-conditioned on extent-1 axes with a non-zero boundary, where every output is multiplied by
/// the sum of the taps: when that sum nearly cancels, float32 rounding of correct results exceeds
/// any fixed relative tolerance (seen once in the H100 validation run: 6.1e-5 for a 2-tap y filter
/// on a volume of one voxel along y, mirror boundary). Filters still are not symmetric, so flips
/// and offsets are checked as before; dense tests keep signed taps.
inline std::vector<float> positive_taps(int64_t count, uint64_t seed) {
  std::vector<float> t = random_values(count, seed);
  for (float& v : t)
    v = std::fabs(v);
  return t;
}

/// A random separable filter for `shape`: axis a gets positive taps of extent shape.filter[a] when
/// keep_axis(a) says so, else no taps (skipped, as a user would skip it). `filter_extent` receives
/// the extents the reference and the output geometry need (1 for skipped axes).
template <typename KeepAxis>
SeparableFilter random_separable_filter(const ShapeCase& shape, uint64_t seed, KeepAxis keep_axis,
                                        Index& filter_extent) {
  SeparableFilter f;
  f.dims = shape.dims;
  filter_extent = Index{1, 1, 1, 1};
  for (int a = 0; a < shape.dims; ++a) {
    if (keep_axis(a)) {
      f.taps[a] = positive_taps(shape.filter[a], seed + 7 + a);
      filter_extent[a] = shape.filter[a];
    }
  }
  return f;
}

/// A random input of `shape`, a random separable filter (see random_separable_filter) and an
/// output of the region's extent, poisoned with NaN.
struct SeparableCase {
  std::vector<float> in;
  ConstVolumeView in_view;
  SeparableFilter filter;
  Index out_extent;
  std::vector<float> out;
};

template <typename KeepAxis>
SeparableCase separable_case(const ShapeCase& shape, uint64_t seed, KeepAxis keep_axis,
                             OutputRegion region) {
  SeparableCase c;
  c.in = random_values(voxels(shape.dims, shape.volume), seed);
  c.in_view = make_view<const float>(c.in.data(), shape.dims, shape.volume);
  Index filter_extent;
  c.filter = random_separable_filter(shape, seed, keep_axis, filter_extent);
  c.out_extent = reference_output_extent(c.in_view, filter_extent, region);
  c.out.resize(static_cast<size_t>(voxels(shape.dims, c.out_extent)));
  poison(c.out);
  return c;
}

/// A one-pass kernel's NaN case: a `width` x 37 x 40 random volume with one NaN inside, a
/// random separable filter of `taps` along each axis, a NaN-poisoned output of the same extent
/// (correlation, zero boundary, `same`) and the float64 reference, whose NaNs mark the outputs
/// that read the NaN: those, and no others, must come out NaN.
struct NanSeparableCase {
  SeparableCase c;
  uint64_t seed;
  std::vector<double> ref;
};

inline NanSeparableCase nan_separable_case(int64_t width, int taps) {
  const ShapeCase shape{3, {width, 37, 40, 1}, {taps, taps, taps, 1}};
  NanSeparableCase n;
  n.seed = fresh_seed();
  n.c = separable_case(
      shape, n.seed, [](int) { return true; }, OutputRegion::Same);
  n.c.in[static_cast<size_t>((20 * 37 + 9) * width + 100)] =
      std::numeric_limits<float>::quiet_NaN();
  n.ref =
      reference_separable_passes(n.c.in_view, n.c.filter, Operation::Correlation, Boundary::Zero);
  return n;
}

/// A separable problem over `in` and `out` (resized to `volume`: inputs 1, outputs 0) with taps
/// of 1 along each axis where filter[a] > 0: for tests of the plans, which read only shapes.
inline detail::SeparableProblem problem_with_taps(int dims, const Index& volume,
                                                  const Index& filter, std::vector<float>& in,
                                                  std::vector<float>& out) {
  in.assign(static_cast<size_t>(voxels(dims, volume)), 1.0f);
  out.assign(in.size(), 0.0f);
  detail::SeparableProblem p;
  p.input = make_view<const float>(in.data(), dims, volume);
  p.output = make_view(out.data(), dims, volume);
  for (int a = 0; a < dims; ++a) {
    if (filter[a] > 0)
      p.taps[a] = std::vector<float>(static_cast<size_t>(filter[a]), 1.0f);
  }
  return p;
}

/// The backend's separable problem for a request (see make_problem): convolution reverses each
/// axis's taps, `same` reads from -anchor; axes without taps keep offset 0.
inline detail::SeparableProblem make_separable_problem(const ConstVolumeView& in,
                                                       const VolumeView& out,
                                                       const SeparableFilter& f, Operation op,
                                                       OutputRegion region, Boundary b) {
  detail::SeparableProblem p;
  p.input = in;
  p.output = out;
  p.boundary = b;
  for (int a = 0; a < in.dims; ++a) {
    p.taps[a] = f.taps[a];
    if (p.taps[a].empty())
      continue;
    const int64_t k = static_cast<int64_t>(p.taps[a].size());
    if (op == Operation::Convolution)
      std::reverse(p.taps[a].begin(), p.taps[a].end());
    const int64_t anchor = op == Operation::Correlation ? k / 2 : k - 1 - k / 2;
    p.offset[a] = region == OutputRegion::Same ? -anchor : 0;
  }
  return p;
}

/// Options of a GPU request: Backend::Cuda with the operation, boundary, region and a forced KO
/// (0: the rules).
inline Options cuda_options(Operation op, Boundary b, OutputRegion region, int ko = 0) {
  Options o;
  o.backend = Backend::Cuda;
  o.operation = op;
  o.boundary = b;
  o.region = region;
  o.expert.outputs_per_thread = ko;
  return o;
}

/// The boundaries the backends see (the engine runs Boundary::Constant as Zero plus its terms).
inline constexpr Boundary kAllBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                              Boundary::Periodic, Boundary::Reflect};

/// Calls fn(boundary, operation, region) for every boundary, correlation and convolution, `same`
/// and, where the filter fits in the volume, `valid`.
template <typename Fn>
void for_each_request(const ShapeCase& shape, Fn fn) {
  for (Boundary b : kAllBoundaries) {
    for (Operation op : {Operation::Correlation, Operation::Convolution}) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        if (region == OutputRegion::Valid && !valid_fits(shape))
          continue;
        fn(b, op, region);
      }
    }
  }
}

/// Counts voxels where `got` and `ref` disagree on being NaN, or differ by more than `tolerance`
/// (relative to the largest magnitude of ref) where both are finite.
inline int64_t nan_mask_mismatches(const std::vector<float>& got, const std::vector<double>& ref,
                                   double tolerance) {
  double scale = 0;
  for (double r : ref) {
    if (std::isfinite(r))
      scale = std::max(scale, std::fabs(r));
  }
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(ref[i]))
      ++bad;
    else if (!std::isnan(ref[i]) && std::fabs(got[i] - ref[i]) > tolerance * scale)
      ++bad;
  }
  return bad;
}

}  // namespace ndconv::test
