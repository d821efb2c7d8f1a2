#include "io/raw_pixel_read.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/first_touch.h"
#include "io/output_file.h"
#include "io/parallel_deflate.h"

#include "nifti1_io.h"

namespace ndconv::io {

bool nifti_layout(const std::string& path, const ImageInfo& info, NiftiLayout& layout) {
  nifti_image* h = nifti_image_read(path.c_str(), 0);
  if (h == nullptr)
    return false;
  const bool single_file = h->iname != nullptr && path == h->iname && h->nifti_type == 1;
  const double voxels = static_cast<double>(info.geometry.voxel_count()) * info.components;
  // Extensions beyond 64 MiB (a hostile vox_offset) are left to ITK's reader, which streams them.
  const bool agrees = single_file && h->iname_offset >= 348 && h->iname_offset <= (1 << 26) &&
                      h->nbyper > 0 && static_cast<double>(h->nvox) == voxels &&
                      info.components == 1;
  if (agrees) {
    layout.first = static_cast<size_t>(h->iname_offset);
    layout.bytes = static_cast<size_t>(h->nvox) * static_cast<size_t>(h->nbyper);
    layout.value_bytes = h->nbyper;
    layout.swap = h->nbyper > 1 && h->byteorder != nifti_short_order();
    layout.datatype = h->datatype;
    // ITK's NiftiImageIO::MustRescale: a slope of 0, or of 1 with no intercept, is no rescale.
    const double eps = std::numeric_limits<double>::epsilon();
    const double slope = h->scl_slope, inter = h->scl_inter;
    if (std::abs(slope) > eps && (std::abs(slope - 1.0) > eps || std::abs(inter) > eps)) {
      layout.scale = slope;
      layout.offset = inter;
    }
  }
  nifti_image_free(h);
  return agrees;
}

bool read_nifti_bytes(const std::string& path, const NiftiLayout& layout, unsigned char* out) {
  const size_t total = layout.first + layout.bytes;
  const MappedFile file(path, path);
  const bool gzip = file.size() >= 2 && file.data()[0] == 0x1f && file.data()[1] == 0x8b;
  if (gzip) {
    const ExactInflate r = inflate_gzip_exactly(file.data(), file.size(), out, total, 0);
    if (r == ExactInflate::Damaged)
      throw IoError(path + ": a compressed block is damaged (CRC or length mismatch)");
    if (r != ExactInflate::Done)
      return false;
  } else {
    if (file.size() < total)
      return false;
    ndconv::detail::copy_on_all_cores(out + layout.first, file.data() + layout.first, layout.bytes,
                                      0);
  }
  if (layout.swap) {
    unsigned char* p = out + layout.first;
    const size_t n = static_cast<size_t>(layout.value_bytes);
    for (size_t at = 0; at + n <= layout.bytes; at += n)
      std::reverse(p + at, p + at + n);
  }
  return true;
}

bool read_metaimage_bytes(const std::string& path, const ImageInfo& info, size_t bytes,
                          unsigned char* out) {
  if constexpr (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
    return false;
  const ImageInfo::LocalPixels& pixels = info.metaimage_pixels;
  if (pixels.offset < 0)
    return false;
  const MappedFile file(pixels.file.empty() ? path : pixels.file, path);
  const auto offset = static_cast<size_t>(pixels.offset);
  if (file.size() < offset)
    return false;
  const unsigned char* data = file.data() + offset;
  size_t available = file.size() - offset;
  if (!pixels.compressed) {
    if (available < bytes)
      return false;
    ndconv::detail::copy_on_all_cores(out, data, bytes, 0);
    return true;
  }
  if (pixels.compressed_size >= 0)
    available = std::min(available, static_cast<size_t>(pixels.compressed_size));
  // MetaIO inflates zlib and gzip streams alike.
  const bool gzip = available >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const bool whole =
      gzip ? inflate_gzip_exactly(data, available, out, bytes, 0) == ExactInflate::Done
           : inflate_zlib_exactly(data, available, out, bytes);
  if (!whole)
    throw IoError(path +
                  ": the compressed pixels are damaged or end early (truncated or corrupt "
                  "file)");
  return true;
}

void check_nifti_length(const std::string& path) {
  nifti_image* header = nifti_image_read(path.c_str(), 0);
  if (header == nullptr)
    return;
  const double needed = static_cast<double>(header->iname_offset) +
                        static_cast<double>(header->nvox) * header->nbyper;
  const std::string data_file = header->iname ? header->iname : path;
  nifti_image_free(header);
  double have = 0;
  try {
    const MappedFile file(data_file, path);
    const bool gzip = file.size() >= 2 && file.data()[0] == 0x1f && file.data()[1] == 0x8b;
    have = gzip ? static_cast<double>(
                      gzip_length_up_to(file.data(), file.size(), static_cast<uint64_t>(needed)))
                : static_cast<double>(file.size());
  } catch (const IoError&) {
    throw IoError(path + ": cannot open the data file " + data_file);
  }
  if (have < needed) {
    throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
  }
}

// ITK's JPEG reader decodes a truncated file with grey filling (libjpeg only warns) and its BMP
// reader does not check the length: check that a JPEG ends with its end-of-image marker and that
// an uncompressed BMP holds all its rows.
void check_2d_length(const std::string& path, const std::string& format) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bool complete = true;
  if (format == "JPEGImageIO") {
    const size_t from = bytes.size() > 64 ? bytes.size() - 64 : 0;
    complete = bytes.find("\xFF\xD9", from) != std::string::npos;
  } else if (format == "BMPImageIO" && bytes.size() >= 34) {
    auto u32 = [&](size_t o) {
      uint32_t v = 0;
      for (int i = 3; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(bytes[o + i]);
      return v;
    };
    const uint32_t offset = u32(10), compression = u32(30);
    const int64_t width = static_cast<int32_t>(u32(18));
    const int64_t height = std::abs(static_cast<int64_t>(static_cast<int32_t>(u32(22))));
    const int bits =
        static_cast<unsigned char>(bytes[28]) | (static_cast<unsigned char>(bytes[29]) << 8);
    if (compression == 0 && width > 0) {
      const int64_t row = (width * bits + 31) / 32 * 4;
      complete = static_cast<int64_t>(bytes.size()) >= static_cast<int64_t>(offset) + row * height;
    }
  }
  if (!complete)
    throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
}

}  // namespace ndconv::io
