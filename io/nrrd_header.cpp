#include "io/nrrd_header.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "io/header_text.h"
#include "io/itk_header_file.h"
#include "io/nrrd_sequence.h"
#include "io/image.h"

namespace ndconv::io {

namespace {

// A header longer than this is not a NRRD header (real ones are well under 4 kB).
constexpr size_t kMaxHeaderBytes = 1 << 20;

// NRRD's type names (NRRD0005 spec) and the bytes of one value; "block" is absent on purpose.
int type_bytes(const std::string& type) {
  static const std::map<std::string, int> kTypes = {
      {"signed char", 1},
      {"int8", 1},
      {"int8_t", 1},
      {"uchar", 1},
      {"unsigned char", 1},
      {"uint8", 1},
      {"uint8_t", 1},
      {"short", 2},
      {"short int", 2},
      {"signed short", 2},
      {"signed short int", 2},
      {"int16", 2},
      {"int16_t", 2},
      {"ushort", 2},
      {"unsigned short", 2},
      {"unsigned short int", 2},
      {"uint16", 2},
      {"uint16_t", 2},
      {"int", 4},
      {"signed int", 4},
      {"int32", 4},
      {"int32_t", 4},
      {"uint", 4},
      {"unsigned int", 4},
      {"uint32", 4},
      {"uint32_t", 4},
      {"longlong", 8},
      {"long long", 8},
      {"long long int", 8},
      {"signed long long", 8},
      {"signed long long int", 8},
      {"int64", 8},
      {"int64_t", 8},
      {"ulonglong", 8},
      {"unsigned long long", 8},
      {"unsigned long long int", 8},
      {"uint64", 8},
      {"uint64_t", 8},
      {"float", 4},
      {"double", 8},
  };
  const auto it = kTypes.find(type);
  return it == kTypes.end() ? 0 : it->second;
}

std::string normalised_encoding(const std::string& e) {
  if (e == "raw")
    return "raw";
  if (e == "gzip" || e == "gz")
    return "gzip";
  if (e == "ascii" || e == "text" || e == "txt")
    return "ascii";
  if (e == "hex")
    return "hex";
  if (e == "bzip2" || e == "bz2")
    return "bzip2";
  return {};
}

// Axis kinds that are part of the image's domain; any other kind (vector, RGB-color, ...) makes
// the axis the pixel's components, which ITK allows only as the first axis.
bool is_domain_kind(const std::string& kind) {
  return kind == "domain" || kind == "space" || kind == "time" || kind == "???" || kind == "none";
}

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty())
    return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0';
}

// "(1,0,0) none (0,1,0)" -> vectors; "none" is an empty vector. False when malformed.
bool parse_vectors(const std::string& s, std::vector<std::vector<double>>& out) {
  out.clear();
  for (const std::string& w : split_words(s)) {
    std::vector<double> v;
    if (w != "none") {
      if (w.size() < 2 || w.front() != '(' || w.back() != ')')
        return false;
      std::stringstream parts(w.substr(1, w.size() - 2));
      std::string part;
      while (std::getline(parts, part, ',')) {
        double x;
        if (!parse_double(trim_blanks(part), x))
          return false;
        v.push_back(x);
      }
      if (v.empty())
        return false;
    }
    out.push_back(v);
  }
  return true;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

double file_bytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : -1.0;
}

// NRRD's field names (teem's nrrdField), as ndconv writes them in the header it hands ITK.
const char* const kNrrdFields[] = {"content",
                                   "number",
                                   "type",
                                   "block size",
                                   "dimension",
                                   "space",
                                   "space dimension",
                                   "sizes",
                                   "spacings",
                                   "thicknesses",
                                   "axis mins",
                                   "axis maxs",
                                   "space directions",
                                   "centers",
                                   "centerings",
                                   "kinds",
                                   "labels",
                                   "units",
                                   "min",
                                   "max",
                                   "old min",
                                   "old max",
                                   "endian",
                                   "encoding",
                                   "line skip",
                                   "byte skip",
                                   "sample units",
                                   "space units",
                                   "space origin",
                                   "measurement frame",
                                   "data file"};

// The field name `written` (any case, spaces optional) stands for, without spaces; empty when it
// is not a NRRD field.
std::string field_key(const std::string& written) {
  std::string key;
  for (char c : written)
    if (c != ' ')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* name : kNrrdFields) {
    std::string k(name);
    k.erase(std::remove(k.begin(), k.end(), ' '), k.end());
    if (k == key)
      return key;
  }
  return {};
}

