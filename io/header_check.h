// Checks made by ndconv itself before ITK, niftilib or MetaIO see a file. Those libraries trust
// their headers: MetaIO passes a data-file pattern to sprintf and loops over its slice range,
// niftilib shifts the voxels by a vox_offset inside the header, vnl_svd aborts on a NaN in a
// transform, and a FIFO given as an input blocks in open(). So every field they would act on is
// parsed and checked here first, and a bad one is refused with a message that names the field.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "io/image.h"
#include "io/itk_header_file.h"

namespace ndconv::io {

/// What the header check learnt, for the reader and the memory check.
struct HeaderFacts {
  enum class Kind { Other, MetaImage, Nifti1 } kind = Kind::Other;
  /// Bytes of the files holding the pixels (the data files of a .mhd, LIST or pattern; the
  /// .img of a NIfTI pair; the file itself otherwise); -1 when unknown.
  double data_bytes = -1;
  /// The pixels are stored compressed (gzip or zlib), so data_bytes may be far below their size.
  bool compressed = true;
  /// A 4D NIfTI whose time step (pixdim[4]) is 0: ITK reports 1 instead.
  bool zero_time_step = false;
  /// NIfTI-1: the xyzt_units byte; -1 for other formats.
  int xyzt_units = -1;
  /// MetaImage with its pixels in one file (ElementDataFile = LOCAL without HeaderSize, or one
  /// data file with HeaderSize 0 or more), binary and little-endian: where they start (else -1)
  /// and in which file (empty: the header's own), for ndconv's own reader (ImageInfo).
  double local_data_offset = -1;
  std::string pixel_file;
  /// MetaImage: the CompressedDataSize field (-1 when absent), within the data file's bytes.
  double compressed_size = -1;
  /// MetaImage: the header ITK reads in place of the file's own (itk_header_file.h).
  RewrittenHeader itk_header;
};

/// The field of type T at `offset` of a binary header, byte-swapped when `swap` (a header written
/// on a machine of the other byte order).
template <typename T>
T header_field(const void* bytes, size_t offset, bool swap) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, static_cast<const unsigned char*>(bytes) + offset, sizeof(T));
  if (swap)
    std::reverse(b, b + sizeof(T));
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

/// Geometry values (voxel sizes, positions, matrix entries in mm) beyond this are refused like NaN
/// and Inf: niftilib computes in float, and a value near FLT_MAX overflows to Inf there, on which
/// its iterative polar decomposition never converges (an sform offset of 3.4e38 hung ndconv).
constexpr double kGeometryLimit = 1e15;
/// Finite and within +-kGeometryLimit.
bool sane_geometry(double v);
/// A float header field (NIfTI-1): sane_geometry and not subnormal. ITK's orientation from a NIfTI
/// sform runs a float SVD (vnl_svd<float>), which never returned on a matrix holding a subnormal
/// entry beside one of 2e9 or more: such a header hung ndconv.
bool sane_float_geometry(float v);

/// Fills info.spatial_unit_unknown and info.time_unit_unknown from NIfTI's xyzt_units (NIfTI-1
/// and NIfTI-2 alike), after the geometry: the time unit matters only for a 4D series with a time
/// step.
void describe_nifti_units(int xyzt_units, ImageInfo& info);

/// Refuses what is not a regular, readable, non-empty file (folders, FIFOs, devices, sockets)
/// without opening it.
void check_input_file(const std::string& path);

/// Parses and checks the header of a MetaImage (.mha/.mhd) or NIfTI-1 (.nii, .nii.gz, .hdr/.img)
/// file, including the data-file policy (io/data_file_policy.h) for every file the header names.
/// Other formats pass with Kind::Other. Throws IoError naming the file and the bad field.
HeaderFacts check_header(const std::string& path);

}  // namespace ndconv::io
