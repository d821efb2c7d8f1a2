// What the translation units that talk to ITK's image IO share (itk_read.cpp, itk_write.cpp,
// decoder_sandbox.cpp): the formats registered once, ITK's component types against ndconv's, ITK's
// exception text on one line, the writer for a file name, and the silencing of ITK's chatter on
// stderr while it works. Internal to ndconv_io.
#pragma once

#include <limits>
#include <string>

#include "io/image.h"

#include "itkImageIOBase.h"

namespace ndconv::io {

using IOComponent = itk::IOComponentEnum;
using IOPixel = itk::IOPixelEnum;

/// Registers the ITK readers and writers of the formats ndconv documents (once; thread-safe).
void register_formats();
/// ITK's exception description on one line, without ITK's "ITK ERROR: Class(0x...)" prefix.
std::string one_line(const itk::ExceptionObject& e);
/// "NIfTI", "MetaImage", ... for an ImageIO class name.
std::string format_label(const std::string& io_name);
/// ndconv's component type of what `io` read; false when ndconv has none for it.
bool map_component(const itk::ImageIOBase& io, ComponentType& out);
/// ITK's component type for ndconv's.
IOComponent itk_component(ComponentType t);
/// The ITK writer for `path`'s extension; throws RequestError when there is none.
itk::ImageIOBase::Pointer writer_for(const std::string& path);

/// The smallest normal float: NIfTI geometry below it would be subnormal (header_check.h).
constexpr double kSmallestNormalFloat = std::numeric_limits<float>::min();

/// MetaIO reports its parse errors on std::cerr and niftilib some of its own on the C stderr,
/// whatever its debug level; ndconv reports them itself, on one line. Both are silenced while an
/// object of this class lives. Threads that read and write at once (a batch) share one
/// silencing: the first starts it, the last ends it, and print_stderr_line writes to the real
/// stderr meanwhile.
class QuietStderr {
 public:
  QuietStderr();
  ~QuietStderr();
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;
};

}  // namespace ndconv::io
