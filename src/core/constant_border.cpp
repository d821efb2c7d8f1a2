// The constant boundary's terms (constant_border.h): the per-axis ranges of inside taps, the dense
// table from a summed-area table of the taps, the separable profiles, and the host pass.
#include "core/constant_border.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/parallel_for.h"

namespace ndconv::detail {
namespace {

// The taps [lo, hi] of a filter of k taps at offset `off` that read inside [0, n) for output o;
// lo > hi where none does.
std::pair<int64_t, int64_t> inside_taps(int64_t o, int64_t off, int64_t k, int64_t n) {
  return {std::max<int64_t>(0, -(o + off)), std::min<int64_t>(k - 1, n - 1 - (o + off))};
}

// The outputs [first, end) of `count` whose taps all read inside (an empty range at 0 if none).
void full_range(int64_t count, int64_t off, int64_t k, int64_t n, int64_t& first, int64_t& end) {
  first = std::clamp<int64_t>(-off, 0, count);
  end = std::clamp<int64_t>(n - k - off + 1, first, count);
}

// Whether every output of `l` is inside (no term anywhere).
bool no_shell(const ConstantBorderLayout& l) {
  for (int a = 0; a < l.dims; ++a) {
    if (l.full_first[a] != 0 || l.full_end[a] != l.extent[a])
      return false;
  }
  return true;
}

// The summed-area table of `taps` (extent k, x fastest): entry (i0, i1, i2, i3) of extents k + 1
// holds the sum of the taps below it along every axis.
std::vector<double> summed_area(const float* taps, const Index& k, int dims, Index& pitch) {
  int64_t size = 1;
  for (int a = 0; a < kMaxDims; ++a) {
    pitch[a] = size;
    size *= a < dims ? k[a] + 1 : 1;
  }
  std::vector<double> s(size, 0.0);
  Index i{0, 0, 0, 0};
  int64_t t = 0;
  for (i[3] = 0; i[3] < (dims > 3 ? k[3] : 1); ++i[3])
    for (i[2] = 0; i[2] < (dims > 2 ? k[2] : 1); ++i[2])
      for (i[1] = 0; i[1] < k[1]; ++i[1])
        for (i[0] = 0; i[0] < k[0]; ++i[0]) {
          int64_t at = 0;
          for (int a = 0; a < dims; ++a)
            at += (i[a] + 1) * pitch[a];
          s[at] = taps[t++];
        }
  for (int a = 0; a < dims; ++a) {  // prefix sums along each axis in turn
    for (int64_t e = 0; e < size; ++e) {
      const int64_t along = e / pitch[a] % (k[a] + 1);
      if (along > 0)
        s[e] += s[e - pitch[a]];
    }
  }
  return s;
}

}  // namespace

ConstantBorder constant_border(const CorrelationProblem& p, float value) {
  ConstantBorder b;
  ConstantBorderLayout& l = b.layout;
  const int dims = p.input.dims;
  l.dims = dims;
  for (int a = 0; a < dims; ++a) {
    l.extent[a] = p.output.extent[a];
    full_range(l.extent[a], p.offset[a], p.filter_extent[a], p.input.extent[a], l.full_first[a],
               l.full_end[a]);
  }
  if (value == 0.0f || no_shell(l))
    return b;

  // Range ids per axis: each output's range of inside taps, numbered as first met.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges(dims);
  int64_t table_size = 1;
  for (int a = 0; a < dims; ++a) {
    std::map<std::pair<int64_t, int64_t>, int64_t> ids;
    l.range[a] = static_cast<int64_t>(b.data.size());
    for (int64_t o = 0; o < l.extent[a]; ++o) {
      const auto r = inside_taps(o, p.offset[a], p.filter_extent[a], p.input.extent[a]);
      const auto [it, fresh] = ids.emplace(r, static_cast<int64_t>(ranges[a].size()));
      if (fresh)
        ranges[a].push_back(r);
      b.data.push_back(static_cast<double>(it->second));
    }
    l.pitch[a] = table_size;
    table_size *= static_cast<int64_t>(ranges[a].size());
  }

  Index sat_pitch{0, 0, 0, 0};
  const std::vector<double> sat = summed_area(p.taps, p.filter_extent, dims, sat_pitch);
  Index whole{0, 0, 0, 0};
  for (int a = 0; a < dims; ++a)
    whole[a] = p.filter_extent[a];
  int64_t whole_at = 0;
  for (int a = 0; a < dims; ++a)
    whole_at += whole[a] * sat_pitch[a];
  const double total = sat[whole_at];

  l.table = static_cast<int64_t>(b.data.size());
  b.data.resize(b.data.size() + table_size);
  for (int64_t e = 0; e < table_size; ++e) {
    // The box [lo, hi] of this combination of ranges; W by inclusion-exclusion over its corners.
    std::pair<int64_t, int64_t> box[kMaxDims];
    bool empty = false;
    for (int a = 0; a < dims; ++a) {
      box[a] = ranges[a][e / l.pitch[a] % static_cast<int64_t>(ranges[a].size())];
      empty = empty || box[a].first > box[a].second;
    }
    double inside = 0;
    if (!empty) {
      for (int corner = 0; corner < (1 << dims); ++corner) {
        int64_t at = 0;
        int sign = 1;
        for (int a = 0; a < dims; ++a) {
          const bool low = (corner >> a) & 1;
          at += (low ? box[a].first : box[a].second + 1) * sat_pitch[a];
          sign = low ? -sign : sign;
        }
        inside += sign * sat[at];
      }
    }
    b.data[l.table + e] = static_cast<double>(value) * (total - inside);
  }
  return b;
}

ConstantBorder constant_border(const SeparableProblem& p, const std::array<int, kMaxDims>& order,
                               float value) {
  ConstantBorder b;
  ConstantBorderLayout& l = b.layout;
  const int dims = p.input.dims;
  l.dims = dims;
  l.separable = 1;
  for (int a = 0; a < dims; ++a) {
    l.extent[a] = p.output.extent[a];
    const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(p.taps[a].size()));
    full_range(l.extent[a], p.offset[a], p.taps[a].empty() ? 1 : k, p.input.extent[a],
               l.full_first[a], l.full_end[a]);
    if (p.taps[a].empty()) {  // no pass: every output is inside along this axis
      l.full_first[a] = 0;
      l.full_end[a] = l.extent[a];
    }
  }
  if (value == 0.0f || no_shell(l))
    return b;
  for (int i = 0; i < dims; ++i) {
    const int a = order[i];
    const std::vector<float>& taps = p.taps[a];
    if (taps.empty())
      continue;
    l.order[l.passes++] = a;
    const int64_t k = static_cast<int64_t>(taps.size());
    double sum = 0;
    for (float t : taps)
      sum += t;
    l.profile[a] = static_cast<int64_t>(b.data.size());
    l.deficit[a] = l.profile[a] + l.extent[a];
    b.data.resize(b.data.size() + 2 * l.extent[a]);
    for (int64_t o = 0; o < l.extent[a]; ++o) {
      const auto [lo, hi] = inside_taps(o, p.offset[a], k, p.input.extent[a]);
      double inside = 0;
      for (int64_t j = lo; j <= hi; ++j)
        inside += taps[j];
      b.data[l.profile[a] + o] = inside;
      b.data[l.deficit[a] + o] = static_cast<double>(value) * (sum - inside);
    }
  }
  return b;
}

void add_constant_border(const ConstantBorder& border, const VolumeView& output, int threads) {
  if (border.empty())
    return;
  const ConstantBorderLayout& l = border.layout;
  core::parallel_for(
      threads, l.extent[1] * l.extent[2] * l.extent[3],
      [&](int64_t begin, int64_t end, int) {
        for (int64_t r = begin; r < end; ++r)
          add_constant_border_row(l, border.data.data(), output.data, output.stride.data(), r, 0,
                                  1);
      },
      core::ProgressSpan{});
}

}  // namespace ndconv::detail
