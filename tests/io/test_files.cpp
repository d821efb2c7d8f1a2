#include "test_files.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace ndconv::test {

namespace fs = std::filesystem;

int64_t RawImage::voxels() const {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

std::vector<double> random_for_type(int64_t count, io::ComponentType type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  double lo = io::lowest_value(type), hi = io::highest_value(type);
  if (!io::is_integer(type)) {
    lo = -1e6;
    hi = 1e6;
  }
  // 64-bit types: stay where double (and the float32 the engine uses) is still meaningful.
  if (io::component_bytes(type) == 8 && io::is_integer(type)) {
    lo = std::max(lo, -1e15);
    hi = std::min(hi, 1e15);
  }
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(count);
  for (auto& x : v) {
    do {
      x = u(rng);
      if (io::is_integer(type))
        x = std::floor(x);
      if (type == io::ComponentType::Float32)
        x = static_cast<float>(x);
    } while (x == 0);
  }
  return v;
}

RawImage random_volume(Index extent, io::ComponentType type, uint64_t seed) {
  RawImage raw;
  raw.dims = extent[3] > 1 ? 4 : 3;
  raw.extent = extent;
  raw.spacing = {0.8, 1.0, 1.25, 0.5};
  raw.type = type;
  raw.values = random_for_type(raw.voxels(), type, seed);
  return raw;
}

RawImage oriented_volume(int dims, io::ComponentType type, uint64_t seed, int components) {
  RawImage im;
  im.dims = dims;
  im.extent = {9, 7, dims >= 3 ? 6 : 1, dims == 4 ? 3 : 1};
  im.spacing = {0.5, 1.0, 2.0, 0.25};
  im.origin = {-3.5, 12.0, 7.25, 0};
  if (dims >= 3) {
    const double c = std::cos(0.3), s = std::sin(0.3);
    im.direction = {c, 0, s, 0, 0, 1, 0, 0, -s, 0, c, 0, 0, 0, 0, 1};
  }
  im.type = type;
  im.components = components;
  im.values = random_for_type(im.voxels() * components, type, seed);
  return im;
}

namespace {

template <typename T>
void put(std::string& out, double v, bool big_endian) {
  T t = static_cast<T>(v);
  char b[sizeof(T)];
  std::memcpy(b, &t, sizeof(T));
  if (big_endian)
    std::reverse(b, b + sizeof(T));
  out.append(b, sizeof(T));
}

// What the writers put in files for each stored type: the MetaImage element type, the NIfTI
// datatype code and the value's bytes. Written out here, not taken from the readers under test.
struct TypeCodes {
  io::ComponentType type;
  const char* met_type;
  int nifti_code;
  void (*put)(std::string& out, double v, bool big_endian);
};
constexpr TypeCodes kTypeCodes[] = {
    {io::ComponentType::UInt8, "MET_UCHAR", 2, put<uint8_t>},
    {io::ComponentType::Int8, "MET_CHAR", 256, put<int8_t>},
    {io::ComponentType::UInt16, "MET_USHORT", 512, put<uint16_t>},
    {io::ComponentType::Int16, "MET_SHORT", 4, put<int16_t>},
    {io::ComponentType::UInt32, "MET_UINT", 768, put<uint32_t>},
    {io::ComponentType::Int32, "MET_INT", 8, put<int32_t>},
    {io::ComponentType::UInt64, "MET_ULONG_LONG", 1280, put<uint64_t>},
    {io::ComponentType::Int64, "MET_LONG_LONG", 1024, put<int64_t>},
    {io::ComponentType::Float32, "MET_FLOAT", 16, put<float>},
    {io::ComponentType::Float64, "MET_DOUBLE", 64, put<double>},
};

const TypeCodes& codes_of(io::ComponentType t) {
  for (const TypeCodes& c : kTypeCodes) {
    if (c.type == t)
      return c;
  }
  throw std::runtime_error("test_files: a component type without its codes");
}

// Components of a voxel along dim[5], after all voxels (NIfTI's layout).
RawImage planar_copy(const RawImage& im) {
  RawImage planar = im;
  if (im.components > 1) {
    const int64_t n = im.voxels();
    for (int c = 0; c < im.components; ++c)
      for (int64_t v = 0; v < n; ++v)
        planar.values[c * n + v] = im.values[v * im.components + c];
  }
  return planar;
}

std::string pack(const RawImage& im, bool big_endian) {
  std::string out;
  const auto put_value = codes_of(im.type).put;
  for (double v : im.values)
    put_value(out, v, big_endian);
  return out;
}

const char* met_type(io::ComponentType t) {
  return codes_of(t).met_type;
}

int nifti_code(io::ComponentType t) {
  return codes_of(t).nifti_code;
}

template <typename T>
void poke(std::string& h, size_t offset, T v, bool big_endian) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  if (big_endian)
    std::reverse(b, b + sizeof(T));
  std::memcpy(&h[offset], b, sizeof(T));
}

}  // namespace

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f)
    throw std::runtime_error("cannot write " + path);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void patch_bytes(const std::string& path, size_t offset, const void* value, size_t size) {
  std::string bytes = read_bytes(path);
  if (offset + size > bytes.size())
    throw std::runtime_error(path + ": too short to patch at byte " + std::to_string(offset));
  std::memcpy(&bytes[offset], value, size);
  write_bytes(path, bytes);
}

