#include "preview.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ndconv::cli {

namespace {

// A 2D slice in physical-aspect pixels, values still in the image's units.
struct Slice {
  int width = 0, height = 0;
  std::vector<float> v;
};

constexpr int kMaxSide = 384;  // longest side of one panel, in pixels
constexpr int kMinSide = 256;
constexpr int kGap = 4;
constexpr float kBackground = 32;

// Value of voxel i (all axes) averaged over components.
float voxel(const io::Image& im, const Index& i) {
  const auto& g = im.info.geometry;
  int64_t off = 0, stride = 1;
  for (int a = 0; a < g.dims; ++a) {
    off += i[a] * stride;
    stride *= g.extent[a];
  }
  float s = 0;
  for (const auto& p : im.planes)
    s += p[off];
  return s / static_cast<float>(im.planes.size());
}

// The slice spanned by axes `h` (horizontal) and `v` (vertical) through the middle of the other
// axes; `flip_v` puts index 0 of the vertical axis at the bottom (z up).
Slice take_slice(const io::Image& im, int h, int v, bool flip_v) {
  const auto& g = im.info.geometry;
  const double sh = std::abs(g.spacing[h]) > 0 ? std::abs(g.spacing[h]) : 1.0;
  const double sv = std::abs(g.spacing[v]) > 0 ? std::abs(g.spacing[v]) : 1.0;
  const double pixel = std::min(sh, sv);
  double w = g.extent[h] * sh / pixel, ht = g.extent[v] * sv / pixel;
  // Small images are enlarged to kMinSide, large ones reduced to kMaxSide (nearest neighbour).
  const double longest = std::max(w, ht);
  const double scale = longest > kMaxSide ? kMaxSide / longest : std::max(1.0, kMinSide / longest);
  Slice s;
  s.width = std::max(1, static_cast<int>(std::lround(w * scale)));
  s.height = std::max(1, static_cast<int>(std::lround(ht * scale)));
  s.v.resize(static_cast<size_t>(s.width) * s.height);
  Index i{0, 0, 0, 0};
  for (int a = 0; a < g.dims; ++a)
    i[a] = g.extent[a] / 2;
  for (int y = 0; y < s.height; ++y) {
    int64_t iv = static_cast<int64_t>((y + 0.5) * g.extent[v] / s.height);
    iv = std::clamp<int64_t>(iv, 0, g.extent[v] - 1);
    i[v] = flip_v ? g.extent[v] - 1 - iv : iv;
    for (int x = 0; x < s.width; ++x) {
      i[h] = std::clamp<int64_t>(static_cast<int64_t>((x + 0.5) * g.extent[h] / s.width), 0,
                                 g.extent[h] - 1);
      s.v[static_cast<size_t>(y) * s.width + x] = voxel(im, i);
    }
  }
  return s;
}

std::vector<Slice> views(const io::Image& im) {
  if (im.info.geometry.dims == 2)
    return {take_slice(im, 0, 1, false)};
  return {take_slice(im, 0, 1, false), take_slice(im, 0, 2, true), take_slice(im, 1, 2, true)};
}

// 0.5th and 99.5th percentiles of the finite values shown.
std::pair<float, float> window(const std::vector<Slice>& slices) {
  std::vector<float> all;
  for (const auto& s : slices)
    for (float x : s.v)
      if (std::isfinite(x))
        all.push_back(x);
  if (all.empty())
    return {0.f, 1.f};
  auto at = [&](double q) {
    auto k = static_cast<size_t>(q * (all.size() - 1));
    std::nth_element(all.begin(), all.begin() + k, all.end());
    return all[k];
  };
  float lo = at(0.005), hi = at(0.995);
  if (!(hi > lo)) {
    lo = *std::min_element(all.begin(), all.end());
    hi = *std::max_element(all.begin(), all.end());
  }
  if (!(hi > lo))
    hi = lo + 1;
  return {lo, hi};
}

}  // namespace

io::Image make_preview(const io::Image& input, const io::Image& output) {
  const auto left = views(input), right = views(output);
  const auto [llo, lhi] = window(left);
  const auto [rlo, rhi] = window(right);
  int col_w = 0, height = kGap;
  for (size_t r = 0; r < left.size(); ++r) {
    col_w = std::max({col_w, left[r].width, right[r].width});
    height += std::max(left[r].height, right[r].height) + kGap;
  }
  const int width = 2 * col_w + 3 * kGap;
  io::Image pic;
  pic.info.geometry.dims = 2;
  pic.info.geometry.extent = {width, height, 1, 1};
  pic.info.pixel_kind = "scalar";
  pic.info.component_type = io::ComponentType::UInt8;
  pic.planes.assign(1, std::vector<float>(static_cast<size_t>(width) * height, kBackground));
  auto& canvas = pic.planes[0];
  auto paint = [&](const Slice& s, int x0, int y0, float lo, float hi) {
    for (int y = 0; y < s.height; ++y)
      for (int x = 0; x < s.width; ++x) {
        const float v = s.v[static_cast<size_t>(y) * s.width + x];
        const float g = std::isfinite(v) ? std::clamp((v - lo) / (hi - lo), 0.f, 1.f) * 255.f : 0.f;
        canvas[static_cast<size_t>(y0 + y) * width + x0 + x] = std::round(g);
      }
  };
  int y0 = kGap;
  for (size_t r = 0; r < left.size(); ++r) {
    paint(left[r], kGap, y0, llo, lhi);
    paint(right[r], 2 * kGap + col_w, y0, rlo, rhi);
    y0 += std::max(left[r].height, right[r].height) + kGap;
  }
  return pic;
}

void write_preview(const std::string& path, const io::Image& input, const io::Image& output,
                   bool overwrite) {
  io::write_image(path, make_preview(input, output), io::ComponentType::UInt8, overwrite);
}

}  // namespace ndconv::cli
