#include "io/itk_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>

#include "io/header_text.h"

#include "itkBMPImageIOFactory.h"
#include "itkImageIOFactory.h"
#include "itkJPEGImageIOFactory.h"
#include "itkMetaImageIOFactory.h"
#include "itkNiftiImageIOFactory.h"
#include "itkNrrdImageIOFactory.h"
#include "itkPNGImageIOFactory.h"
#include "itkTIFFImageIOFactory.h"
#include "itkVersion.h"
#include "nifti1_io.h"

namespace ndconv::io {

void register_formats() {
  static std::once_flag once;
  std::call_once(once, [] {
    itk::NiftiImageIOFactory::RegisterOneFactory();
    itk::MetaImageIOFactory::RegisterOneFactory();
    itk::PNGImageIOFactory::RegisterOneFactory();
    itk::JPEGImageIOFactory::RegisterOneFactory();
    itk::TIFFImageIOFactory::RegisterOneFactory();
    itk::BMPImageIOFactory::RegisterOneFactory();
    itk::NrrdImageIOFactory::RegisterOneFactory();
    // Our own one-line errors replace ITK's and niftilib's multi-line chatter on stderr.
    itk::Object::GlobalWarningDisplayOff();
    nifti_set_debug_level(0);
  });
}

std::string one_line(const itk::ExceptionObject& e) {
  std::string s = e.GetDescription();
  std::replace(s.begin(), s.end(), '\n', ' ');
  // "ITK ERROR: NiftiImageIO(0x55d0c...): " says nothing to a user
  if (s.rfind("ITK ERROR: ", 0) == 0) {
    const auto cut = s.find("): ");
    if (cut != std::string::npos)
      s = s.substr(cut + 3);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '.'))
    s.pop_back();
  return s;
}

std::string format_label(const std::string& io_name) {
  static const std::pair<const char*, const char*> labels[] = {
      {"NiftiImageIO", "NIfTI"}, {"MetaImageIO", "MetaImage"}, {"PNGImageIO", "PNG"},
      {"JPEGImageIO", "JPEG"},   {"TIFFImageIO", "TIFF"},      {"BMPImageIO", "BMP"},
      {"NrrdImageIO", "NRRD"},   {"GDCMImageIO", "DICOM"}};
  for (const auto& [k, v] : labels)
    if (io_name == k)
      return v;
  return io_name;
}

bool map_component(const itk::ImageIOBase& io, ComponentType& out) {
  const bool is8 = io.GetComponentSize() == 8;
  switch (io.GetComponentType()) {
    case IOComponent::UCHAR:
      out = ComponentType::UInt8;
      return true;
    case IOComponent::CHAR:
      out = ComponentType::Int8;
      return true;
    case IOComponent::USHORT:
      out = ComponentType::UInt16;
      return true;
    case IOComponent::SHORT:
      out = ComponentType::Int16;
      return true;
    case IOComponent::UINT:
      out = ComponentType::UInt32;
      return true;
    case IOComponent::INT:
      out = ComponentType::Int32;
      return true;
    case IOComponent::ULONG:
      out = is8 ? ComponentType::UInt64 : ComponentType::UInt32;
      return true;
    case IOComponent::LONG:
      out = is8 ? ComponentType::Int64 : ComponentType::Int32;
      return true;
    case IOComponent::ULONGLONG:
      out = ComponentType::UInt64;
      return true;
    case IOComponent::LONGLONG:
      out = ComponentType::Int64;
      return true;
    case IOComponent::FLOAT:
      out = ComponentType::Float32;
      return true;
    case IOComponent::DOUBLE:
      out = ComponentType::Float64;
      return true;
    default:
      return false;
  }
}

IOComponent itk_component(ComponentType t) {
  switch (t) {
    case ComponentType::UInt8:
      return IOComponent::UCHAR;
    case ComponentType::Int8:
      return IOComponent::CHAR;
    case ComponentType::UInt16:
      return IOComponent::USHORT;
    case ComponentType::Int16:
      return IOComponent::SHORT;
    case ComponentType::UInt32:
      return IOComponent::UINT;
    case ComponentType::Int32:
      return IOComponent::INT;
    case ComponentType::UInt64:
      return IOComponent::ULONGLONG;
    case ComponentType::Int64:
      return IOComponent::LONGLONG;
    case ComponentType::Float32:
      return IOComponent::FLOAT;
    case ComponentType::Float64:
      return IOComponent::DOUBLE;
  }
  return IOComponent::FLOAT;
}

itk::ImageIOBase::Pointer writer_for(const std::string& path) {
  register_formats();
  itk::ImageIOBase::Pointer io =
      itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::WriteMode);
  if (!io) {
    throw RequestError(path +
                       ": unknown output format; name it .nii.gz, .nii, .mha, .mhd, .nrrd, .nhdr, "
                       ".png, .jpg, .tif or .bmp");
  }
  return io;
}

namespace {

// MetaIO reports its parse errors on std::cerr and niftilib some of its own on the C stderr,
// whatever its debug level; ndconv reports them itself, on one line. Both are silenced while ITK
// reads or writes. Threads that read and write at once (a batch) share one silencing: the first
// starts it, the last ends it, and print_stderr_line writes to the real stderr meanwhile.
std::mutex quiet_mutex;
int quiet_depth = 0;
int quiet_saved_fd = -1;
std::streambuf* quiet_saved_buffer = nullptr;

}  // namespace

QuietStderr::QuietStderr() {
  std::lock_guard<std::mutex> lock(quiet_mutex);
  if (quiet_depth++ > 0)
    return;
  quiet_saved_buffer = std::cerr.rdbuf(nullptr);
  std::fflush(stderr);
  quiet_saved_fd = ::dup(STDERR_FILENO);
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (quiet_saved_fd >= 0 && null_fd >= 0)
    ::dup2(null_fd, STDERR_FILENO);
  if (null_fd >= 0)
    ::close(null_fd);
}

QuietStderr::~QuietStderr() {
  std::lock_guard<std::mutex> lock(quiet_mutex);
  if (--quiet_depth > 0)
    return;
  std::fflush(stderr);
  if (quiet_saved_fd >= 0) {
    ::dup2(quiet_saved_fd, STDERR_FILENO);
    ::close(quiet_saved_fd);
    quiet_saved_fd = -1;
  }
  std::cerr.rdbuf(quiet_saved_buffer);
}

void print_stderr_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(quiet_mutex);
  const std::string text = line + "\n";
  if (quiet_depth > 0 && quiet_saved_fd >= 0) {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(quiet_saved_fd, text.data() + done, text.size() - done);
      if (n <= 0 && errno != EINTR)
        return;
      done += n > 0 ? static_cast<size_t>(n) : 0;
    }
    return;
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

std::string itk_version() {
  return itk::Version::GetITKVersion();
}

}  // namespace ndconv::io
