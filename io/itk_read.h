// Reading one image file (not a DICOM series): NIfTI-2 by ndconv's own reader; every other
// format through ITK's ImageIOBase directly, with no itk::Image instantiations. The header is
// checked by ndconv first (header_check.h, nrrd_header.h; NRRD and MetaImage headers are handed to
// ITK rewritten, itk_header_file.h), the dimension, component type and component count are taken
// from ITK's reader at run time, and the raw pixels are moved in one buffer that pixel_convert.cpp
// turns into float32 planes, or read by ndconv itself where it can (raw_pixel_read.h). Internal to
// ndconv_io: read_info, read_image and read_stored_image (image.h) dispatch here and to the
// DICOM series reader (dicom_series.h), which reads its slices here.
#pragma once

#include <string>

#include "io/image.h"

namespace ndconv::io {

/// read_info, read_image and read_stored_image (image.h) for one file.
ImageInfo read_file_info(const std::string& path);
Image read_file_image(const std::string& path);
bool read_stored_file(const std::string& path, StoredImage& out, HostMemory memory);

}  // namespace ndconv::io
