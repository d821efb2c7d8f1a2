// What the NRRD and DICOM tests share: a small oriented random volume, and files written by ITK's
// own writers (not through ndconv_io), so that ndconv's readers are checked against files made
// by the library that defines those formats in ITK: NRRD by itk::NrrdImageIO (attached raw or
// gzip .nrrd, detached .nhdr + data file) and DICOM slices by itk::GDCMImageIO (one single-frame
// MR file per slice, all in one series).
#pragma once

#include <string>
#include <vector>

#include "test_files.h"

namespace ndconv::test {

/// 9 x 7 (x 6 (x 4)) voxels of random `type` values, spacing 0.5, 1, 2 mm (0.25 s), origin
/// (-3.5, 12, 7.25), in 3D and 4D rotated by 0.3 rad about y.
RawImage oriented_volume(int dims, io::ComponentType type, uint64_t seed);

/// Writes `image` with ITK's NRRD writer; the extension picks attached (.nrrd) or detached
/// (.nhdr beside its data file), `compress` gzip or raw.
void itk_write_nrrd(const std::string& path, const RawImage& image, bool compress);

/// Writes a 3D `image` (one component) as a DICOM series with ITK's GDCM writer: slice z goes to
/// `folder`/`prefix`N.dcm where N counts down (names sort against the slice order), with the
/// image's spacing, direction and the slice's origin. One call is one series. Returns the paths
/// in slice order.
std::vector<std::string> itk_write_dicom_series(const std::string& folder, const RawImage& image,
                                                const std::string& prefix);

}  // namespace ndconv::test