struct RawHeader {
  std::map<std::string, std::string> fields;  ///< field key (field_key) -> value
  std::map<std::string, int> line;            ///< field key -> its line in the header
  /// Every field and key/value line in order, as ndconv parsed it: (field key or "", text), the
  /// text being "name: value" or "key:=value".
  std::vector<std::pair<std::string, std::string>> lines;
  std::string magic;       ///< the first line
  int64_t end = 0;         ///< byte after the header (and its blank line)
  int64_t line_count = 0;  ///< lines of the header, its blank line included
};

// Reads the header's field lines up to the blank line (or the end of a detached header). Only one
// reading is accepted: lines end with \n (or \r\n), no other control character appears in them,
// a field is given once, and a line is a field ("name: value", name a NRRD field), a key/value pair
// ("key:=value") or a comment. NRRD readers differ on anything else (a lone \r ends a line for
// teem but not here; NRRD0001..3 know no key/value pairs), so anything else is refused.
RawHeader read_fields(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  auto bad = [&](const std::string& why) { return IoError(path + ": NRRD header: " + why); };
  RawHeader h;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    h.end += static_cast<int64_t>(line.size()) + 1;
    ++h.line_count;
    if (static_cast<size_t>(h.end) > kMaxHeaderBytes)
      throw IoError(path + ": the NRRD header is longer than 1 MiB (corrupt file?)");
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (first) {
      first = false;
      if (line.rfind("NRRD000", 0) != 0 || line.size() != 8 || line[7] < '1' || line[7] > '5')
        throw IoError(path + ": not a NRRD file (its first line is not NRRD0001 .. NRRD0005)");
      if (line[7] < '4')
        throw bad(
            line +
            " is an older NRRD version, which NRRD readers of different ages parse "
            "differently; ndconv reads NRRD0004 and NRRD0005 (re-save the file with a current "
            "tool)");
      h.magic = line;
      continue;
    }
    const std::string t = trim_blanks(line);
    if (t.empty())
      break;
    if (h.fields.count("datafile") && h.fields["datafile"].rfind("LIST", 0) == 0)
      continue;  // LIST file names; refused below anyway
    const int line_number = static_cast<int>(h.line_count);
    for (char c : line)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        throw bad("line " + std::to_string(line_number) +
                  " holds a control character (a line break other than \\n or \\r\\n?), which "
                  "NRRD readers split differently");
    if (t[0] == '#')
      continue;
    const auto colon = t.find(": ");
    const std::string key =
        colon == std::string::npos ? std::string() : field_key(t.substr(0, colon));
    if (key.empty()) {
      if (t.find(":=") != std::string::npos) {
        h.lines.push_back({"", t});  // a key/value pair ITK keeps as metadata
        continue;
      }
      throw bad("line \"" + t.substr(0, 60) + "\" is not \"field: value\" with a NRRD field " +
                "(corrupt header?)");
    }
    if (h.fields.count(key))
      throw bad("the field \"" + t.substr(0, colon) + "\" is given twice");
    std::string value = line.substr(line.find(": ") + 2);
    if (key == "datafile") {
      if (value != trim_blanks(value) || value.find('\t') != std::string::npos)
        throw bad("the data file \"" + value +
                  "\" begins or ends with white space (or holds a tab), which NRRD readers "
                  "trim differently");
      if (value.find(":=") != std::string::npos)
        throw bad("the data file \"" + value +
                  "\" holds \":=\", which NRRD readers may take for a key/value line");
    }
    value = trim_blanks(value);
    h.fields[key] = value;
    h.line[key] = static_cast<int>(h.line.size()) + 1;
    h.lines.push_back({key, value});
  }
  if (first)
    throw IoError(path + ": the file is empty");
  return h;
}

// The canonical name of field `key` (field_key).
std::string field_name(const std::string& key) {
  for (const char* name : kNrrdFields) {
    std::string k(name);
    k.erase(std::remove(k.begin(), k.end(), ' '), k.end());
    if (k == key)
      return name;
  }
  return key;
}

