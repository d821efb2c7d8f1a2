#include "preview.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "glyphs.h"

namespace ndconv::cli {

namespace {

// A 2D slice in physical-aspect pixels, values still in the image's units, with its labels.
struct Slice {
  int width = 0, height = 0;
  std::vector<float> v;
  std::string name;     ///< e.g. "AXIAL Z=40/80"
  std::string edge[4];  ///< orientation letters: left, right, top, bottom ("" when unknown)
};

constexpr int kMaxSide = 384;  // longest side of one panel, in pixels
constexpr int kMinSide = 256;
constexpr int kGap = 4;
constexpr float kBackground = 32;
constexpr float kText = 255;
constexpr int kTextScale = 2;  // screen pixels per font pixel
constexpr int kCharWidth = (kGlyphWidth + 1) * kTextScale;
constexpr int kLineHeight = (kGlyphHeight + 3) * kTextScale;

std::string& caption_storage() {
  static std::string caption;
  return caption;
}

// The anatomical letters at the negative and positive ends of image axis `axis` (ITK's LPS
// physical space: +x left, +y posterior, +z superior), from its direction's largest component;
// empty when the image has no 3D orientation.
std::pair<std::string, std::string> axis_letters(const io::Geometry& g, int axis) {
  if (g.dims < 3)
    return {"", ""};
  int k = 0;
  for (int r = 1; r < 3; ++r) {
    if (std::abs(g.direction[r * kMaxDims + axis]) > std::abs(g.direction[k * kMaxDims + axis]))
      k = r;
  }
  static const char* const positive[] = {"L", "P", "S"};
  static const char* const negative[] = {"R", "A", "I"};
  const bool up = g.direction[k * kMaxDims + axis] >= 0;
  return {up ? negative[k] : positive[k], up ? positive[k] : negative[k]};
}

// "AXIAL", "CORONAL" or "SAGITTAL" for a slice whose normal is image axis `normal`, from the
// physical axis that normal mostly follows.
std::string view_name(const io::Geometry& g, int normal) {
  const auto [neg, pos] = axis_letters(g, normal);
  if (pos == "S" || pos == "I")
    return "AXIAL";
  if (pos == "P" || pos == "A")
    return "CORONAL";
  return "SAGITTAL";
}

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
  static const char* const axis_names[] = {"X", "Y", "Z", "T"};
  if (g.dims >= 3) {
    const int normal = 3 - h - v;
    s.name = view_name(g, normal) + " " + axis_names[normal] + "=" + std::to_string(i[normal]) +
             "/" + std::to_string(g.extent[normal]);
    const auto [hn, hp] = axis_letters(g, h);
    const auto [vn, vp] = axis_letters(g, v);
    s.edge[0] = hn;
    s.edge[1] = hp;
    s.edge[2] = flip_v ? vp : vn;
    s.edge[3] = flip_v ? vn : vp;
  }
  if (g.dims == 4)
    s.name += " T=" + std::to_string(i[3]) + "/" + std::to_string(g.extent[3]);
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

// 0.5th and 99.5th percentiles of the finite values shown in both columns, so that the same grey
// means the same value in input and output.
std::pair<float, float> window(const std::vector<Slice>& left, const std::vector<Slice>& right) {
  std::vector<float> all;
  for (const auto* column : {&left, &right})
    for (const auto& s : *column)
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

// Splits `text` into lines of at most `columns` characters, at spaces where it can.
std::vector<std::string> wrap(const std::string& text, int columns) {
  std::vector<std::string> lines;
  std::string rest = text;
  while (static_cast<int>(rest.size()) > columns) {
    size_t cut = rest.rfind(' ', static_cast<size_t>(columns));
    if (cut == std::string::npos || cut == 0)
      cut = static_cast<size_t>(columns);
    lines.push_back(rest.substr(0, cut));
    rest = rest.substr(cut == static_cast<size_t>(columns) ? cut : cut + 1);
  }
  if (!rest.empty())
    lines.push_back(rest);
  return lines;
}

std::string shorten(std::string text, int columns) {
  if (static_cast<int>(text.size()) > columns)
    text = text.substr(0, static_cast<size_t>(std::max(columns - 2, 0))) + "..";
  return text;
}

}  // namespace

void set_preview_caption(int argc, char** argv) {
  // The command as typed, with paths cut to their file names and the preview's own options left
  // out: the picture then says what produced it.
  std::string caption = "ndconv";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--preview") {
      ++i;
      continue;
    }
    if (a.rfind("--preview=", 0) == 0 || a == "-f" || a == "--force" || a == "-q" ||
        a == "--quiet" || a == "-v" || a == "--verbose")
      continue;
    const size_t slash = a.find_last_of('/');
    if (slash != std::string::npos && slash + 1 < a.size())
      a = a.substr(slash + 1);
    caption += " " + a;
  }
  caption_storage() = caption;
}

