// ITK 5.2's PNG and JPEG readers crash on some damaged files (libpng aborts in
// PNGImageIO::ReadImageInformation, which sets no error handler; JPEGImageIO::CanReadFile calls
// jpeg_destroy on a half-built decoder), and a TIFF whose IFD chain points back on itself loops.
// Files that start like PNG, JPEG, TIFF or BMP are therefore decoded once in a forked child,
// bounded in time, before this process decodes them. Internal to ndconv_io.
#pragma once

#include <string>

namespace ndconv::io {

/// For a file that starts like PNG, JPEG, TIFF or BMP: decodes it in a forked child (which ends
/// with _exit, never returning into the caller's code) and throws IoError naming `path` when the
/// child dies or outlives its time bound (5 s plus 2 s per MiB). Other files pass at once.
void check_decoder_survives(const std::string& path);

}  // namespace ndconv::io
