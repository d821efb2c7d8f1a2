// What the NRRD and DICOM tests share: a geometry check, and files written by ITK's own writers
// (not through ndconv_io), so that ndconv's readers are checked against files made by the library
// that defines those formats in ITK: NRRD by itk::NrrdImageIO (attached raw or gzip .nrrd, detached
// .nhdr + data file) and DICOM slices by itk::GDCMImageIO (one single-frame MR file per slice, all
// in one series).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "test_files.h"

namespace ndconv::test {

/// Expects `got` to hold the extents, spacing, origin and direction of `want`, each number
/// within `tolerance`.
void expect_geometry(const io::Geometry& got, const RawImage& want, double tolerance);

/// Writes `image` with ITK's NRRD writer; the extension picks attached (.nrrd) or detached
/// (.nhdr beside its data file), `compress` gzip or raw.
void itk_write_nrrd(const std::string& path, const RawImage& image, bool compress);

/// Writes a 3D `image` (one component) as a DICOM series with ITK's GDCM writer: slice z goes to
/// `folder`/`prefix`N.dcm where N counts down (names sort against the slice order), with the
/// image's spacing, direction and the slice's origin. One call is one series. Returns the paths
/// in slice order.
std::vector<std::string> itk_write_dicom_series(const std::string& folder, const RawImage& image,
                                                const std::string& prefix);

/// Writes a 3D scalar `image` as one multi-frame DICOM file (a frame per slice) with ITK's GDCM
/// writer, with the given modality (e.g. "US") and SOP class UID (e.g. Enhanced US Volume,
/// 1.2.840.10008.5.1.4.1.1.6.2, or Ultrasound Multi-frame Image, 1.2.840.10008.5.1.4.1.1.3.1).
void itk_write_dicom_volume(const std::string& path, const RawImage& image,
                            const std::string& modality, const std::string& sop_class);

/// One DICOM data element for rewrite_dicom: a decimal string ("DS", `text`), an unsigned short
/// ("US") or a double ("FD", `number`), or a sequence ("SQ") of `items`, each a data set.
struct DicomElement {
  uint16_t group = 0, element = 0;
  std::string vr;
  std::string text;
  double number = 0;
  std::vector<std::vector<DicomElement>> items;
};

/// Rewrites the DICOM file at `path` (little endian, as itk_write_dicom_volume writes it) without
/// the top-level elements `remove` ({group, element} pairs) and with `add` (replacing any of the
/// same tag), through GDCM's writer.
void rewrite_dicom(const std::string& path,
                   const std::vector<std::pair<uint16_t, uint16_t>>& remove,
                   const std::vector<DicomElement>& add);

/// The voxel values of the scalar MetaImage `path` as ITK's MetaImageIO (MetaIO) reads them,
/// header fields and compressed data included, as float32.
std::vector<float> itk_read_metaimage(const std::string& path);

/// Gives the first meta element of the DICOM file `path` an invalid VR, on which GDCM (Debian
/// builds it with assertions) aborts the process, and copies the result to `copy` when not empty.
void break_dicom_meta_header(const std::string& path, const std::string& copy = "");

}  // namespace ndconv::test
