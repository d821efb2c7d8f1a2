#include "io/header_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "io/data_file_policy.h"
#include "io/header_text.h"
#include "io/image.h"
#include "io/itk_header_file.h"
#include "io/nrrd_header.h"
#include "io/regular_file.h"
#include "znzlib.h"

namespace ndconv::io {

namespace {

double file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
}

// A whole decimal number that fits in int64 (MetaIO and niftilib parse these with atoi/atof).
bool parse_integer(const std::string& s, long long& out) {
  if (s.empty() || s.size() > 19)
    return false;
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  if (i == s.size() || s.find_first_not_of("0123456789", i) != std::string::npos)
    return false;
  out = std::stoll(s);
  return true;
}

bool parse_finite(const std::string& s, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' && sane_geometry(out);
}

// An uncompressed data file shorter than its header says: refused before anything allocates the
// size the header claims.
IoError too_short(const std::string& path, double needed, double have) {
  char text[200];
  std::snprintf(text, sizeof text,
                ": the header describes %.6g bytes of pixels but the file holds only %.0f bytes "
                "(truncated file or corrupt header)",
                needed, std::max(0.0, have));
  return IoError(path + text);
}

// ---------------------------------------------------------------------------------------------
// MetaImage

// Keys MetaIO reads; a file starting with one of them is parsed as MetaImage by ITK.
const char* const kMetaKeys[] = {"ObjectType",      "NDims",
                                 "ObjectSubType",   "Comment",
                                 "AcquisitionDate", "ID",
                                 "ParentID",        "Name",
                                 "BinaryData",      "DimSize",
                                 "TransformType",   "ElementType",
                                 "HeaderSize",      "ElementSpacing",
                                 "Modality",        "CompressedData"};

bool looks_like_metaimage(const std::string& path) {
  const std::string ext = to_lower(path.substr(path.size() > 4 ? path.size() - 4 : 0));
  if (ext == ".mha" || ext == ".mhd")
    return true;
  std::ifstream f(path, std::ios::binary);
  std::string first;
  f >> first;
  for (const char* key : kMetaKeys)
    if (first == key || first == std::string(key) + "=")
      return true;
  return false;
}

int meta_element_bytes(const std::string& type) {
  static const std::pair<const char*, int> sizes[] = {
      {"MET_CHAR", 1},         {"MET_UCHAR", 1},       {"MET_SHORT", 2},
      {"MET_USHORT", 2},       {"MET_INT", 4},         {"MET_UINT", 4},
      {"MET_LONG", 4},         {"MET_ULONG", 4},       {"MET_FLOAT", 4},
      {"MET_DOUBLE", 8},       {"MET_LONG_LONG", 8},   {"MET_ULONG_LONG", 8},
      {"MET_CHAR_ARRAY", 1},   {"MET_UCHAR_ARRAY", 1}, {"MET_SHORT_ARRAY", 2},
      {"MET_USHORT_ARRAY", 2}, {"MET_INT_ARRAY", 4},   {"MET_UINT_ARRAY", 4},
      {"MET_FLOAT_ARRAY", 4},  {"MET_DOUBLE_ARRAY", 8}};
  for (const auto& [name, bytes] : sizes)
    if (type == name)
      return bytes;
  return 0;
}

// MetaIO formats a slice-name pattern with sprintf(buffer[255], pattern, i): only one integer
// conversion (%d, optionally zero-padded to a width) in a short name is safe.
bool safe_slice_pattern(const std::string& pattern) {
  if (pattern.size() > 200)
    return false;
  int conversions = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%')
      continue;
    size_t j = i + 1;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) && j - i <= 3)
      ++j;
    if (j >= pattern.size() || pattern[j] != 'd')
      return false;
    ++conversions;
    i = j;
  }
  return conversions == 1;
}

