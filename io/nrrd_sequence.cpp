#include "io/nrrd_sequence.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "io/header_text.h"
#include "io/output_file.h"
#include "io/pixel_convert.h"
#include "io/regular_file.h"

namespace ndconv::io {

namespace {

std::string axis_key(int axis, const char* what) {
  return "axis " + std::to_string(axis) + " index " + what;
}

const std::string* find_key(const NrrdKeyValues& kv, const std::string& key) {
  for (const auto& [k, v] : kv)
    if (k == key)
      return &v;
  return nullptr;
}

// The shortest of %.15g .. %.17g that reads back as `v`.
std::string number(double v) {
  char text[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v)
      break;
  }
  return text;
}

const char* nrrd_type(ComponentType t) {
  switch (t) {
    case ComponentType::UInt8:
      return "uint8";
    case ComponentType::Int8:
      return "int8";
    case ComponentType::UInt16:
      return "uint16";
    case ComponentType::Int16:
      return "int16";
    case ComponentType::UInt32:
      return "uint32";
    case ComponentType::Int32:
      return "int32";
    case ComponentType::UInt64:
      return "uint64";
    case ComponentType::Int64:
      return "int64";
    case ComponentType::Float32:
      return "float";
    case ComponentType::Float64:
      return "double";
  }
  return "float";
}

}  // namespace

int sequence_list_axis(const std::string& path, const std::vector<std::string>& kinds,
                       const NrrdKeyValues& key_values) {
  if (kinds.size() != 4)
    return -1;
  for (const int axis : {3, 0}) {
    if (kinds[axis] != "list")
      continue;
    bool others_domain = true;
    for (int a = 0; a < 4; ++a)
      if (a != axis)
        others_domain = others_domain && (kinds[a] == "domain" || kinds[a] == "space");
    const std::string prefix = "axis " + std::to_string(axis) + " index ";
    bool keyed = false;
    for (const auto& kv : key_values)
      keyed = keyed || kv.first.rfind(prefix, 0) == 0;
    if (others_domain && (keyed || ends_with(to_lower(path), ".seq.nrrd")))
      return axis;
  }
  return -1;
}

void sequence_time_axis(const std::string& path, int axis, int64_t items,
                        const NrrdKeyValues& key_values, double& origin, double& step) {
  origin = 0;
  step = 1;
  const std::string key = axis_key(axis, "values");
  const std::string* text = find_key(key_values, key);
  if (text == nullptr)
    return;
  auto bad = [&](const std::string& why) {
    return IoError(path + ": volume sequence: \"" + key + "\" " + why);
  };
  std::vector<double> values;
  for (const std::string& w : split_words(*text)) {
    char* end = nullptr;
    const double v = std::strtod(w.c_str(), &end);
    if (end == w.c_str() || *end != '\0' || !std::isfinite(v))
      throw bad("holds \"" + w.substr(0, 40) +
                "\", not a number (ndconv reads sequences indexed by time or another number)");
    values.push_back(v);
  }
  if (static_cast<int64_t>(values.size()) != items)
    throw bad("gives " + std::to_string(values.size()) + " positions for " + std::to_string(items) +
              " items");
  origin = values[0];
  if (items == 1)
    return;
  const double first_step = values[1] - values[0];
  if (!(first_step > 0))
    throw bad("does not increase (" + number(values[0]) + " then " + number(values[1]) +
              "); ndconv needs increasing, evenly spaced positions for the time axis");
  for (int64_t i = 2; i < items; ++i) {
    const double expected = origin + first_step * static_cast<double>(i);
    if (std::abs(values[i] - expected) > 1e-3 * first_step)
      throw bad("is not evenly spaced: item " + std::to_string(i) + " is at " + number(values[i]) +
                " where " + number(expected) +
                " was expected; ndconv's time axis needs one step between all items");
  }
  step = (values.back() - values.front()) / static_cast<double>(items - 1);
}

std::map<std::string, std::string> sequence_in_4d_space(
    const std::string& path, const std::string& space,
    const std::vector<std::vector<double>>& directions,
    const std::vector<std::vector<double>>& origin, double time_origin, double time_step) {
  const std::string s = to_lower(space);
  double flip[3] = {1, 1, 1};
  if (s == "right-anterior-superior" || s == "ras")
    flip[0] = flip[1] = -1;
  else if (s == "left-anterior-superior" || s == "las")
    flip[1] = -1;
  else if (s != "left-posterior-superior" || s.empty())
    throw IoError(path + ": volume sequence: space \"" + space +
                  "\" is not one ndconv reads for a sequence (left-posterior-superior, "
                  "right-anterior-superior or left-anterior-superior)");
  if (directions.size() != 4 || (!origin.empty() && origin[0].size() != 3))
    throw IoError(path + ": volume sequence: needs space directions for its three space axes");
  auto vec = [](const double(&v)[4]) {
    char text[160];
    std::snprintf(text, sizeof text, "(%.17g,%.17g,%.17g,%.17g)", v[0], v[1], v[2], v[3]);
    return std::string(text);
  };
  std::string dirs = "space directions:";
  for (int a = 0; a < 3; ++a) {
    if (directions[a].size() != 3)
      throw IoError(path + ": volume sequence: the space direction of axis " + std::to_string(a) +
                    " is not (x,y,z)");
    const double v[4] = {flip[0] * directions[a][0], flip[1] * directions[a][1],
                         flip[2] * directions[a][2], 0};
    dirs += " " + vec(v);
  }
  const double t[4] = {0, 0, 0, time_step};
  dirs += " " + vec(t) + "\n";
  const double o[4] = {origin.empty() ? 0 : flip[0] * origin[0][0],
                       origin.empty() ? 0 : flip[1] * origin[0][1],
                       origin.empty() ? 0 : flip[2] * origin[0][2], time_origin};
  return {{"space", "space dimension: 4\n"},
          {"spacedirections", dirs},
          {"spaceorigin", "space origin: " + vec(o) + "\n"},
          {"kinds", "kinds: domain domain domain domain\n"},
          {"spaceunits", ""},
          {"measurementframe", ""}};
}

