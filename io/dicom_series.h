// A DICOM series read as one 3D image: the input is a folder holding one series, or `@LIST`, a
// text file naming the series' slice files (one per line, relative to the list's folder). The
// slices are found with ITK's GDCMSeriesFileNames (a folder), checked (regular files inside the
// folder or the list's folder, one series, same size, type and orientation, evenly spaced along
// their normal), sorted by position along that normal and stacked; each slice is read through
// read_file_image (itk_read.h, ITK's GDCMImageIO), the whole series first in the sandbox of
// dicom_sandbox.h. A single DICOM file (a slice or a multi-frame object) needs
// none of this: it is read like any other image file.
#pragma once

#include <string>
#include <vector>

#include "io/image.h"

namespace ndconv::io {

/// True when `input` names a series: an existing folder, or "@" followed by a list file's path.
bool is_dicom_series(const std::string& input);

/// The series' slice files, checked (see above) but not yet sorted. Throws IoError naming the
/// folder or list and the problem; a folder with several series is refused, naming each.
std::vector<std::string> dicom_series_files(const std::string& input);

/// The series' header: the slices' type, and the stacked geometry (origin of the first slice,
/// its orientation, the in-plane spacing and the distance between slices).
ImageInfo read_dicom_series_info(const std::string& input);

/// The series as one image (3D; a series of one file is that file's image).
Image read_dicom_series(const std::string& input);

}  // namespace ndconv::io