// The keys of a MetaImage header that ITK's MetaIO acts on when it reads an image; others are
// left out of the header ITK reads (ndconv keeps no metadata of the input).
const char* const kMetaImageKeys[] = {"ObjectType",
                                      "ObjectSubType",
                                      "NDims",
                                      "Comment",
                                      "Name",
                                      "ID",
                                      "ParentID",
                                      "AcquisitionDate",
                                      "Modality",
                                      "BinaryData",
                                      "BinaryDataByteOrderMSB",
                                      "ElementByteOrderMSB",
                                      "CompressedData",
                                      "CompressedDataSize",
                                      "TransformType",
                                      "TransformMatrix",
                                      "Rotation",
                                      "Orientation",
                                      "Offset",
                                      "Position",
                                      "Origin",
                                      "CenterOfRotation",
                                      "AnatomicalOrientation",
                                      "DistanceUnits",
                                      "ElementSpacing",
                                      "ElementSize",
                                      "DimSize",
                                      "HeaderSizePerSlice",
                                      "ElementMin",
                                      "ElementMax",
                                      "ElementNumberOfChannels",
                                      "ElementType"};

// The resolved path of the checked slice file `file` of `header`, for a LIST ITK reads: refused
// when it holds a control character (a line break would split the LIST).
std::string resolved_name(const std::string& header, const std::string& file) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(file.c_str(), nullptr), &std::free);
  const std::string name = r ? std::string(r.get()) : file;
  if (holds_control_character(name))
    throw IoError(header + ": the slice file " + name +
                  " has a control character in its path; MetaImage LISTs cannot name it");
  return name;
}