// The header ITK reads instead of the file's own: the fields and key/value pairs ndconv parsed,
// each written once on a line of its own, and the data file (the file itself for attached data,
// its header's lines skipped).
// `replaced` gives other text for some fields (its key as the name written, "" to leave the
// field out); fields it names that the header lacks are added.
RewrittenHeader itk_header_text(const RawHeader& raw, const NrrdHeader& h, int64_t line_skip,
                                const std::map<std::string, std::string>& replaced) {
  RewrittenHeader out;
  out.data_file = h.data_file;
  out.before = raw.magic + "\n";
  for (const auto& [key, value] : raw.lines) {
    const auto other = replaced.find(key);
    if (key.empty())
      out.before += value + "\n";
    else if (other != replaced.end())
      out.before += other->second;
    else if (key != "datafile" && key != "lineskip")
      out.before += field_name(key) + ": " + value + "\n";
  }
  for (const auto& [key, text] : replaced)
    if (!raw.fields.count(key))
      out.before += text;
  const int64_t skip = h.attached ? raw.line_count + line_skip : line_skip;
  if (skip > 0)
    out.before += "line skip: " + std::to_string(skip) + "\n";
  out.before += "data file: ";
  out.after = "\n";
  return out;
}

}  // namespace

bool is_nrrd(const std::string& path) {
  return file_holds_at(path, 0, "NRRD000");
}

std::string resolve_data_file(const std::string& header, const std::string& name,
                              const std::string& what, bool allow_external_data) {
  const std::string quoted = "the " + what + " \"" + name + "\"";
  const std::string rule =
      "; ndconv reads only regular files inside the header's own folder, after resolving .. and "
      "symbolic links";
  if (name.empty())
    throw IoError(header + ": the " + what + " is empty");
  if (name[0] == '/' && !allow_external_data)
    throw IoError(header + ": " + quoted + " is an absolute path" + rule);
  const std::string folder = folder_of(header);
  const std::string full = name[0] == '/' ? name : folder + "/" + name;
  char resolved[PATH_MAX], root[PATH_MAX];
  if (::realpath(full.c_str(), resolved) == nullptr)
    throw IoError(header + ": " + quoted + " cannot be read: " + std::strerror(errno));
  if (::realpath(folder.c_str(), root) == nullptr)
    throw IoError(header + ": its folder cannot be read: " + std::strerror(errno));
  const std::string inside = std::string(root) == "/" ? "/" : std::string(root) + "/";
  if (!allow_external_data && std::string(resolved).rfind(inside, 0) != 0)
    throw IoError(header + ": " + quoted + " is outside the header's folder (it resolves to " +
                  resolved + ")" + rule);
  struct stat st;
  if (::stat(resolved, &st) != 0 || !S_ISREG(st.st_mode))
    throw IoError(header + ": " + quoted + " is not a regular file" + rule);
  return resolved;
}

bool space_units_are_mm(const std::string& space_units) {
  // Quoted words, e.g. "mm" "mm" "mm"; an empty word is an axis without a unit.
  for (std::string unit : split_words(space_units)) {
    unit.erase(std::remove(unit.begin(), unit.end(), '"'), unit.end());
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (unit != "mm" && unit != "millimeter" && unit != "millimeters" && unit != "millimetre" &&
        unit != "millimetres")
      return false;
  }
  return true;
}

