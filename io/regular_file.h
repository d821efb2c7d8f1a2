// The regular-file rule for every path ndconv reads or replaces: image inputs, the files their
// headers name, list files (--list, DICOM @lists), kernel files and outputs given with --force.
// A FIFO with no writer, /dev/zero, a socket or a folder would block ndconv, feed it endless
// bytes or be replaced by a regular file; such paths are refused without reading them, by
// opening with O_NONBLOCK and checking the descriptor itself (no window between the check and
// the read). ITK-free.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace ndconv::io {

/// What a file of mode `mode` that is not a regular file is, in words: "a folder", "a FIFO (named
/// pipe)", "a device", "a socket", "not a regular file".
std::string special_file_kind(mode_t mode);

/// Throws IoError "`path`: is <kind>; ndconv reads `what` only from regular files" when `path`
/// (symbolic links followed) is not a regular file, or "`path`: cannot read: <reason>" when it
/// cannot be examined. Opens nothing.
void check_regular_file(const std::string& path, const std::string& what);

/// Opens `path` read-only, close-on-exec, when it is a regular file (checked on the opened
/// descriptor; a FIFO is opened without blocking and refused). Returns the descriptor, which the
/// caller closes. Throws IoError as check_regular_file.
int open_regular_file(const std::string& path, const std::string& what);

/// The whole content of the regular file `path` (open_regular_file), refused with IoError when
/// it is longer than `max_bytes`: for list files and other small text files.
std::string read_regular_file(const std::string& path, const std::string& what, size_t max_bytes);

/// Throws RequestError when `path` exists and is neither a regular file nor a symbolic link: an
/// output must not replace a device, FIFO, socket or folder, even with --force.
void check_replaceable(const std::string& path);

}  // namespace ndconv::io
