// The readers of image.h: a DICOM series (a folder or @list) goes to dicom_series.h, one file to
// itk_read.h.
#include "io/dicom_series.h"
#include "io/image.h"
#include "io/itk_read.h"

namespace ndconv::io {

ImageInfo read_info(const std::string& path) {
  return is_dicom_series(path) ? read_dicom_series_info(path) : read_file_info(path);
}

Image read_image(const std::string& path) {
  return is_dicom_series(path) ? read_dicom_series(path) : read_file_image(path);
}

bool read_stored_image(const std::string& path, StoredImage& out, HostMemory memory) {
  return !is_dicom_series(path) && read_stored_file(path, out, memory);
}

}  // namespace ndconv::io