NrrdHeader check_nrrd_header(const std::string& path, bool allow_external_data) {
  const RawHeader raw = read_fields(path);
  const auto& f = raw.fields;
  auto field = [&](const char* name) -> std::string {
    const auto it = f.find(name);
    return it == f.end() ? std::string() : it->second;
  };
  auto bad = [&](const std::string& what) { return IoError(path + ": NRRD header: " + what); };
  NrrdHeader h;
  h.space_units = field("spaceunits");

  int64_t dimension = 0;
  if (!parse_int(field("dimension"), dimension) || dimension < 1 || dimension > 16)
    throw bad("the dimension \"" + field("dimension") + "\" is missing or not a number from 1");
  h.dimension = static_cast<int>(dimension);

  h.type = field("type");
  h.type_bytes = type_bytes(h.type);
  if (h.type_bytes == 0) {
    throw bad("type \"" + h.type +
              "\" is not supported (ndconv reads signed and unsigned 8/16/32/64-bit integers, "
              "float and double)");
  }

  const std::vector<std::string> size_words = split_words(field("sizes"));
  if (size_words.size() != static_cast<size_t>(dimension))
    throw bad("sizes gives " + std::to_string(size_words.size()) + " values for dimension " +
              std::to_string(dimension));
  h.values = 1;
  for (const std::string& w : size_words) {
    int64_t n = 0;
    if (!parse_int(w, n) || n < 1 || n > INT32_MAX)
      throw bad("the size \"" + w + "\" is not a whole number from 1 to 2147483647");
    h.sizes.push_back(n);
    h.values *= static_cast<double>(n);
  }
  const double bytes = h.values * h.type_bytes;
  const double max_bytes = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                           static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (!(bytes <= max_bytes)) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "the sizes describe %.4g values (%.3g GB), more than this machine can hold "
                  "(corrupt header?)",
                  h.values, bytes / 1e9);
    throw bad(text);
  }

  // A leading axis of another kind than domain holds the pixel's components.
  const std::vector<std::string> kinds = split_words(field("kinds"));
  if (!kinds.empty() && kinds.size() != static_cast<size_t>(dimension))
    throw bad("kinds gives " + std::to_string(kinds.size()) + " values for dimension " +
              std::to_string(dimension));
  const bool component_axis = !kinds.empty() && !is_domain_kind(kinds[0]);
  // A Slicer volume sequence's list axis (nrrd_sequence.h): last, or first (read by ITK as the
  // components, then made the time axis by ndconv).
  for (const auto& [key, text] : raw.lines)
    if (key.empty())
      h.key_values.push_back({text.substr(0, text.find(":=")), text.substr(text.find(":=") + 2)});
  h.sequence_axis = sequence_list_axis(path, kinds, h.key_values);
  for (size_t a = 1; a < kinds.size(); ++a)
    if (!is_domain_kind(kinds[a]) && static_cast<int>(a) != h.sequence_axis)
      throw bad("axis " + std::to_string(a) + " is of kind \"" + kinds[a] +
                "\"; only the first axis may hold a pixel's components");
  h.spatial_dimension = h.dimension - (component_axis ? 1 : 0);
  if (h.spatial_dimension < 2 || h.spatial_dimension > 4)
    throw bad("the image is " + std::to_string(h.spatial_dimension) +
              "D; ndconv filters 2D, 3D and 4D images");

  const std::string encoding = field("encoding");
  h.encoding = normalised_encoding(encoding);
  if (h.encoding.empty() || h.encoding == "bzip2")
    throw bad("encoding \"" + encoding + "\" is not supported (raw, gzip, ascii or hex)");

  // NRRD reads a vector field only in a space already declared.
  for (const char* vector_field : {"spacedirections", "spaceorigin"}) {
    if (!f.count(vector_field))
      continue;
    const int declared =
        std::max(raw.line.count("space") ? raw.line.at("space") : 0,
                 raw.line.count("spacedimension") ? raw.line.at("spacedimension") : 0);
    if (declared == 0 || declared > raw.line.at(vector_field))
      throw bad(std::string(vector_field) == "spaceorigin"
                    ? "space origin comes before a space or space dimension field"
                    : "space directions comes before a space or space dimension field");
  }

  // Geometry: every number finite, no zero direction. NRRD writes a spacing as nan where the axis
  // has a space direction instead (or is a component axis); elsewhere a nan would become 1.
  std::vector<std::vector<double>> directions;
  if (f.count("spacedirections")) {
    if (!parse_vectors(field("spacedirections"), directions) ||
        directions.size() != static_cast<size_t>(dimension))
      throw bad("space directions \"" + field("spacedirections").substr(0, 80) +
                "\" is not one (x,y,z) or none per axis");
    for (size_t a = 0; a < directions.size(); ++a) {
      double length = 0;
      for (double x : directions[a]) {
        if (!std::isfinite(x))
          throw bad("the space direction of axis " + std::to_string(a) +
                    " holds a value that is not finite");
        length += x * x;
      }
      if (!directions[a].empty() && !(length > 0))
        throw bad("the space direction of axis " + std::to_string(a) + " is zero");
      const bool component = (component_axis && a == 0) || static_cast<int>(a) == h.sequence_axis;
      if (directions[a].empty() != component)
        throw bad("axis " + std::to_string(a) +
                  (component ? " holds the pixel's components but has a space direction"
                             : " has no space direction (e.g. a time axis beside a 3D space); "
                               "ITK's NRRD reader needs a space direction for every image axis "
                               "(a 4D image in a 4D space, as ITK writes it)"));
    }
  }
  const std::vector<std::string> spacings = split_words(field("spacings"));
  for (size_t a = 0; a < spacings.size(); ++a) {
    double s;
    const bool nan_allowed = (component_axis && a == 0) || static_cast<int>(a) == h.sequence_axis ||
                             (a < directions.size() && !directions[a].empty());
    if (!parse_double(spacings[a], s) || (!std::isfinite(s) && !(nan_allowed && std::isnan(s))))
      throw bad("the spacing \"" + spacings[a] + "\" of axis " + std::to_string(a) +
                " is not a finite number");
  }
  std::vector<std::vector<double>> origin;
  if (f.count("spaceorigin")) {
    if (!parse_vectors(field("spaceorigin"), origin) || origin.size() != 1 || origin[0].empty())
      throw bad("space origin \"" + field("spaceorigin").substr(0, 80) + "\" is not (x,y,z)");
    for (double x : origin[0])
      if (!std::isfinite(x))
        throw bad("the space origin holds a value that is not finite");
  }
  std::map<std::string, std::string> replaced;  // fields ITK reads otherwise ("": left out)
  if (h.sequence_axis >= 0) {
    sequence_time_axis(path, h.sequence_axis, h.sizes[h.sequence_axis], h.key_values, h.time_origin,
                       h.time_step);
    if (h.sequence_axis == 3)
      replaced = sequence_in_4d_space(path, field("space"), directions, origin, h.time_origin,
                                      h.time_step);
  }

  int64_t byte_skip = 0, line_skip = 0;
  const std::string byte_skip_text = f.count("byteskip") ? field("byteskip") : "0";
  const std::string line_skip_text = f.count("lineskip") ? field("lineskip") : "0";
  if (!parse_int(byte_skip_text, byte_skip) || byte_skip < -1)
    throw bad("byte skip \"" + byte_skip_text + "\" is not -1 or a whole number");
  if (!parse_int(line_skip_text, line_skip) || line_skip < 0)
    throw bad("line skip \"" + line_skip_text + "\" is not a whole number");

  // The data: after the header, or in the one file the header names.
  std::string data_name = f.count("datafile") ? field("datafile") : std::string();
  h.attached = data_name.empty();
  if (h.attached) {
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".nhdr") == 0)
      throw bad("a detached header (.nhdr) without a data file field");
    h.data_file = path;
    h.data_offset = raw.end;
  } else {
    if (data_name.rfind("LIST", 0) == 0)
      throw bad(
          "the data file is a LIST of files, which ndconv does not read; join the slices "
          "into one data file");
    if (data_name.find('%') != std::string::npos)
      throw bad("the data file \"" + data_name +
                "\" is a file name pattern (or holds %), which ndconv does not read");
    h.data_file = resolve_data_file(path, data_name, "data file", allow_external_data);
  }

  // The data must be able to hold what the header describes: raw data all of it, gzip at least
  // what deflate's 1032:1 limit allows. ascii and hex take more bytes than values.
  const double stored = file_bytes(h.data_file) - static_cast<double>(h.data_offset);
  const double needed = h.encoding == "raw" && byte_skip >= 0 && line_skip == 0
                            ? bytes + static_cast<double>(byte_skip)
                        : h.encoding == "gzip" ? (bytes - (1 << 20)) / 1100.0
                                               : h.values;
  if (!(stored >= needed)) {
    char text[200];
    std::snprintf(text, sizeof text,
                  ": the NRRD header describes %.4g values (%.3g MB) but its data holds only "
                  "%.0f bytes (corrupt header or truncated file?)",
                  h.values, bytes / 1e6, stored < 0 ? 0.0 : stored);
    throw IoError((h.attached ? path : path + " (data file " + h.data_file + ")") + text);
  }
  h.itk_header = itk_header_text(raw, h, line_skip, replaced);
  return h;
}

void check_nrrd_output_name(const std::string& path) {
  const bool detached = path.size() > 5 && path.compare(path.size() - 5, 5, ".nhdr") == 0;
  if (detached && path.substr(path.rfind('/') + 1).find('%') != std::string::npos)
    throw RequestError(path +
                       ": a detached NRRD header named with % would name its data file with % too, "
                       "which NRRD reads as a file name pattern; rename the output or write .nrrd");
}

double nrrd_data_bytes(const std::string& path) {
  try {
    const NrrdHeader h = check_nrrd_header(path, true);
    return h.attached ? file_bytes(path) : file_bytes(path) + file_bytes(h.data_file);
  } catch (const IoError&) {
    return -1;
  }
}

}  // namespace ndconv::io
