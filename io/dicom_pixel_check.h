// A check of a DICOM file's pixel data against its header, made before ITK's GDCM reader reads
// it: GDCM reads a Pixel Data element cut short by the end of the file as far as it goes and
// ITK pads the rest with zeros, and it allocates and reads whatever Rows x Columns x frames a
// header declares. Native (uncompressed) pixel data must hold exactly what the header's image
// attributes describe and lie inside the file.
#pragma once

#include <string>

namespace ndconv::io {

/// Throws IoError naming `path` when its native Pixel Data element is declared longer than the
/// file holds after it, or shorter than Rows x Columns x Number of Frames x Samples per Pixel x
/// Bits Allocated / 8. Encapsulated (compressed) pixel data and files without Pixel Data pass
/// (their decoders report damage). Call only on a file that passed check_dicom_survives.
void check_dicom_pixel_data(const std::string& path);

}  // namespace ndconv::io