HeaderFacts check_metaimage(const std::string& path) {
  auto bad = [&](const std::string& why) -> IoError {
    return IoError(path + ": malformed MetaImage header: " + why);
  };
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  std::map<std::string, std::string> fields;
  std::vector<std::string> order;  // the keys in the order written
  std::string line, data_file;
  bool have_data_file = false;
  std::streamoff header_bytes = 0;
  while (header_bytes < (1 << 20) && std::getline(f, line)) {
    header_bytes += static_cast<std::streamoff>(line.size() + 1);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (trim_blanks(line).empty())
      continue;
    if (std::any_of(line.begin(), line.end(), [](char c) {
          return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
        }))
      throw bad("the line '" + trim_blanks(line).substr(0, 60) +
                "' holds a control character (a line break other than \\n or \\r\\n?), which "
                "MetaImage readers split differently");
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw bad("the line '" + trim_blanks(line).substr(0, 60) + "' is not 'Key = value'");
    const std::string key = trim_blanks(line.substr(0, eq));
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }))
      throw bad("the key '" + key.substr(0, 60) +
                "' is not a word before '=' (MetaImage readers also split at ':' and at "
                "blanks, so such a line has more than one reading)");
    if (fields.count(key))
      throw bad("the key " + key + " is given twice");
    const std::string value = trim_blanks(line.substr(eq + 1));
    if (key == "ElementDataFile") {
      const std::string raw = line.substr(eq + 1);
      if (raw.find_last_not_of(" \t") != raw.size() - 1 || raw.find('\t') != std::string::npos)
        throw bad("ElementDataFile = '" + value +
                  "' ends with white space (or holds a tab), which MetaImage readers trim "
                  "differently");
      data_file = value;
      have_data_file = true;
      break;
    }
    fields[key] = value;
    order.push_back(key);
  }
  if (!have_data_file)
    throw bad("no ElementDataFile line (it ends the header and says where the pixels are)");

  long long ndims = 0;
  if (!fields.count("NDims"))
    throw bad("no NDims line");
  if (!parse_integer(fields["NDims"], ndims) || ndims < 1 || ndims > 10)
    throw bad("NDims = '" + fields["NDims"] + "' is not a dimension from 1 to 10");
  if (!fields.count("DimSize"))
    throw bad("no DimSize line");
  const auto dim_words = split_words(fields["DimSize"]);
  std::vector<long long> dim_size;
  for (const auto& w : dim_words) {
    long long v = 0;
    if (!parse_integer(w, v) || v < 1 || v > INT_MAX)
      throw bad("DimSize = '" + fields["DimSize"] + "': '" + w +
                "' is not an extent from 1 to 2147483647");
    dim_size.push_back(v);
  }
  if (static_cast<long long>(dim_size.size()) != ndims)
    throw bad("DimSize has " + std::to_string(dim_size.size()) + " values but NDims is " +
              std::to_string(ndims));
  if (!fields.count("ElementType"))
    throw bad("no ElementType line");
  const std::string type = fields["ElementType"];
  const int element_bytes = meta_element_bytes(type);
  if (element_bytes == 0)
    throw bad("ElementType " + type +
              " is not a pixel type ndconv reads (MET_UCHAR, MET_SHORT, "
              "MET_FLOAT, ...)");
  long long channels = 1;
  if (fields.count("ElementNumberOfChannels") &&
      (!parse_integer(fields["ElementNumberOfChannels"], channels) || channels < 1 ||
       channels > 4096))
    throw bad("ElementNumberOfChannels = '" + fields["ElementNumberOfChannels"] +
              "' is not a count from 1 to 4096");
  long long header_size = 0;
  if (fields.count("HeaderSize") &&
      (!parse_integer(fields["HeaderSize"], header_size) || header_size < -1))
    throw bad("HeaderSize = '" + fields["HeaderSize"] + "' is not -1 or a byte count");
  // Geometry that ITK turns into a direction matrix and spacing: finite numbers only.
  for (const char* key : {"ElementSpacing", "ElementSize", "Offset", "Position", "Origin",
                          "TransformMatrix", "Rotation", "Orientation", "CenterOfRotation"}) {
    if (!fields.count(key))
      continue;
    const auto values = split_words(fields[key]);
    for (const auto& w : values) {
      double v;
      if (!parse_finite(w, v))
        throw bad(std::string(key) + " = '" + fields[key] + "' holds '" + w +
                  "', not a finite number within +-1e15");
    }
    if (values.size() < static_cast<size_t>(std::string(key) == "TransformMatrix" ||
                                                    std::string(key) == "Rotation" ||
                                                    std::string(key) == "Orientation"
                                                ? ndims * ndims
                                                : ndims))
      throw bad(std::string(key) + " has " + std::to_string(values.size()) +
                " values, too few for NDims " + std::to_string(ndims));
  }

  HeaderFacts facts;
  facts.kind = HeaderFacts::Kind::MetaImage;
  const std::string compressed =
      to_lower(fields.count("CompressedData") ? fields["CompressedData"] : "");
  facts.compressed = compressed == "true";
  double values = static_cast<double>(channels);
  for (long long d : dim_size)
    values *= static_cast<double>(d);
  // BinaryData = False: the values are text, at least one character and a separator each.
  const bool text = to_lower(fields.count("BinaryData") ? fields["BinaryData"] : "") == "false";
  const double needed = text ? 2 * values - 1 : values * element_bytes;

  // Binary little-endian pixels in one file are read by ndconv itself
  // (ImageInfo::metaimage_pixels).
  const auto msb = [&](const char* key) {
    return fields.count(key) && to_lower(fields[key]) == "true";
  };
  const bool own_reader = !text && !msb("BinaryDataByteOrderMSB") && !msb("ElementByteOrderMSB");
  const auto dw = split_words(data_file);
  if (data_file.empty())
    throw bad("ElementDataFile is empty");
  // The header ITK reads (itk_header_file.h): the keys MetaIO acts on, each once, and the data
  // named by files ndconv checked.
  RewrittenHeader& itk = facts.itk_header;
  for (const std::string& key : order)
    if (key != "HeaderSize" && std::find(std::begin(kMetaImageKeys), std::end(kMetaImageKeys),
                                         key) != std::end(kMetaImageKeys))
      itk.before += key + " = " + fields[key] + "\n";
  if (fields.count("HeaderSize") && data_file != "LOCAL")
    itk.before += "HeaderSize = " + fields["HeaderSize"] + "\n";
  itk.before += "ElementDataFile = ";
  if (data_file == "LOCAL") {
    // The pixels follow the header in the same file: MetaIO seeks HeaderSize from its start.
    const long long offset = header_size != 0 ? header_size : static_cast<long long>(header_bytes);
    itk.before.insert(itk.before.size() - std::strlen("ElementDataFile = "),
                      "HeaderSize = " + std::to_string(offset) + "\n");
    itk.data_file = path;
    itk.after = "\n";
    facts.data_bytes = file_size(path) - static_cast<double>(header_bytes);
    if (own_reader && header_size == 0)
      facts.local_data_offset = static_cast<double>(header_bytes);
  } else if (dw[0] == "LIST") {
    // One file per slice (of NDims-1 dimensions, or of the dimension after LIST), one name per
    // line after the header, as MetaIO reads them.
    long long file_dims = ndims - 1;
    if (dw.size() > 1) {
      const long long asked = std::atoll(dw[1].c_str());
      if (asked >= 1 && asked <= ndims)
        file_dims = asked;
    }
    long long files = 1;
    for (long long a = ndims; a > file_dims; --a)
      files *= dim_size[a - 1];
    if (files > 100000)
      throw bad("ElementDataFile = LIST needs " + std::to_string(files) +
                " slice files; ndconv reads at most 100000");
    itk.before += dw.size() > 1 ? "LIST " + dw[1] + "\n" : "LIST\n";
    facts.data_bytes = 0;
    for (long long i = 0; i < files; ++i) {
      if (!std::getline(f, line))
        throw bad("ElementDataFile = LIST names " + std::to_string(i) +
                  " files but DimSize needs " + std::to_string(files));
      while (!line.empty() && (std::isspace(static_cast<unsigned char>(line.back())) ||
                               !std::isprint(static_cast<unsigned char>(line.back()))))
        line.pop_back();
      if (line.empty() || line.size() > 1000)
        throw bad("ElementDataFile = LIST: entry " + std::to_string(i + 1) +
                  (line.empty() ? " is empty" : " is longer than 1000 characters"));
      if (line.find_first_of(" \t") == 0)
        throw bad("ElementDataFile = LIST: entry " + std::to_string(i + 1) +
                  " begins with white space, which MetaImage readers trim differently");
      const std::string slice = check_data_file(path, line);
      facts.data_bytes += file_size(slice);
      itk.before += resolved_name(path, slice) + "\n";
    }
  } else if (data_file.find('%') != std::string::npos) {
    // "name%03d.raw first last step": MetaIO reads slices first, first+step, ... <= last.
    if (dw.size() > 4 || !safe_slice_pattern(dw[0]))
      throw bad("ElementDataFile = '" + data_file +
                "': a slice-name pattern must be one short name with a single %d (e.g. "
                "slice%03d.raw 1 40 1); other % conversions are refused");
    long long first = 1, last = dim_size.back(), step = 1;
    if ((dw.size() > 1 && !parse_integer(dw[1], first)) ||
        (dw.size() > 2 && !parse_integer(dw[2], last)) ||
        (dw.size() > 3 && !parse_integer(dw[3], step)) || step < 1 || first < 0 || last < first)
      throw bad("ElementDataFile = '" + data_file +
                "': the slice range must be whole numbers first <= last with a step of 1 or more");
    const long long count = (last - first) / step + 1;
    if (count != dim_size.back())
      throw bad("ElementDataFile = '" + data_file + "' names " + std::to_string(count) +
                " slices but the last DimSize is " + std::to_string(dim_size.back()));
    // Handed to ITK as the LIST of the slice files it names.
    itk.before += "LIST " + std::to_string(ndims - 1) + "\n";
    facts.data_bytes = 0;
    for (long long i = first; i <= last; i += step) {
      char name[256];
      std::snprintf(name, sizeof name, dw[0].c_str(), static_cast<int>(i));
      const std::string slice = check_data_file(path, name);
      facts.data_bytes += file_size(slice);
      itk.before += resolved_name(path, slice) + "\n";
    }
  } else {
    itk.data_file = check_data_file(path, data_file);
    itk.after = "\n";
    facts.data_bytes = file_size(itk.data_file);
    if (header_size > 0)
      facts.data_bytes -= static_cast<double>(header_size);
    if (own_reader && header_size >= 0) {
      facts.local_data_offset = static_cast<double>(header_size);
      facts.pixel_file = itk.data_file;
    }
  }
  if (!facts.compressed && needed > facts.data_bytes)
    throw too_short(path, needed, facts.data_bytes);
  // The compressed size, where given, bounds what the readers inflate: it must lie within the
  // data (MetaIO would read past it) and is checked against the stream when it is inflated.
  if (facts.compressed && fields.count("CompressedDataSize")) {
    long long size = 0;
    if (!parse_integer(fields["CompressedDataSize"], size) || size < 1)
      throw bad("CompressedDataSize = '" + fields["CompressedDataSize"] +
                "' is not a byte count of 1 or more");
    if (static_cast<double>(size) > facts.data_bytes)
      throw bad("CompressedDataSize = " + std::to_string(size) + " but the data holds only " +
                std::to_string(static_cast<long long>(std::max(0.0, facts.data_bytes))) +
                " bytes (truncated file or corrupt header)");
    facts.compressed_size = static_cast<double>(size);
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------
// NIfTI-1

struct Nifti1Header {
  unsigned char bytes[348];
  bool swap = false;
  template <typename T>
  T get(size_t offset) const {
    return header_field<T>(bytes, offset, swap);
  }
};

// Reads the first 348 bytes (through gzip when compressed); false when they are not a NIfTI-1
// or Analyze header.
bool read_nifti1_header(const std::string& path, Nifti1Header& h) {
  znzFile f = znzopen(path.c_str(), "rb", 1);
  if (znz_isnull(f))
    return false;
  const size_t n = znzread(h.bytes, 1, sizeof h.bytes, f);
  znzclose(f);
  if (n != sizeof h.bytes)
    return false;
  int32_t size;
  std::memcpy(&size, h.bytes, 4);
  if (size == 348)
    return true;
  h.swap = true;
  return h.get<int32_t>(0) == 348;
}

std::string strip_nifti_extension(const std::string& path, std::string& ext) {
  for (const char* e : {".nii.gz", ".hdr.gz", ".img.gz", ".nii", ".hdr", ".img"}) {
    if (ends_with(to_lower(path), e)) {
      ext = to_lower(e);
      return path.substr(0, path.size() - std::strlen(e));
    }
  }
  ext.clear();
  return path;
}

HeaderFacts check_nifti1(const std::string& path, const std::string& header_path,
                         const Nifti1Header& h) {
  auto bad = [&](const std::string& why) -> IoError {
    return IoError(path + ": corrupt NIfTI header: " + why);
  };
  HeaderFacts facts;
  facts.kind = HeaderFacts::Kind::Nifti1;
  const int16_t ndim = h.get<int16_t>(40);
  if (ndim < 1 || ndim > 7)
    throw bad("dim[0] = " + std::to_string(ndim) + " is not a dimension from 1 to 7");
  double values = 1;
  for (int i = 1; i <= ndim; ++i) {
    const int16_t d = h.get<int16_t>(40 + 2 * i);
    if (d < 1)
      throw bad("dim[" + std::to_string(i) + "] = " + std::to_string(d) + " is not an extent");
    values *= d;
  }
  for (int i = 0; i <= ndim; ++i) {
    const float p = h.get<float>(76 + 4 * i);
    if (!sane_float_geometry(p)) {
      std::ostringstream value;
      value << p;
      throw bad("pixdim[" + std::to_string(i) + "] is " + value.str() +
                ", not a finite voxel size within +-1e15 (nor a subnormal number)");
    }
  }
  facts.zero_time_step = ndim >= 4 && h.get<int16_t>(48) > 1 && h.get<float>(92) == 0.0f;
  facts.xyzt_units = static_cast<unsigned char>(h.bytes[123]);
  if (h.get<int16_t>(252) > 0) {
    for (int i = 0; i < 6; ++i)
      if (!sane_float_geometry(h.get<float>(256 + 4 * i)))
        throw bad(
            "the qform (quatern_b/c/d, qoffset_x/y/z) holds NaN, Inf, a subnormal number or a "
            "value beyond +-1e15");
  }
  if (h.get<int16_t>(254) > 0) {
    for (int i = 0; i < 12; ++i)
      if (!sane_float_geometry(h.get<float>(280 + 4 * i)))
        throw bad(
            "the sform (srow_x/y/z) holds NaN, Inf, a subnormal number or a value beyond +-1e15");
  }
  const char* magic = reinterpret_cast<const char*>(h.bytes + 344);
  const bool single_file = std::memcmp(magic, "n+1", 4) == 0;
  const float vox_offset = h.get<float>(108);
  if (!std::isfinite(vox_offset) || vox_offset < 0 || vox_offset != std::floor(vox_offset) ||
      vox_offset > 1e15)
    throw bad("vox_offset = " + std::to_string(vox_offset) +
              " is not a byte offset (a whole number, 0 or more)");
  if (single_file && vox_offset < 352)
    throw bad("vox_offset = " + std::to_string(static_cast<long long>(vox_offset)) +
              " lies inside the header; a .nii file's pixels start at byte 352 or later");
  const int16_t bitpix = h.get<int16_t>(72);
  const double needed = values * std::max<int16_t>(bitpix, 0) / 8.0;
  std::string ext;
  const std::string base = strip_nifti_extension(header_path, ext);
  const bool gz = ends_with(ext, ".gz");
  facts.compressed = gz;
  if (single_file) {
    facts.data_bytes = file_size(header_path);
    if (!gz && needed + vox_offset > facts.data_bytes)
      throw too_short(path, needed, facts.data_bytes - vox_offset);
    return facts;
  }
  // A pair (magic "ni1", or Analyze 7.5): niftilib reads the pixels from base.img(.gz).
  std::string data;
  for (const char* e : {".img", ".img.gz", ".IMG"}) {
    if (::access((base + e).c_str(), F_OK) == 0) {
      data = base + e;
      break;
    }
  }
  if (data.empty())
    throw IoError(path + ": a NIfTI/Analyze header without its data file " + base + ".img");
  const auto slash = data.rfind('/');
  facts.data_bytes = file_size(check_data_file(header_path, data.substr(slash + 1)));
  facts.compressed = ends_with(data, ".gz");
  return facts;
}

}  // namespace

