// Which files an image header may make ndconv read. Formats whose header names other files
// (a MetaImage .mhd's ElementDataFile, its LIST entries or slice-name pattern; an Analyze-style
// NIfTI pair's .img) could otherwise make ndconv read any file the user can read and copy its
// bytes into an output: a volume from an untrusted source would be a way to exfiltrate
// /etc/passwd through a pipeline's results. So a data file must be a regular file inside the
// header's own folder, after `..` and symbolic links are resolved, unless the user allowed
// external data (`--allow-external-data`).
#pragma once

#include <string>

namespace ndconv::io {

/// Process-wide switch, set once by the command line before any file is read (default: off).
void set_external_data_allowed(bool allowed);
bool external_data_allowed();

/// Checks the data file `named` (as the header `header` spells it; relative names are taken
/// from the header's folder) and returns its path as ITK will open it. Throws IoError naming the
/// header, the data file and the rule broken: missing, not a regular file, or (unless external
/// data is allowed) outside the header's folder.
std::string check_data_file(const std::string& header, const std::string& named);

}  // namespace ndconv::io
