#include "perf/volume_files.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "core/enum_names.h"
#include "ndconv/errors.h"

#ifdef NDCONV_PERF_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ndconv::perf {

namespace {

std::size_t voxel_bytes(VoxelType t) {
  return t == VoxelType::UInt8 ? 1 : 4;
}

std::size_t data_bytes(const RawVolume& v) {
  return static_cast<std::size_t>(v.shape.count()) * voxel_bytes(v.type);
}

template <typename T>
void put(std::string& h, std::size_t offset, T value) {
  std::memcpy(&h[offset], &value, sizeof value);
}

void write_plain(const std::string& path, const std::string& head, const RawVolume& v) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(head.data(), static_cast<std::streamsize>(head.size()));
  f.write(static_cast<const char*>(v.data), static_cast<std::streamsize>(data_bytes(v)));
  f.close();
  if (!f)
    throw InvalidArgument(path + ": cannot write the bench's input file");
}

std::string metaimage_header(const RawVolume& v) {
  const int dims = v.shape.dims;
  std::string matrix, offset, spacing, size;
  for (int r = 0; r < dims; ++r) {
    for (int c = 0; c < dims; ++c)
      matrix += std::string(matrix.empty() ? "" : " ") + (r == c ? "1" : "0");
    offset += std::string(r ? " " : "") + "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.9g", r ? " " : "", v.spacing[r]);
    spacing += buf;
    size += (r ? " " : "") + std::to_string(v.shape.extent[r]);
  }
  return "ObjectType = Image\nNDims = " + std::to_string(dims) +
         "\nBinaryData = True\nBinaryDataByteOrderMSB = False\nCompressedData = False\n"
         "TransformMatrix = " +
         matrix + "\nOffset = " + offset + "\nElementSpacing = " + spacing + "\nDimSize = " + size +
         "\nElementType = " + (v.type == VoxelType::UInt8 ? "MET_UCHAR" : "MET_FLOAT") +
         "\nElementDataFile = LOCAL\n";
}

}  // namespace

const char* extension(FileFormat f) {
  static constexpr EnumName<FileFormat> kExtensions[] = {
      {FileFormat::Mha, ".mha"}, {FileFormat::Nii, ".nii"}, {FileFormat::NiiGz, ".nii.gz"}};
  static_assert(lists_every(kExtensions, kFileFormatCount), "a FileFormat without its extension");
  return name_of(f, kExtensions, "");
}

bool can_write(FileFormat f) {
#ifdef NDCONV_PERF_HAVE_ZLIB
  (void)f;
  return true;
#else
  return f != FileFormat::NiiGz;
#endif
}

std::string nifti1_header(const RawVolume& v) {
  std::string h(352, '\0');
  put<int32_t>(h, 0, 348);
  h[38] = 'r';
  put<int16_t>(h, 40, static_cast<int16_t>(v.shape.dims));
  for (int a = 0; a < v.shape.dims; ++a)
    put<int16_t>(h, 42 + 2 * a, static_cast<int16_t>(v.shape.extent[a]));
  const bool bytes = v.type == VoxelType::UInt8;
  put<int16_t>(h, 70, bytes ? 2 : 16);  // NIFTI_TYPE_UINT8 / NIFTI_TYPE_FLOAT32
  put<int16_t>(h, 72, bytes ? 8 : 32);
  put<float>(h, 76, 1.0f);  // qfac
  for (int a = 0; a < v.shape.dims; ++a)
    put<float>(h, 80 + 4 * a, static_cast<float>(v.spacing[a]));
  put<float>(h, 108, 352.0f);  // vox_offset
  put<float>(h, 112, 1.0f);    // scl_slope
  h[123] = 2 | 8;              // xyzt_units: mm and s
  put<int16_t>(h, 252, 1);     // qform_code: scanner; quaternion 0 = identity
  put<int16_t>(h, 254, 1);     // sform_code, the same transform
  for (int r = 0; r < 3; ++r)
    put<float>(h, 280 + 16 * r + 4 * r, static_cast<float>(v.spacing[r]));
  std::memcpy(&h[344], "n+1", 4);
  return h;
}

void write_volume(const std::string& path, FileFormat f, const RawVolume& v) {
  if (f == FileFormat::Mha) {
    write_plain(path, metaimage_header(v), v);
    return;
  }
  const std::string head = nifti1_header(v);
  if (f == FileFormat::Nii) {
    write_plain(path, head, v);
    return;
  }
#ifdef NDCONV_PERF_HAVE_ZLIB
  gzFile gz = gzopen(path.c_str(), "wb6");
  bool ok = gz != nullptr;
  ok = ok && gzwrite(gz, head.data(), static_cast<unsigned>(head.size())) > 0;
  const char* p = static_cast<const char*>(v.data);
  std::size_t left = data_bytes(v);
  while (ok && left > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(left, 1u << 26));
    ok = gzwrite(gz, p, chunk) == static_cast<int>(chunk);
    p += chunk;
    left -= chunk;
  }
  if (gz && gzclose(gz) != Z_OK)
    ok = false;
  if (!ok)
    throw InvalidArgument(path + ": cannot write the bench's input file");
#else
  throw InvalidArgument(path + ": this build has no zlib to write .nii.gz");
#endif
}

int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

}  // namespace ndconv::perf
