#include "io/nifti2_reader.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <vector>

#include "io/header_check.h"
#include "io/memory_check.h"
#include "io/pixel_convert.h"
#include "znzlib.h"

namespace ndconv::io {

namespace {

constexpr int kHeaderSize = 540;

class File {
 public:
  explicit File(const std::string& path) : f_(znzopen(path.c_str(), "rb", 1)) {}
  ~File() {
    if (!znz_isnull(f_))
      znzclose(f_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool ok() const { return !znz_isnull(f_); }
  size_t read(void* buf, size_t n) { return znzread(buf, 1, n, f_); }
  // gzip streams cannot seek backwards cheaply; skipping forward by reading works for both.
  bool skip(int64_t n) {
    std::vector<char> tmp(64 * 1024);
    while (n > 0) {
      const size_t want = static_cast<size_t>(std::min<int64_t>(n, tmp.size()));
      if (read(tmp.data(), want) != want)
        return false;
      n -= static_cast<int64_t>(want);
    }
    return true;
  }

 private:
  znzFile f_;
};

struct Header {
  std::vector<char> bytes;
  bool swap = false;

  template <typename T>
  T get(size_t offset) const {
    return header_field<T>(bytes.data(), offset, swap);
  }
};

bool read_header(const std::string& path, Header& h) {
  File f(path);
  if (!f.ok())
    return false;
  h.bytes.assign(kHeaderSize, 0);
  if (f.read(h.bytes.data(), kHeaderSize) != static_cast<size_t>(kHeaderSize))
    return false;
  int32_t size;
  std::memcpy(&size, h.bytes.data(), 4);
  if (size == kHeaderSize) {
    h.swap = false;
  } else {
    std::reverse(reinterpret_cast<char*>(&size), reinterpret_cast<char*>(&size) + 4);
    if (size != kHeaderSize)
      return false;
    h.swap = true;
  }
  return std::memcmp(h.bytes.data() + 4, "n+2", 3) == 0 ||
         std::memcmp(h.bytes.data() + 4, "ni2", 3) == 0;
}

// NIfTI's datatype codes (nifti1.h's DT_*, which NIfTI-2 keeps) of the scalar types ndconv reads.
struct DatatypeCode {
  int16_t code;
  ComponentType type;
};
constexpr DatatypeCode kDatatypeCodes[] = {
    {2, ComponentType::UInt8},    {256, ComponentType::Int8},    {4, ComponentType::Int16},
    {512, ComponentType::UInt16}, {8, ComponentType::Int32},     {768, ComponentType::UInt32},
    {1024, ComponentType::Int64}, {1280, ComponentType::UInt64}, {16, ComponentType::Float32},
    {64, ComponentType::Float64}};

bool component_of(int datatype, ComponentType& t) {
  for (const DatatypeCode& c : kDatatypeCodes) {
    if (c.code == datatype) {
      t = c.type;
      return true;
    }
  }
  return false;
}

// The 3x3 rotation and offset of the qform (nifti_quatern_to_mat44 without the spacing).
void qform_geometry(const Header& h, double R[3][3], double offset[3]) {
  double b = h.get<double>(352), c = h.get<double>(360), d = h.get<double>(368);
  double a = 1.0 - (b * b + c * c + d * d);
  if (a < 1e-7) {
    a = 1.0 / std::sqrt(b * b + c * c + d * d);
    b *= a;
    c *= a;
    d *= a;
    a = 0.0;
  } else {
    a = std::sqrt(a);
  }
  const double qfac = h.get<double>(104) < 0 ? -1.0 : 1.0;
  const double m[3][3] = {
      {a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
      {2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)},
      {2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b}};
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col)
      R[r][col] = m[r][col] * (col == 2 ? qfac : 1.0);
  offset[0] = h.get<double>(376);
  offset[1] = h.get<double>(384);
  offset[2] = h.get<double>(392);
}

}  // namespace

bool is_nifti2(const std::string& path) {
  Header h;
  return read_header(path, h);
}

Image read_nifti2(const std::string& path, bool pixels) {
  Header h;
  if (!read_header(path, h))
    throw IoError(path + ": not a NIfTI-2 file");
  Image image;
  ImageInfo& info = image.info;
  info.path = path;
  info.format = "NIfTI-2 (ndconv)";
  info.pixel_kind = "scalar";
  const int16_t datatype = h.get<int16_t>(12);
  if (datatype == 32 || datatype == 1792 || datatype == 2048)
    throw IoError(path + ": has complex pixels, which ndconv does not filter");
  ComponentType stored;
  if (!component_of(datatype, stored))
    throw IoError(path + ": unsupported NIfTI-2 datatype " + std::to_string(datatype));
  int64_t dim[8];
  for (int i = 0; i < 8; ++i)
    dim[i] = h.get<int64_t>(16 + 8 * i);
  if (dim[0] < 1 || dim[0] > 7)
    throw IoError(path + ": corrupt NIfTI-2 header (dim[0] = " + std::to_string(dim[0]) + ")");
  // Extents and counts are ints further on (and in every tool that reads NIfTI-2 as NIfTI-1 would):
  // one that does not fit in 32 bits is refused, not wrapped.
  for (int i = 1; i <= dim[0]; ++i) {
    if (dim[i] < 1 || dim[i] > INT32_MAX)
      throw IoError(path + ": corrupt NIfTI-2 header (dim[" + std::to_string(i) +
                    "] = " + std::to_string(dim[i]) + " is not an extent from 1 to 2147483647)");
  }
  for (int i = 0; i <= dim[0]; ++i) {
    if (!sane_geometry(h.get<double>(104 + 8 * i)))
      throw IoError(path + ": corrupt NIfTI-2 header (pixdim[" + std::to_string(i) +
                    "] is not a finite number within +-1e15)");
  }
  const double vox_offset_field = static_cast<double>(h.get<int64_t>(168));
  if (vox_offset_field < kHeaderSize)
    throw IoError(path +
                  ": corrupt NIfTI-2 header (vox_offset = " + std::to_string(h.get<int64_t>(168)) +
                  " lies inside the header; the pixels start at byte 540 or later)");
  const bool has_sform = h.get<int32_t>(348) > 0, has_qform = h.get<int32_t>(344) > 0;
  for (int i = 0; i < 12; ++i) {
    if (has_sform && !sane_geometry(h.get<double>(400 + 8 * i)))
      throw IoError(path +
                    ": corrupt NIfTI-2 header (the sform holds NaN, Inf or a value beyond "
                    "+-1e15)");
    if (has_qform && i < 6 && !sane_geometry(h.get<double>(352 + 8 * i)))
      throw IoError(path +
                    ": corrupt NIfTI-2 header (the qform holds NaN, Inf or a value beyond "
                    "+-1e15)");
  }
  int components = 1;
  int dims = static_cast<int>(dim[0]);
  if (dims >= 5) {
    components = static_cast<int>(dim[5]);
    for (int i = 6; i <= dims; ++i)
      if (dim[i] > 1)
        throw IoError(path + ": is a " + std::to_string(i) +
                      "D image; ndconv filters 2D, 3D "
                      "and 4D images");
    dims = 4;
    while (dims > 2 && dim[dims] == 1)
      --dims;
  }
  if (dims < 2)
    throw IoError(path + ": is a 1D image; ndconv filters 2D, 3D and 4D images");
  if (components < 1)
    throw IoError(path + ": corrupt NIfTI-2 header (dim[5] = " + std::to_string(dim[5]) + ")");
  if (components > 1)
    info.pixel_kind = "vector";
  Geometry& g = info.geometry;
  g.dims = dims;
  double voxels = 1;
  for (int a = 0; a < dims; ++a) {
    g.extent[a] = dim[a + 1];
    if (g.extent[a] < 1)
      throw IoError(path + ": the header gives an empty axis " + std::to_string(a));
    voxels *= static_cast<double>(g.extent[a]);
    const double p = std::abs(h.get<double>(104 + 8 * (a + 1)));
    // A zero time step stays 0 (and is reported so), as ITK's NIfTI-1 path does in ndconv.
    g.spacing[a] = p > 0 || a == 3 ? p : 1.0;
  }
  check_memory(path, voxels * components, component_bytes(stored));
  const int32_t units = h.get<int32_t>(500);
  // As ITK's NIfTI-1 reader: voxel sizes in metres or microns become millimetres (the origin is
  // left as stored there too).
  const int32_t space_unit = units & 0x07;
  const double to_mm = space_unit == 1 ? 1e3 : space_unit == 3 ? 1e-3 : 1.0;
  for (int a = 0; a < std::min(dims, 3); ++a)
    g.spacing[a] *= to_mm;
  if (dims == 4 && (units & 0x38) == 16)
    g.spacing[3] *= 1e-3;
  else if (dims == 4 && (units & 0x38) == 24)
    g.spacing[3] *= 1e-6;
  describe_nifti_units(units, info);

  double R[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, offset[3] = {0, 0, 0};
  bool oriented = true;
  if (h.get<int32_t>(348) > 0) {  // sform
    for (int r = 0; r < 3; ++r) {
      for (int col = 0; col < 3; ++col)
        R[r][col] = h.get<double>(400 + 32 * r + 8 * col);
      offset[r] = h.get<double>(400 + 32 * r + 24);
    }
    for (int col = 0; col < 3; ++col) {
      const double n =
          std::sqrt(R[0][col] * R[0][col] + R[1][col] * R[1][col] + R[2][col] * R[2][col]);
      for (int r = 0; r < 3; ++r)
        R[r][col] = n > 0 ? R[r][col] / n : (r == col ? 1.0 : 0.0);
    }
  } else if (h.get<int32_t>(344) > 0) {
    qform_geometry(h, R, offset);
  } else {
    oriented = false;  // no orientation: ITK gives the identity, unflipped
  }
  // RAS (NIfTI) to LPS (ITK): negate the x and y rows.
  const int spatial = std::min(dims, 3);
  for (int r = 0; r < spatial; ++r) {
    const double flip = (r < 2 && oriented) ? -1.0 : 1.0;
    g.origin[r] = flip * offset[r] + 0.0;
    for (int col = 0; col < spatial; ++col)
      g.direction[r * kMaxDims + col] = flip * R[r][col] + 0.0;
  }

  const double slope = h.get<double>(176), inter = h.get<double>(184);
  const bool rescale =
      slope != 0 && std::isfinite(slope) && std::isfinite(inter) && (slope != 1.0 || inter != 0.0);
  info.component_type = rescale ? ComponentType::Float32 : stored;
  info.components = components;
  if (!pixels)
    return image;

  const int64_t nvox = g.voxel_count();
  const int bytes = component_bytes(stored);
  std::vector<char> raw(static_cast<size_t>(nvox * components * bytes));
  const int64_t vox_offset = static_cast<int64_t>(h.get<int64_t>(168));
  File f(path);
  if (!f.ok() || vox_offset < kHeaderSize || !f.skip(vox_offset) ||
      f.read(raw.data(), raw.size()) != raw.size()) {
    throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
  }
  if (h.swap && bytes > 1) {
    for (size_t i = 0; i < raw.size(); i += bytes)
      std::reverse(raw.begin() + i, raw.begin() + i + bytes);
  }
  // NIfTI stores the components of a voxel along dim[5], after all voxels: one plane each.
  image.planes.resize(components);
  for (int c = 0; c < components; ++c) {
    std::vector<std::vector<float>> one;
    native_to_planes(raw.data() + static_cast<size_t>(c) * nvox * bytes, stored, 1, nvox, one);
    image.planes[c] = std::move(one[0]);
    if (rescale)
      for (float& v : image.planes[c])
        v = static_cast<float>(v * slope + inter);
  }
  return image;
}

}  // namespace ndconv::io
