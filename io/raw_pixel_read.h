// The pixels ndconv reads itself, without ITK's readers: single-file NIfTI-1 (.nii copied from
// the page cache, .nii.gz inflated on all cores where it has several members), a MetaImage whose
// binary little-endian pixels lie in one file (copied, or inflated by libdeflate), and the length
// checks of the files ITK's readers would read short without saying so (NIfTI, JPEG, BMP).
// Internal to ndconv_io; ITK-free (niftilib only).
#pragma once

#include <cstddef>
#include <string>

#include "io/image.h"

namespace ndconv::io {

/// Where a single-file NIfTI-1 image (.nii, .nii.gz) keeps its pixels and how ITK maps them to
/// float, from niftilib's header.
struct NiftiLayout {
  size_t first = 0;  ///< byte offset of the pixels in the (inflated) file
  size_t bytes = 0;  ///< bytes of the pixels
  int value_bytes = 1;
  bool swap = false;  ///< stored in the other byte order
  int datatype = 0;
  double scale = 1.0, offset = 0.0;  ///< applied only where ITK applies them (MustRescale)
};

/// False for what ndconv leaves to ITK: a .hdr/.img pair, a header that disagrees with what ITK
/// read (`info`), an unusual data offset.
bool nifti_layout(const std::string& path, const ImageInfo& info, NiftiLayout& layout);

/// The file's bytes [0, layout.first + layout.bytes) into `out` (the pixels at out + first), in
/// the host's byte order. A damaged member of ndconv's is an IoError; false when the file is not
/// exactly that long or does not inflate (a truncated file included): ITK then reads it and names
/// the problem.
bool read_nifti_bytes(const std::string& path, const NiftiLayout& layout, unsigned char* out);

/// The pixels of a MetaImage that ndconv reads itself (ImageInfo::metaimage_pixels): false for
/// any other layout, or uncompressed data shorter than `bytes` (ITK then reads the file and
/// reports what is wrong); compressed data that does not inflate to exactly `bytes` within its
/// declared compressed size (truncated, damaged, failing its checksum) is an IoError.
bool read_metaimage_bytes(const std::string& path, const ImageInfo& info, size_t bytes,
                          unsigned char* out);

/// NIfTI's reader copies through its own buffer and does not report a short file: the data file
/// must hold what the header needs (its size when uncompressed; gzip inflated and counted, each
/// member's CRC and length checked). Throws IoError naming `path`.
void check_nifti_length(const std::string& path);

/// ITK's JPEG reader decodes a truncated file with grey filling and its BMP reader does not check
/// the length: a JPEG must end with its end-of-image marker, an uncompressed BMP hold all its rows.
void check_2d_length(const std::string& path, const std::string& format);

}  // namespace ndconv::io