void describe_nifti_units(int xyzt_units, ImageInfo& info) {
  // NIfTI's unit codes: space in the low three bits (0 unknown), time in bits 3 to 5 (0 unknown).
  const int space = xyzt_units & 0x07, time = xyzt_units & 0x38;
  if (space == 0)
    info.spatial_unit_unknown = "xyzt_units " + std::to_string(xyzt_units);
  const Geometry& g = info.geometry;
  if (g.dims == 4 && time == 0 && g.spacing[3] != 0)
    info.time_unit_unknown = "xyzt_units " + std::to_string(xyzt_units);
}

bool sane_geometry(double v) {
  return std::isfinite(v) && std::abs(v) <= kGeometryLimit;
}

bool sane_float_geometry(float v) {
  return sane_geometry(v) && std::fpclassify(v) != FP_SUBNORMAL;
}

void check_input_file(const std::string& path) {
  struct stat st;
  if (path.empty())
    throw IoError("the input path is empty");
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw IoError(path + ": is a folder, not an image file");
  check_regular_file(path, "images");
  if (::access(path.c_str(), R_OK) != 0)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  if (st.st_size == 0)
    throw IoError(path + ": the file is empty");
}

HeaderFacts check_header(const std::string& path) {
  std::string ext;
  const std::string base = strip_nifti_extension(path, ext);
  if (ext == ".img" || ext == ".img.gz") {
    // niftilib reads the header beside the named .img; that header obeys the same policy.
    for (const char* e : {".hdr", ".hdr.gz"}) {
      if (::access((base + e).c_str(), F_OK) == 0) {
        const std::string header = base + e;
        check_data_file(path, header.substr(header.rfind('/') + 1));
        Nifti1Header h;
        if (read_nifti1_header(header, h))
          return check_nifti1(path, header, h);
      }
    }
  }
  Nifti1Header h;
  if (read_nifti1_header(path, h))
    return check_nifti1(path, path, h);
  if (looks_like_metaimage(path))
    return check_metaimage(path);
  HeaderFacts facts;
  // A detached NRRD header's pixels are in the file it names (nrrd_header.h checks that name).
  facts.data_bytes = is_nrrd(path) ? nrrd_data_bytes(path) : file_size(path);
  return facts;
}

}  // namespace ndconv::io
