// NIfTI-2 (540-byte header, 64-bit dimensions) reading. ITK 5.2's NiftiImageIO reads NIfTI-1 only,
// so ndconv reads NIfTI-2 itself, with ITK's conventions for NIfTI-1 (spacing from pixdim,
// geometry from the sform when sform_code > 0, else the qform, converted from RAS to ITK's LPS;
// scl_slope/scl_inter applied as float32), so that the same image in either version reads the
// same. Plain or gzip-compressed, either byte order.
#pragma once

#include <string>

#include "io/image.h"

namespace ndconv::io {

/// True when `path` starts with a NIfTI-2 header (either byte order; .gz allowed).
bool is_nifti2(const std::string& path);

/// Reads a NIfTI-2 file; with `pixels` false only the header (planes left empty).
/// Throws IoError naming the file.
Image read_nifti2(const std::string& path, bool pixels);

}  // namespace ndconv::io