io::Image make_preview(const io::Image& input, const io::Image& output) {
  const auto left = views(input), right = views(output);
  const auto [lo, hi] = window(left, right);
  int col_w = 0;
  for (size_t r = 0; r < left.size(); ++r)
    col_w = std::max({col_w, left[r].width, right[r].width});
  const int width = 2 * col_w + 3 * kGap;
  const int columns = (width - 2 * kGap) / kCharWidth;
  std::vector<std::string> header = wrap(caption_storage(), columns);
  if (header.size() > 3)
    header.resize(3);
  char range[96];
  std::snprintf(range, sizeof range, "WINDOW %.4g TO %.4g, BOTH PANELS", lo, hi);
  const bool labelled_rows = !left.front().name.empty();
  int height = kGap + static_cast<int>(header.size() + 1) * kLineHeight;
  for (size_t r = 0; r < left.size(); ++r)
    height += (labelled_rows ? kLineHeight : 0) + std::max(left[r].height, right[r].height) + kGap;
  height += kLineHeight;
  io::Image pic;
  pic.info.geometry.dims = 2;
  pic.info.geometry.extent = {width, height, 1, 1};
  pic.info.pixel_kind = "scalar";
  pic.info.component_type = io::ComponentType::UInt8;
  pic.planes.assign(1, std::vector<float>(static_cast<size_t>(width) * height, kBackground));
  auto& canvas = pic.planes[0];
  auto set = [&](int x, int y, float value) {
    if (x >= 0 && x < width && y >= 0 && y < height)
      canvas[static_cast<size_t>(y) * width + x] = value;
  };
  // Text with its top-left corner at (x0, y0); `boxed` draws it on black, for use over a slice.
  auto text = [&](const std::string& t, int x0, int y0, bool boxed) {
    if (boxed) {
      const int w = static_cast<int>(t.size()) * kCharWidth + kTextScale;
      for (int y = -kTextScale; y < (kGlyphHeight + 1) * kTextScale; ++y)
        for (int x = -kTextScale; x < w; ++x)
          set(x0 + x, y0 + y, 0);
    }
    for (size_t k = 0; k < t.size(); ++k) {
      const auto& rows = glyph(t[k]);
      for (int gy = 0; gy < kGlyphHeight; ++gy)
        for (int gx = 0; gx < kGlyphWidth; ++gx)
          if (rows[gy] & (0x10 >> gx))
            for (int dy = 0; dy < kTextScale; ++dy)
              for (int dx = 0; dx < kTextScale; ++dx)
                set(x0 + static_cast<int>(k) * kCharWidth + gx * kTextScale + dx,
                    y0 + gy * kTextScale + dy, kText);
    }
  };
  auto text_width = [](const std::string& t) { return static_cast<int>(t.size()) * kCharWidth; };
  auto paint = [&](const Slice& s, int x0, int y0) {
    for (int y = 0; y < s.height; ++y)
      for (int x = 0; x < s.width; ++x) {
        const float v = s.v[static_cast<size_t>(y) * s.width + x];
        const float g = std::isfinite(v) ? std::clamp((v - lo) / (hi - lo), 0.f, 1.f) * 255.f : 0.f;
        canvas[static_cast<size_t>(y0 + y) * width + x0 + x] = std::round(g);
      }
    // Orientation letters in the middle of each edge.
    const int glyph_h = kGlyphHeight * kTextScale;
    const int half_h = (s.height - glyph_h) / 2;
    if (!s.edge[0].empty()) {
      text(s.edge[0], x0 + 2 * kTextScale, y0 + half_h, true);
      text(s.edge[1], x0 + s.width - text_width(s.edge[1]) - kTextScale, y0 + half_h, true);
      text(s.edge[2], x0 + (s.width - text_width(s.edge[2])) / 2, y0 + 2 * kTextScale, true);
      text(s.edge[3], x0 + (s.width - text_width(s.edge[3])) / 2,
           y0 + s.height - glyph_h - kTextScale, true);
    }
  };
  int y0 = kGap;
  for (const std::string& line : header) {
    text(line, kGap, y0, false);
    y0 += kLineHeight;
  }
  text(shorten("INPUT", columns / 2), kGap + (col_w - text_width("INPUT")) / 2, y0, false);
  text("OUTPUT", 2 * kGap + col_w + (col_w - text_width("OUTPUT")) / 2, y0, false);
  y0 += kLineHeight;
  for (size_t r = 0; r < left.size(); ++r) {
    if (labelled_rows) {
      text(shorten(left[r].name, columns), kGap, y0, false);
      y0 += kLineHeight;
    }
    paint(left[r], kGap, y0);
    paint(right[r], 2 * kGap + col_w, y0);
    y0 += std::max(left[r].height, right[r].height) + kGap;
  }
  text(shorten(range, columns), kGap, y0, false);
  return pic;
}

void write_preview(const std::string& path, const io::Image& input, const io::Image& output,
                   bool overwrite) {
  io::write_image(path, make_preview(input, output), io::ComponentType::UInt8, overwrite);
}

}  // namespace ndconv::cli