void write_meta(const std::string& path, const RawImage& im, int ndims_override) {
  std::ostringstream h;
  h.precision(17);
  const int n = ndims_override ? ndims_override : im.dims;
  h << "ObjectType = Image\nNDims = " << n << "\nBinaryData = True\nBinaryDataByteOrderMSB = "
    << "False\nCompressedData = False\n";
  if (!ndims_override) {
    h << "TransformMatrix =";
    // MetaIO lists the direction matrix column by column (each axis's vector in turn).
    for (int a = 0; a < n; ++a)
      for (int r = 0; r < n; ++r)
        h << " " << im.direction[r * kMaxDims + a];
    h << "\nOffset =";
    for (int a = 0; a < n; ++a)
      h << " " << im.origin[a];
    h << "\nElementSpacing =";
    for (int a = 0; a < n; ++a)
      h << " " << im.spacing[a];
    h << "\n";
  }
  h << "DimSize =";
  for (int a = 0; a < n; ++a)
    h << " " << (a < im.dims ? im.extent[a] : 1);
  h << "\n";
  if (im.components > 1)
    h << "ElementNumberOfChannels = " << im.components << "\n";
  h << "ElementType = " << met_type(im.type) << "\nElementDataFile = LOCAL\n";
  write_bytes(path, h.str() + pack(im, false));
}

void write_nifti(const std::string& path, const RawImage& im, bool big_endian, double scl_slope,
                 double scl_inter, int datatype_override) {
  std::string h(352, '\0');
  poke<int32_t>(h, 0, 348, big_endian);
  poke<int16_t>(h, 40, static_cast<int16_t>(im.components > 1 ? 5 : im.dims), big_endian);
  for (int a = 0; a < 7; ++a) {
    int64_t d = a < im.dims ? im.extent[a] : 1;
    if (a == 4 && im.components > 1)
      d = im.components;
    poke<int16_t>(h, 42 + 2 * a, static_cast<int16_t>(d), big_endian);
  }
  if (im.components > 1)
    poke<int16_t>(h, 68, 1007, big_endian);  // NIFTI_INTENT_VECTOR
  const int code = datatype_override ? datatype_override : nifti_code(im.type);
  poke<int16_t>(h, 70, static_cast<int16_t>(code), big_endian);
  const int bits = datatype_override == 32 ? 64 : 8 * io::component_bytes(im.type);
  poke<int16_t>(h, 72, static_cast<int16_t>(bits), big_endian);
  poke<float>(h, 76, 1.0f, big_endian);
  for (int a = 0; a < 7; ++a)
    poke<float>(h, 80 + 4 * a, static_cast<float>(a < im.dims ? im.spacing[a] : 1.0), big_endian);
  poke<float>(h, 108, 352.0f, big_endian);
  poke<float>(h, 112, static_cast<float>(scl_slope), big_endian);
  poke<float>(h, 116, static_cast<float>(scl_inter), big_endian);
  h[123] = 2 | 8;  // mm, s
  std::memcpy(&h[344], "n+1\0", 4);
  write_bytes(path, h + pack(planar_copy(im), big_endian));
}

void write_nifti_form(const std::string& path, const RawImage& im, const NiftiForm& form) {
  write_nifti(path, im);
  std::string bytes = read_bytes(path);
  poke<float>(bytes, 76, static_cast<float>(form.qfac), false);
  poke<int16_t>(bytes, 252, static_cast<int16_t>(form.qform_code), false);
  poke<int16_t>(bytes, 254, static_cast<int16_t>(form.sform_code), false);
  for (int i = 0; i < 3; ++i) {
    poke<float>(bytes, 256 + 4 * i, static_cast<float>(form.quatern[i]), false);
    poke<float>(bytes, 268 + 4 * i, static_cast<float>(form.qoffset[i]), false);
  }
  for (int i = 0; i < 12; ++i)
    poke<float>(bytes, 280 + 4 * i, static_cast<float>(form.srow[i]), false);
  write_bytes(path, bytes);
}

void write_nifti2(const std::string& path, const RawImage& im, bool big_endian, double scl_slope,
                  double scl_inter, const NiftiForm& form) {
  std::string h(544, '\0');
  poke<int32_t>(h, 0, 540, big_endian);
  std::memcpy(&h[4], "n+2\0\r\n\032\n", 8);
  poke<int16_t>(h, 12, static_cast<int16_t>(nifti_code(im.type)), big_endian);
  poke<int16_t>(h, 14, static_cast<int16_t>(8 * io::component_bytes(im.type)), big_endian);
  poke<int64_t>(h, 16, im.components > 1 ? 5 : im.dims, big_endian);
  for (int a = 0; a < 7; ++a) {
    int64_t d = a < im.dims ? im.extent[a] : 1;
    if (a == 4 && im.components > 1)
      d = im.components;
    poke<int64_t>(h, 24 + 8 * a, d, big_endian);
  }
  poke<double>(h, 104, form.qfac, big_endian);
  for (int a = 0; a < 7; ++a)
    poke<double>(h, 112 + 8 * a, a < im.dims ? im.spacing[a] : 1.0, big_endian);
  poke<int64_t>(h, 168, 544, big_endian);
  poke<double>(h, 176, scl_slope, big_endian);
  poke<double>(h, 184, scl_inter, big_endian);
  poke<int32_t>(h, 344, form.qform_code, big_endian);
  poke<int32_t>(h, 348, form.sform_code, big_endian);
  for (int i = 0; i < 3; ++i) {
    poke<double>(h, 352 + 8 * i, form.quatern[i], big_endian);
    poke<double>(h, 376 + 8 * i, form.qoffset[i], big_endian);
  }
  for (int i = 0; i < 12; ++i)
    poke<double>(h, 400 + 8 * i, form.srow[i], big_endian);
  poke<int32_t>(h, 500, 2 | 8, big_endian);
  write_bytes(path, h + pack(planar_copy(im), big_endian));
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/ndconv_test_XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(path_))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace ndconv::test