bool is_sequence_output(const std::string& path, int dims) {
  return dims == 4 && ends_with(to_lower(path), ".seq.nrrd");
}

std::string sequence_header(const Image& image, ComponentType type, bool gzip) {
  const std::string& path = image.info.path;
  if (image.planes.size() != 1)
    throw RequestError(path +
                       ": a volume sequence (.seq.nrrd) holds scalar volumes; this image "
                       "has " +
                       std::to_string(image.planes.size()) + " components");
  const Geometry& g = image.info.geometry;
  std::ostringstream h;
  h << "NRRD0004\n# Volume sequence written by ndconv\n"
    << "type: " << nrrd_type(type) << "\ndimension: 4\nspace: left-posterior-superior\n"
    << "sizes: " << g.extent[0] << " " << g.extent[1] << " " << g.extent[2] << " " << g.extent[3]
    << "\nspace directions:";
  for (int a = 0; a < 3; ++a) {
    h << " (";
    for (int r = 0; r < 3; ++r)
      h << (r ? "," : "") << number(g.direction[r * kMaxDims + a] * g.spacing[a]);
    h << ")";
  }
  h << " none\nkinds: domain domain domain list\nendian: little\nencoding: "
    << (gzip ? "gzip" : "raw") << "\nspace origin: (" << number(g.origin[0]) << ","
    << number(g.origin[1]) << "," << number(g.origin[2]) << ")\n";
  // The input's key/value pairs, its list axis's renamed to axis 3; the positions recomputed.
  const std::string values_key = axis_key(3, "values");
  NrrdKeyValues kv;
  for (auto [key, value] : image.info.nrrd_key_values) {
    if (image.info.nrrd_list_axis == 0 && key.rfind("axis 0 index ", 0) == 0)
      key = "axis 3" + key.substr(6);
    if (key != values_key)
      kv.push_back({key, value});
  }
  for (const auto& [what, value] :
       {std::pair<const char*, const char*>{"name", "time"}, {"type", "numeric"}, {"unit", "s"}})
    if (find_key(kv, axis_key(3, what)) == nullptr)
      kv.push_back({axis_key(3, what), value});
  std::string positions;
  for (int64_t t = 0; t < g.extent[3]; ++t)
    positions += (t ? " " : "") + number(g.origin[3] + g.spacing[3] * static_cast<double>(t));
  kv.push_back({values_key, positions});
  for (const auto& [key, value] : kv)
    h << key << ":=" << value << "\n";
  h << "\n";
  return h.str();
}

}  // namespace ndconv::io

namespace ndconv::io {

WriteReport write_sequence_nrrd(const std::string& path, const Image& image, ComponentType type,
                                bool overwrite, const WriteSettings& settings) {
  const Geometry& g = image.info.geometry;
  Image named = image;
  named.info.path = path;
  const std::string header = sequence_header(named, type, settings.compression > 0);
  check_replaceable(path);
  struct stat st;
  if (!overwrite && ::lstat(path.c_str(), &st) == 0)
    throw RequestError(path + ": exists; use --force to overwrite it");
  WriteReport report;
  std::vector<char> data;
  planes_to_native(image.planes, type, g.voxel_count(), data, report, settings.threads);
  if (settings.progress)
    settings.progress(0.1);
  StagingFolder stage(path);
  NewFile file(stage.staged_path(), path);
  file.append(header.data(), header.size());
  if (settings.compression > 0) {
    const auto sink = [&](const unsigned char* bytes, size_t size) { file.append(bytes, size); };
    std::function<void(double)> progress;
    if (settings.progress)
      progress = [&](double f) { settings.progress(0.1 + 0.85 * f); };
    compress_parallel(data.data(), data.size(), DeflateContainer::Gzip, settings.compression, sink,
                      settings.threads, kDeflateChunkBytes, progress);
  } else {
    file.append(data.data(), data.size());
  }
  file.finish();
  stage.commit(overwrite);
  if (settings.progress)
    settings.progress(1.0);
  return report;
}

}  // namespace ndconv::io
