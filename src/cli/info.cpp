// `ndconv info IN`: what a file holds: dimension, extents, pixel type, geometry, time step,
// value range and size in memory.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "filter_args.h"
#include "io/image.h"

namespace ndconv::cli {

namespace {

struct InfoArgs {
  std::string in;
  bool header_only = false;
};

std::string join(const double* v, int n, const char* sep) {
  std::string s;
  char buf[64];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%.6g", v[i]);
    s += (i ? sep : "") + std::string(buf);
  }
  return s;
}

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

void run_info(const InfoArgs& a) {
  const io::ImageInfo info = io::read_info(a.in);
  const io::Geometry& g = info.geometry;
  std::printf("file:        %s\n", info.path.c_str());
  std::printf("format:      %s\n", info.format.c_str());
  std::printf("dimension:   %dD\n", g.dims);
  std::string extent;
  for (int ax = 0; ax < g.dims; ++ax)
    extent += (ax ? " x " : "") + std::to_string(g.extent[ax]);
  std::printf("extent:      %s (%lld voxels)\n", extent.c_str(),
              static_cast<long long>(g.voxel_count()));
  std::printf("pixel type:  %s %s, %d component%s\n", io::to_string(info.component_type),
              info.pixel_kind.c_str(), info.components, info.components == 1 ? "" : "s");
  const int spatial = g.dims == 4 ? 3 : g.dims;
  const std::string unit_note =
      info.spatial_unit_unknown.empty() ? "" : " (unit unknown: " + info.spatial_unit_unknown + ")";
  std::printf("spacing:     %s mm%s\n", join(g.spacing.data(), spatial, " x ").c_str(),
              unit_note.c_str());
  std::printf("origin:      %s mm\n", join(g.origin.data(), spatial, ", ").c_str());
  std::string dir;
  for (int r = 0; r < spatial; ++r) {
    double row[kMaxDims];
    for (int c = 0; c < spatial; ++c)
      row[c] = g.direction[r * kMaxDims + c];
    dir += (r ? "; " : "") + join(row, spatial, " ");
  }
  std::printf("direction:   [%s]\n", dir.c_str());
  if (g.dims == 4) {
    const std::string unknown = time_unit_unknown(info);
    std::printf("time step:   %.6g (spacing of axis t; %s)\n", g.spacing[3],
                unknown.empty() ? "seconds" : ("unit unknown: " + unknown).c_str());
  }
  std::printf("in memory:   %s as %s, %s as float32 while filtering\n",
              mib(static_cast<double>(info.native_bytes())).c_str(),
              io::to_string(info.component_type),
              mib(4.0 * g.voxel_count() * info.components).c_str());
  if (a.header_only)
    return;
  const io::Image image = io::read_image(a.in);
  for (int c = 0; c < info.components; ++c) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    int64_t nan = 0, inf = 0;
    for (float v : image.planes[c]) {
      if (std::isnan(v)) {
        ++nan;
      } else if (std::isinf(v)) {
        ++inf;
      } else {
        lo = std::min<double>(lo, v);
        hi = std::max<double>(hi, v);
      }
    }
    std::string label =
        info.components == 1 ? "value range: " : "component " + std::to_string(c) + ": ";
    if (lo <= hi)
      std::printf("%s%.7g .. %.7g", label.c_str(), lo, hi);
    else
      std::printf("%sno finite values", label.c_str());
    if (nan || inf)
      std::printf(" (%lld NaN, %lld Inf)", static_cast<long long>(nan),
                  static_cast<long long>(inf));
    std::printf("\n");
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info",
                                     "Describe an image: dimension, extents, pixel type, "
                                     "geometry, time step, value range, memory");
  sub->add_option("IN", a->in, kInputHelp)->required();
  sub->add_flag("--header-only", a->header_only, "read only the header (no value range)");
  add_input_options(*sub);
  sub->callback([a] { run_info(*a); });
}

}  // namespace ndconv::cli
