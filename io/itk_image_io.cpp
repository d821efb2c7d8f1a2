// Reading and writing through ITK's ImageIOBase directly, with no itk::Image instantiations: the
// header is read first (ImageIOFactory picks the reader by content), the dimension, component
// type and component count are taken from it at run time, and the raw pixels are moved in one
// buffer that pixel_convert.cpp turns into float32 planes. With dicom_series.cpp (GDCM's series
// sorting) it is the only translation unit of ndconv_io that includes ITK headers, which keeps
// ITK's compile and link cost in one place.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>

#include "engine/first_touch.h"
#include "io/dicom_pixel_check.h"
#include "io/dicom_series.h"
#include "io/header_check.h"
#include "io/header_text.h"
#include "io/image.h"
#include "io/itk_header_file.h"
#include "io/memory_check.h"
#include "io/nifti2_reader.h"
#include "io/nrrd_header.h"
#include "io/nrrd_sequence.h"
#include "io/output_encode.h"
#include "io/output_file.h"
#include "io/parallel_deflate.h"
#include "io/pixel_convert.h"

#include "itkBMPImageIOFactory.h"
#include "itkGDCMImageIO.h"
#include "itkImageIOBase.h"
#include "itkImageIOFactory.h"
#include "itkJPEGImageIOFactory.h"
#include "itkMetaImageIO.h"
#include "itkMetaImageIOFactory.h"
#include "itkNiftiImageIOFactory.h"
#include "itkNrrdImageIO.h"
#include "itkNrrdImageIOFactory.h"
#include "itkPNGImageIOFactory.h"
#include "itkTIFFImageIOFactory.h"
#include "itkVersion.h"
#include "nifti1_io.h"

namespace ndconv::io {

namespace {

using IOComponent = itk::IOComponentEnum;
using IOPixel = itk::IOPixelEnum;

// ITK's IO factories register themselves only when a program includes the generated
// registration header (UseITK.cmake); a library cannot rely on that, so it registers the formats
// it documents explicitly, once.
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

// ITK's exception text is several lines with file and line; keep the description on one line.
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

// ITK 5.2 reports NIfTI's pixdim[4] as stored (e.g. 2000 for a TR of 2000 ms) but writes
// xyzt_units as seconds; ndconv keeps the time step in seconds so that it survives a round trip.
double nifti_time_unit_in_seconds(const std::string& path) {
  nifti_image* header = nifti_image_read(path.c_str(), 0);
  if (header == nullptr)
    return 1.0;
  double scale = 1.0;
  if (header->time_units == NIFTI_UNITS_MSEC)
    scale = 1e-3;
  else if (header->time_units == NIFTI_UNITS_USEC)
    scale = 1e-6;
  nifti_image_free(header);
  return scale;
}

// ITK 5.2's PNG and JPEG readers crash on some damaged files (libpng aborts in
// PNGImageIO::ReadImageInformation, which sets no error handler; JPEGImageIO::CanReadFile calls
// jpeg_destroy on a half-built decoder). Files that start like PNG, JPEG, TIFF or BMP are therefore
// decoded once in a forked child first; only if that child survives does this process decode them.
// They are 2D images, so the second decode costs little. The child ends with _exit: it never
// returns into the caller's code.
bool looks_like_2d_format(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char m[4] = {0, 0, 0, 0};
  f.read(reinterpret_cast<char*>(m), 4);
  const bool png = m[0] == 0x89 && m[1] == 'P' && m[2] == 'N' && m[3] == 'G';
  const bool jpeg = m[0] == 0xFF && m[1] == 0xD8;
  const bool tiff = (m[0] == 'I' && m[1] == 'I') || (m[0] == 'M' && m[1] == 'M');
  const bool bmp = m[0] == 'B' && m[1] == 'M';
  return png || jpeg || tiff || bmp;
}

// Wall-clock bound on the sandboxed decode: a looping decoder (a TIFF whose IFD chain points back
// on itself) is killed and the file refused. Real 2D images decode far faster than this.
double decoder_time_limit_seconds(const std::string& path) {
  struct stat st;
  const double mib =
      ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) / (1 << 20) : 0;
  return 5.0 + 2.0 * mib;
}

void check_decoder_survives(const std::string& path) {
  if (!looks_like_2d_format(path))
    return;
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0)
    return;  // cannot sandbox: decode directly
  if (child == 0) {
    // Dies with ndconv: a Ctrl-C or kill that ends the parent must not leave a decoder spinning.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    int code = 1;
    try {
      itk::ImageIOBase::Pointer io =
          itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
      if (io) {
        io->SetFileName(path);
        io->ReadImageInformation();
        double values = 1;
        for (unsigned a = 0; a < io->GetNumberOfDimensions(); ++a)
          values *= static_cast<double>(io->GetDimensions(a));
        check_memory(path, values * io->GetNumberOfComponents(),
                     static_cast<int>(io->GetComponentSize()));
        std::vector<char> buffer(static_cast<size_t>(io->GetImageSizeInBytes()));
        io->Read(buffer.data());
        code = 0;
      }
    } catch (...) {
    }
    ::_exit(code);
  }
  // Polled rather than blocking in waitpid, so that the time limit holds and a signal handler
  // that ends the process is never held up here.
  const double limit = decoder_time_limit_seconds(path);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR))
      break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      ::kill(child, SIGKILL);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      char text[160];
      std::snprintf(text, sizeof text,
                    ": corrupt image (ITK's decoder for this format did not finish within %.0f s; "
                    "a looping or damaged file)",
                    limit);
      throw IoError(path + text);
    }
    ::usleep(2000);
  }
  if (WIFSIGNALED(status)) {
    throw IoError(path + ": corrupt image (ITK's decoder for this format failed on it: " +
                  strsignal(WTERMSIG(status)) + ")");
  }
}

// The formats whose headers name other files or carry transforms are checked by check_header
// first; a file ITK would read with one of those readers although check_header did not take it
// for that format (an unusual name or layout) is refused rather than passed on unchecked.
void check_reader_matches(const std::string& path, const std::string& reader,
                          const HeaderFacts& facts, bool nrrd) {
  const bool meta = reader == "MetaImageIO", nifti = reader == "NiftiImageIO";
  if ((meta && facts.kind != HeaderFacts::Kind::MetaImage) ||
      (nifti && facts.kind != HeaderFacts::Kind::Nifti1) || (reader == "NrrdImageIO" && !nrrd)) {
    throw IoError(path + ": ITK would read it as " + format_label(reader) +
                  ", but its header is not one ndconv can check first; refused");
  }
}

// Says where the header leaves the unit of the spacing unknown (ImageInfo::spatial_unit_unknown).
void describe_units(const HeaderFacts& facts, const std::string& nrrd_space_units,
                    ImageInfo& info) {
  const std::string& f = info.format;
  if (facts.kind == HeaderFacts::Kind::Nifti1)
    describe_nifti_units(facts.xyzt_units, info);
  else if (f == "NrrdImageIO" && !space_units_are_mm(nrrd_space_units))
    info.spatial_unit_unknown = "NRRD space units " + nrrd_space_units + ", not applied by ITK";
  else if (f == "PNGImageIO" || f == "JPEGImageIO" || f == "BMPImageIO" || f == "TIFFImageIO")
    info.spatial_unit_unknown = format_label(f) + " file";
}

// Opens `path` and reads its header; everything ndconv needs is checked here.
// A volume sequence whose list axis comes first: ITK read its items as the pixel's components;
// they become the time axis (nrrd_sequence.h).
void frames_from_components(const NrrdHeader& h, ImageInfo& info) {
  Geometry& g = info.geometry;
  g.dims = 4;
  g.extent[3] = info.components;
  g.spacing[3] = h.time_step;
  g.origin[3] = h.time_origin;
  info.components = 1;
  info.pixel_kind = "scalar";
}

// `header_file` holds the header ITK reads in place of a NRRD or MetaImage file's own; it must
// outlive every read through `io`.
ImageInfo open_header(const std::string& path, itk::ImageIOBase::Pointer& io,
                      std::unique_ptr<ItkHeaderFile>& header_file) {
  check_input_file(path);
  const HeaderFacts facts = check_header(path);
  std::string nrrd_space_units;
  RewrittenHeader rewritten = facts.itk_header;
  const bool nrrd = is_nrrd(path);
  NrrdHeader nrrd_header;
  if (nrrd) {
    nrrd_header = check_nrrd_header(path);
    nrrd_space_units = nrrd_header.space_units;
    rewritten = nrrd_header.itk_header;
  }
  // GDCM is not a registered factory: its CanReadFile would parse every file no other reader
  // claims. Files marked as DICOM go to it directly, once it has survived them in a sandbox.
  const bool dicom = is_dicom_file(path);
  if (dicom) {
    check_dicom_survives(path, false);
    check_dicom_pixel_data(path);
  }
  register_formats();
  check_decoder_survives(path);
  if (!rewritten.empty()) {
    header_file = std::make_unique<ItkHeaderFile>(rewritten, path);
    io = nrrd ? itk::ImageIOBase::Pointer(itk::NrrdImageIO::New())
              : itk::ImageIOBase::Pointer(itk::MetaImageIO::New());
  } else {
    io = dicom ? itk::ImageIOBase::Pointer(itk::GDCMImageIO::New())
               : itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
  }
  if (!io) {
    throw IoError(path +
                  ": not an image ndconv can read (formats: NIfTI, MetaImage, NRRD, DICOM, PNG, "
                  "JPEG, TIFF, BMP); the file is of another kind or its header is corrupt");
  }
  check_reader_matches(path, io->GetNameOfClass(), facts, nrrd);
  io->SetFileName(header_file ? header_file->path() : path);
  try {
    io->ReadImageInformation();
  } catch (const itk::ExceptionObject& e) {
    throw IoError(path + ": cannot read the header: " + one_line(e));
  }
  ImageInfo info;
  info.path = path;
  info.format = io->GetNameOfClass();
  const unsigned dims = io->GetNumberOfDimensions();
  if (dims < 2 || dims > static_cast<unsigned>(kMaxDims)) {
    throw IoError(path + ": is a " + std::to_string(dims) +
                  "D image; ndconv filters 2D, 3D and 4D images");
  }
  if (io->GetPixelType() == IOPixel::COMPLEX) {
    throw IoError(path + ": has complex pixels, which ndconv does not filter (pixel type " +
                  itk::ImageIOBase::GetComponentTypeAsString(io->GetComponentType()) +
                  " complex); split it into real and imaginary images");
  }
  if (io->GetPixelType() == IOPixel::UNKNOWNPIXELTYPE || !map_component(*io, info.component_type)) {
    throw IoError(path + ": unsupported pixel type " +
                  itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) + " of " +
                  itk::ImageIOBase::GetComponentTypeAsString(io->GetComponentType()));
  }
  info.pixel_kind = to_lower(itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()));
  info.components = static_cast<int>(io->GetNumberOfComponents());
  if (info.components < 1)
    throw IoError(path + ": the header gives no pixel components");
  Geometry& g = info.geometry;
  g.dims = static_cast<int>(dims);
  double voxels = 1;
  for (unsigned a = 0; a < dims; ++a) {
    g.extent[a] = static_cast<int64_t>(io->GetDimensions(a));
    if (g.extent[a] < 1)
      throw IoError(path + ": the header gives an empty axis " + std::to_string(a));
    voxels *= static_cast<double>(g.extent[a]);
    g.spacing[a] = io->GetSpacing(a);
    g.origin[a] = io->GetOrigin(a) + 0.0;
    const std::vector<double> column = io->GetDirection(a);
    for (unsigned r = 0; r < dims && r < column.size(); ++r)
      g.direction[r * kMaxDims + a] = column[r] + 0.0;  // no -0
  }
  for (unsigned a = dims; a < static_cast<unsigned>(kMaxDims); ++a) {
    for (unsigned r = 0; r < static_cast<unsigned>(kMaxDims); ++r)
      g.direction[r * kMaxDims + a] = g.direction[a * kMaxDims + r] = (r == a) ? 1.0 : 0.0;
  }
  if (info.format == "NiftiImageIO" && g.dims == 4)
    g.spacing[3] = facts.zero_time_step ? 0.0 : g.spacing[3] * nifti_time_unit_in_seconds(path);
  if (nrrd) {
    info.nrrd_key_values = nrrd_header.key_values;
    info.nrrd_list_axis = nrrd_header.sequence_axis;
    if (nrrd_header.sequence_axis == 0)
      frames_from_components(nrrd_header, info);
  }
  describe_units(facts, nrrd_space_units, info);
  info.metaimage_pixels = {facts.local_data_offset, facts.compressed, facts.pixel_file,
                           facts.compressed_size};
  check_memory(path, voxels * info.components, io->GetComponentSize());
  return info;
}

// Types each writer stores (from ITK 5.2's writers); an empty list means all of ndconv's types.
std::vector<ComponentType> writable_types(const std::string& io_name) {
  using T = ComponentType;
  if (io_name == "PNGImageIO")
    return {T::UInt8, T::UInt16};
  if (io_name == "JPEGImageIO" || io_name == "BMPImageIO")
    return {T::UInt8};
  if (io_name == "TIFFImageIO")
    return {T::UInt8, T::Int8, T::UInt16, T::Int16, T::Float32};
  return {};
}

// ImageIOBase::SupportsDimension is not overridden by every writer (NIfTI answers 2D only), so
// the dimensions each writer of ITK 5.2 handles are listed here.
bool writable_dimension(const std::string& io_name, int dims) {
  if (io_name == "NiftiImageIO" || io_name == "MetaImageIO" || io_name == "NrrdImageIO")
    return dims >= 2 && dims <= 4;
  if (io_name == "TIFFImageIO")
    return dims == 2 || dims == 3;
  return dims == 2;
}

bool writable_components(const std::string& io_name, int components) {
  if (io_name == "PNGImageIO")
    return components >= 1 && components <= 4;
  if (io_name == "JPEGImageIO")
    return components == 1 || components == 3;
  if (io_name == "BMPImageIO")
    return components == 1 || components == 3 || components == 4;
  return true;
}

// ITK's PNG writer aborts and its JPEG writer calls exit() when the disk is full, and the BMP
// writer does not report a short write: these formats are written in a forked child (they are
// small), whose exit status says whether the file is complete, and then read back. `write`
// makes, uses and destroys the writer, so that its stream is flushed before the child exits.
void write_in_child(const std::function<void()>& write, const std::string& written,
                    const std::string& label, uint64_t bytes) {
  std::fflush(nullptr);
  const pid_t child = ::fork();
  bool ok = false;
  if (child < 0) {
    write();
    ok = true;
  } else if (child == 0) {
    int code = 1;
    try {
      write();
      code = 0;
    } catch (...) {
    }
    ::_exit(code);
  } else {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (ok) {
    try {
      (void)read_image(written);
    } catch (const IoError&) {
      ok = false;
    }
  }
  if (!ok) {
    const std::string why = write_failure_reason(folder_of(written), bytes);
    throw IoError(
        label + ": cannot write: " + (why.empty() ? std::string("the image writer failed") : why));
  }
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

// ITK 5.2's MetaImage and NIfTI readers do not report a file that ends early: they return with
// the rest of the buffer as it was. So the buffer is filled with a marker first; a last byte still
// equal to the marker after two reads with different markers cannot be data, and means the file
// was truncated.
void read_complete(itk::ImageIOBase& io, char* buffer, size_t bytes, const std::string& path) {
  if (bytes == 0)
    return;
  for (const char marker : {'\xA5', '\x5A'}) {
    std::fill(buffer, buffer + bytes, marker);
    io.Read(buffer);
    if (buffer[bytes - 1] != marker)
      return;
  }
  throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
}

// The reader reads the whole image.
void set_whole_region(itk::ImageIOBase& io) {
  const unsigned dims = io.GetNumberOfDimensions();
  itk::ImageIORegion region(dims);
  for (unsigned a = 0; a < dims; ++a) {
    region.SetIndex(a, 0);
    region.SetSize(a, io.GetDimensions(a));
  }
  io.SetIORegion(region);
}

// The float32 planes of pixels as ITK stored them: one per component, or, for a volume sequence
// whose list axis came first (ITK's components), the frames one after the other as the time axis.
void itk_pixels_to_planes(const char* data, const ImageInfo& info, const itk::ImageIOBase& io,
                          std::vector<std::vector<float>>& planes) {
  if (info.nrrd_list_axis != 0) {
    native_to_planes(data, info.component_type, info.components, info.geometry.voxel_count(),
                     planes);
    return;
  }
  const int frames = static_cast<int>(io.GetNumberOfComponents());
  std::vector<std::vector<float>> per_frame;
  native_to_planes(data, info.component_type, frames, info.geometry.voxel_count() / frames,
                   per_frame);
  planes.assign(1, std::vector<float>());
  planes[0].reserve(static_cast<size_t>(info.geometry.voxel_count()));
  for (auto& frame : per_frame) {
    planes[0].insert(planes[0].end(), frame.begin(), frame.end());
    frame = std::vector<float>();
  }
}

// Where a single-file NIfTI-1 image (.nii, .nii.gz) keeps its pixels and how ITK maps them to
// float, from niftilib's header.
struct NiftiLayout {
  size_t first = 0;  ///< byte offset of the pixels in the (inflated) file
  size_t bytes = 0;  ///< bytes of the pixels
  int value_bytes = 1;
  bool swap = false;  ///< stored in the other byte order
  int datatype = 0;
  double scale = 1.0, offset = 0.0;  ///< applied only where ITK applies them (MustRescale)
};

// False for what ndconv leaves to ITK: a .hdr/.img pair, a header that disagrees with what ITK
// read (`info`), an unusual data offset.
bool nifti_layout(const std::string& path, const ImageInfo& info, NiftiLayout& layout) {
  nifti_image* h = nifti_image_read(path.c_str(), 0);
  if (h == nullptr)
    return false;
  const bool single_file = h->iname != nullptr && path == h->iname && h->nifti_type == 1;
  const double voxels = static_cast<double>(info.geometry.voxel_count()) * info.components;
  // Extensions beyond 64 MiB (a hostile vox_offset) are left to ITK's reader, which streams them.
  const bool agrees = single_file && h->iname_offset >= 348 && h->iname_offset <= (1 << 26) &&
                      h->nbyper > 0 && static_cast<double>(h->nvox) == voxels &&
                      info.components == 1;
  if (agrees) {
    layout.first = static_cast<size_t>(h->iname_offset);
    layout.bytes = static_cast<size_t>(h->nvox) * static_cast<size_t>(h->nbyper);
    layout.value_bytes = h->nbyper;
    layout.swap = h->nbyper > 1 && h->byteorder != nifti_short_order();
    layout.datatype = h->datatype;
    // ITK's NiftiImageIO::MustRescale: a slope of 0, or of 1 with no intercept, is no rescale.
    const double eps = std::numeric_limits<double>::epsilon();
    const double slope = h->scl_slope, inter = h->scl_inter;
    if (std::abs(slope) > eps && (std::abs(slope - 1.0) > eps || std::abs(inter) > eps)) {
      layout.scale = slope;
      layout.offset = inter;
    }
  }
  nifti_image_free(h);
  return agrees;
}

// The file's bytes [0, layout.first + layout.bytes) into `out` (the pixels at out + first), in the
// host's byte order: a .nii copied from the page cache, a .nii.gz inflated on all cores where it
// has several members. The length is the header's, checked by the copy or the decoder. A damaged
// member of ndconv's is an IoError; false when the file is not exactly that long or does not
// inflate (a truncated file included): ITK then reads it and names the problem.
bool read_nifti_bytes(const std::string& path, const NiftiLayout& layout, unsigned char* out) {
  const size_t total = layout.first + layout.bytes;
  const MappedFile file(path, path);
  const bool gzip = file.size() >= 2 && file.data()[0] == 0x1f && file.data()[1] == 0x8b;
  if (gzip) {
    const ExactInflate r = inflate_gzip_exactly(file.data(), file.size(), out, total, 0);
    if (r == ExactInflate::Damaged)
      throw IoError(path + ": a compressed block is damaged (CRC or length mismatch)");
    if (r != ExactInflate::Done)
      return false;
  } else {
    if (file.size() < total)
      return false;
    ndconv::detail::copy_on_all_cores(out + layout.first, file.data() + layout.first, layout.bytes,
                                      0);
  }
  if (layout.swap) {
    unsigned char* p = out + layout.first;
    const size_t n = static_cast<size_t>(layout.value_bytes);
    for (size_t at = 0; at + n <= layout.bytes; at += n)
      std::reverse(p + at, p + at + n);
  }
  return true;
}

// The pixels of a MetaImage that holds them itself (ElementDataFile = LOCAL, binary,
// little-endian), read by ndconv: copied on every core, or inflated by libdeflate when compressed
// (MetaIO reads them on one thread through zlib, and takes a damaged stream for data). False for
// any other layout, or uncompressed data shorter than `bytes`: ITK then reads the file and
// reports what is wrong. Compressed data that does not inflate to exactly `bytes` (truncated,
// damaged, failing its checksum) is refused.
bool read_metaimage_bytes(const std::string& path, const ImageInfo& info, size_t bytes,
                          unsigned char* out) {
  if constexpr (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
    return false;
  const ImageInfo::LocalPixels& pixels = info.metaimage_pixels;
  if (pixels.offset < 0)
    return false;
  const MappedFile file(pixels.file.empty() ? path : pixels.file, path);
  const auto offset = static_cast<size_t>(pixels.offset);
  if (file.size() < offset)
    return false;
  const unsigned char* data = file.data() + offset;
  size_t available = file.size() - offset;
  if (!pixels.compressed) {
    if (available < bytes)
      return false;
    ndconv::detail::copy_on_all_cores(out, data, bytes, 0);
    return true;
  }
  if (pixels.compressed_size >= 0)
    available = std::min(available, static_cast<size_t>(pixels.compressed_size));
  // MetaIO inflates zlib and gzip streams alike.
  const bool gzip = available >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const bool whole =
      gzip ? inflate_gzip_exactly(data, available, out, bytes, 0) == ExactInflate::Done
           : inflate_zlib_exactly(data, available, out, bytes);
  if (!whole)
    throw IoError(path +
                  ": the compressed pixels are damaged or end early (truncated or corrupt "
                  "file)");
  return true;
}

// NIfTI's reader copies through its own buffer, so the marker above cannot see a short file;
// the data file's length is checked against what the header needs instead: its size when
// uncompressed; for gzip, the members' recorded lengths (files ndconv wrote) or the bytes the
// stream inflates to (libdeflate, counted, not kept).
void check_nifti_length(const std::string& path) {
  nifti_image* header = nifti_image_read(path.c_str(), 0);
  if (header == nullptr)
    return;
  const double needed = static_cast<double>(header->iname_offset) +
                        static_cast<double>(header->nvox) * header->nbyper;
  const std::string data_file = header->iname ? header->iname : path;
  nifti_image_free(header);
  double have = 0;
  try {
    const MappedFile file(data_file, path);
    const bool gzip = file.size() >= 2 && file.data()[0] == 0x1f && file.data()[1] == 0x8b;
    have = gzip ? static_cast<double>(
                      gzip_length_up_to(file.data(), file.size(), static_cast<uint64_t>(needed)))
                : static_cast<double>(file.size());
  } catch (const IoError&) {
    throw IoError(path + ": cannot open the data file " + data_file);
  }
  if (have < needed) {
    throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
  }
}

// ITK's JPEG reader decodes a truncated file with grey filling (libjpeg only warns) and its BMP
// reader does not check the length: check that a JPEG ends with its end-of-image marker and that
// an uncompressed BMP holds all its rows.
void check_2d_length(const std::string& path, const std::string& format) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bool complete = true;
  if (format == "JPEGImageIO") {
    const size_t from = bytes.size() > 64 ? bytes.size() - 64 : 0;
    complete = bytes.find("\xFF\xD9", from) != std::string::npos;
  } else if (format == "BMPImageIO" && bytes.size() >= 34) {
    auto u32 = [&](size_t o) {
      uint32_t v = 0;
      for (int i = 3; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(bytes[o + i]);
      return v;
    };
    const uint32_t offset = u32(10), compression = u32(30);
    const int64_t width = static_cast<int32_t>(u32(18));
    const int64_t height = std::abs(static_cast<int64_t>(static_cast<int32_t>(u32(22))));
    const int bits =
        static_cast<unsigned char>(bytes[28]) | (static_cast<unsigned char>(bytes[29]) << 8);
    if (compression == 0 && width > 0) {
      const int64_t row = (width * bits + 31) / 32 * 4;
      complete = static_cast<int64_t>(bytes.size()) >= static_cast<int64_t>(offset) + row * height;
    }
  }
  if (!complete)
    throw IoError(path + ": the file ends before all its pixels (truncated or corrupt file)");
}

// ITK 5.2 writes a 4D NIfTI's pixdim[4] without a time unit (xyzt_units = mm only). ndconv keeps
// the time step in seconds, so it says so in the header it wrote (byte 123, NIFTI_UNITS_SEC).
void mark_time_in_seconds(const std::string& path) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  std::string data;
  {
    znzFile f = znzopen(path.c_str(), "rb", gz ? 1 : 0);
    if (znz_isnull(f))
      throw IoError(path + ": cannot reopen the written file");
    std::vector<char> chunk(1 << 20);
    size_t n;
    while ((n = znzread(chunk.data(), 1, chunk.size(), f)) > 0)
      data.append(chunk.data(), n);
    znzclose(f);
  }
  if (data.size() < 348)
    throw IoError(path + ": the written NIfTI file is too short");
  data[123] = static_cast<char>((data[123] & 0x07) | NIFTI_UNITS_SEC);
  znzFile f = znzopen(path.c_str(), "wb", gz ? 1 : 0);
  if (znz_isnull(f) || znzwrite(data.data(), 1, data.size(), f) != data.size()) {
    if (!znz_isnull(f))
      znzclose(f);
    throw IoError(path + ": cannot rewrite the written file");
  }
  znzclose(f);
}

// MetaIO reports its parse errors on std::cerr and niftilib some of its own on the C stderr,
// whatever its debug level; ndconv reports them itself, on one line. Both are silenced while ITK
// reads or writes. Threads that read and write at once (a batch) share one silencing: the first
// starts it, the last ends it, and print_stderr_line writes to the real stderr meanwhile.
std::mutex quiet_mutex;
int quiet_depth = 0;
int quiet_saved_fd = -1;
std::streambuf* quiet_saved_buffer = nullptr;

class QuietStderr {
 public:
  QuietStderr() {
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
  ~QuietStderr() {
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
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;
};

constexpr double kSmallestNormalFloat = std::numeric_limits<float>::min();

// A writer for `itk_path` set up with the image's geometry, pixel type and `type`; with
// `one_voxel`, for an image of one voxel with that geometry (its header is what is wanted).
itk::ImageIOBase::Pointer configured_writer(const std::string& itk_path, const Image& image,
                                            ComponentType type, bool one_voxel) {
  itk::ImageIOBase::Pointer io = writer_for(itk_path);
  const std::string name = io->GetNameOfClass();
  io->SetFileName(itk_path);
  const Geometry& g = image.info.geometry;
  const int components = static_cast<int>(image.planes.size());
  io->SetNumberOfDimensions(static_cast<unsigned>(g.dims));
  itk::ImageIORegion region(static_cast<unsigned>(g.dims));
  // NIfTI keeps its sform in float, and ITK reads a NIfTI's orientation by a float SVD of it,
  // which never returns on a subnormal entry beside a large one (header_check.h): an entry float
  // would hold as subnormal (a direction cosine times a voxel size below 1.2e-38) is written as 0
  // (write_image refuses voxel sizes that small).
  const bool float_sform = name == "NiftiImageIO";
  for (int a = 0; a < g.dims; ++a) {
    io->SetDimensions(a, one_voxel ? 1 : static_cast<itk::SizeValueType>(g.extent[a]));
    io->SetSpacing(a, g.spacing[a]);
    io->SetOrigin(a, g.origin[a]);
    std::vector<double> column(g.dims);
    for (int r = 0; r < g.dims; ++r) {
      column[r] = g.direction[r * kMaxDims + a];
      if (float_sform && std::abs(column[r] * g.spacing[a]) < kSmallestNormalFloat)
        column[r] = 0.0;
    }
    io->SetDirection(a, column);
    region.SetIndex(a, 0);
    region.SetSize(a, one_voxel ? 1 : static_cast<itk::SizeValueType>(g.extent[a]));
  }
  io->SetIORegion(region);
  io->SetComponentType(itk_component(type));
  io->SetNumberOfComponents(static_cast<unsigned>(components));
  IOPixel pixel = IOPixel::SCALAR;
  if (components > 1) {
    // NIfTI stores colour only as 8-bit RGB(A); other colour images become vectors there.
    const bool colour_ok = name != "NiftiImageIO" || type == ComponentType::UInt8;
    if (image.info.pixel_kind == "rgb" && components == 3 && colour_ok)
      pixel = IOPixel::RGB;
    else if (image.info.pixel_kind == "rgba" && components == 4 && colour_ok)
      pixel = IOPixel::RGBA;
    else
      pixel = IOPixel::VECTOR;
  }
  io->SetPixelType(pixel);
  // ITK writes NIfTI and MetaImage uncompressed; finish_staged_output compresses on all cores.
  io->SetUseCompression(false);
  return io;
}

}  // namespace

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

ImageInfo read_info(const std::string& path) {
  if (is_dicom_series(path))
    return read_dicom_series_info(path);
  QuietStderr quiet;
  check_input_file(path);
  if (is_nifti2(path))
    return read_nifti2(path, false).info;
  itk::ImageIOBase::Pointer io;
  std::unique_ptr<ItkHeaderFile> header_file;
  return open_header(path, io, header_file);
}

Image read_image(const std::string& path) {
  if (is_dicom_series(path))
    return read_dicom_series(path);
  QuietStderr quiet;
  check_input_file(path);
  if (is_nifti2(path))
    return read_nifti2(path, true);
  itk::ImageIOBase::Pointer io;
  std::unique_ptr<ItkHeaderFile> header_file;
  Image image;
  image.info = open_header(path, io, header_file);
  const Geometry& g = image.info.geometry;
  set_whole_region(*io);
  try {
    // Sized by ITK's own account of the buffer it will fill (NIfTI with scl_slope reports the
    // rescaled type, not the stored one).
    const bool nifti = image.info.format == "NiftiImageIO";
    // Unscaled NIfTI-1 in one file: the pixels decoded once, gzip members in parallel.
    NiftiLayout layout;
    if (nifti && nifti_layout(path, image.info, layout) && layout.scale == 1.0 &&
        layout.offset == 0.0 && static_cast<size_t>(io->GetImageSizeInBytes()) == layout.bytes) {
      // Not zeroed: every byte of the pixels is written by the decoder or the copy.
      const std::unique_ptr<unsigned char[]> file(new unsigned char[layout.first + layout.bytes]);
      if (read_nifti_bytes(path, layout, file.get())) {
        native_to_planes(file.get() + layout.first, image.info.component_type,
                         image.info.components, g.voxel_count(), image.planes);
        return image;
      }
    }
    if (image.info.metaimage_pixels.offset >= 0) {
      const auto bytes = static_cast<size_t>(io->GetImageSizeInBytes());
      const std::unique_ptr<unsigned char[]> data(new unsigned char[bytes]);  // all written
      if (read_metaimage_bytes(path, image.info, bytes, data.get())) {
        native_to_planes(data.get(), image.info.component_type, image.info.components,
                         g.voxel_count(), image.planes);
        return image;
      }
    }
    if (nifti)
      check_nifti_length(path);
    // The pages are first touched on every core: the readers fill the buffer on one thread.
    std::vector<char> buffer;
    ndconv::detail::assign_touched(buffer, static_cast<size_t>(io->GetImageSizeInBytes()), char{0},
                                   0);
    if (nifti)
      io->Read(buffer.data());  // one pass: the length was checked above
    else
      read_complete(*io, buffer.data(), buffer.size(), path);
    check_2d_length(path, image.info.format);
    itk_pixels_to_planes(buffer.data(), image.info, *io, image.planes);
  } catch (const itk::ExceptionObject& e) {
    throw IoError(path + ": cannot read the pixels (truncated or corrupt file?): " + one_line(e));
  } catch (const std::bad_alloc&) {
    throw IoError(path + ": not enough memory to read its " +
                  human_bytes(static_cast<double>(image.info.native_bytes())) +
                  " of pixels and their float32 copy");
  }
  return image;
}

namespace {

// The stored types read for the stored-type API: NIfTI's datatype code, ndconv's component type
// and the engine's scalar type of each.
struct StoredKind {
  int nifti_datatype;
  ComponentType component;
  ScalarType scalar;
};
constexpr StoredKind kStoredKinds[] = {
    {NIFTI_TYPE_UINT8, ComponentType::UInt8, ScalarType::UInt8},
    {NIFTI_TYPE_INT8, ComponentType::Int8, ScalarType::Int8},
    {NIFTI_TYPE_UINT16, ComponentType::UInt16, ScalarType::UInt16},
    {NIFTI_TYPE_INT16, ComponentType::Int16, ScalarType::Int16},
    {NIFTI_TYPE_FLOAT32, ComponentType::Float32, ScalarType::Float32}};

template <class Match>
const StoredKind* stored_kind(const Match& match) {
  for (const StoredKind& k : kStoredKinds)
    if (match(k))
      return &k;
  return nullptr;
}

}  // namespace

StoredVolumeView StoredImage::view() const {
  return make_stored_view(storage.data() + first, type, info.geometry.dims, info.geometry.extent,
                          scale, offset);
}

bool read_stored_image(const std::string& path, StoredImage& out, HostMemory memory) {
  if (is_dicom_series(path))
    return false;
  QuietStderr quiet;
  check_input_file(path);
  if (is_nifti2(path))
    return false;
  itk::ImageIOBase::Pointer io;
  std::unique_ptr<ItkHeaderFile> header_file;
  out.info = open_header(path, io, header_file);
  if (out.info.components != 1 || out.info.nrrd_list_axis == 0)
    return false;
  const Geometry& g = out.info.geometry;
  try {
    if (out.info.format == "NiftiImageIO") {
      NiftiLayout layout;
      if (!nifti_layout(path, out.info, layout))
        return false;
      const StoredKind* kind =
          stored_kind([&](const StoredKind& k) { return k.nifti_datatype == layout.datatype; });
      if (kind == nullptr)
        return false;
      out.type = kind->scalar;
      if (static_cast<size_t>(layout.value_bytes) != scalar_size(out.type))
        return false;
      out.storage = PinnedBuffer<unsigned char>(layout.first + layout.bytes, memory);
      out.first = layout.first;
      out.scale = layout.scale;
      out.offset = layout.offset;
      if (!read_nifti_bytes(path, layout, out.storage.data())) {
        out.storage = PinnedBuffer<unsigned char>();
        return false;
      }
      return true;
    }
    const StoredKind* kind =
        stored_kind([&](const StoredKind& k) { return k.component == out.info.component_type; });
    if (kind == nullptr)
      return false;
    out.type = kind->scalar;
    set_whole_region(*io);
    const size_t bytes = static_cast<size_t>(io->GetImageSizeInBytes());
    if (bytes != static_cast<size_t>(g.voxel_count()) * scalar_size(out.type))
      return false;
    out.storage = PinnedBuffer<unsigned char>(bytes, memory);
    out.first = 0;
    if (read_metaimage_bytes(path, out.info, bytes, out.storage.data()))
      return true;
    ndconv::detail::touch_pages(out.storage.data(), bytes, 0);  // ITK fills it on one thread
    read_complete(*io, reinterpret_cast<char*>(out.storage.data()), bytes, path);
    check_2d_length(path, out.info.format);
  } catch (const itk::ExceptionObject& e) {
    throw IoError(path + ": cannot read the pixels (truncated or corrupt file?): " + one_line(e));
  } catch (const std::bad_alloc&) {
    throw IoError(path + ": not enough memory to read its " +
                  human_bytes(static_cast<double>(out.info.native_bytes())) + " of pixels");
  }
  return true;
}

void check_output_format(const std::string& path, int dims, int components, ComponentType type,
                         const Geometry* geometry) {
  itk::ImageIOBase::Pointer io = writer_for(path);
  if (output_names(path, 0).kind == OutputKind::MetaHeader &&
      name_of(path).find('%') != std::string::npos) {
    throw RequestError(path +
                       ": a .mhd output whose name holds '%' would name a data file that "
                       "MetaImage readers take for a slice pattern; rename it or write .mha");
  }
  const std::string name = io->GetNameOfClass();
  const std::string label = format_label(name);
  if (name == "NrrdImageIO")
    check_nrrd_output_name(path);
  if (is_sequence_output(path, dims) && components != 1)
    throw RequestError(path + ": a volume sequence (.seq.nrrd) holds scalar volumes, not " +
                       std::to_string(components) + "-component pixels");
  if (!writable_dimension(name, dims)) {
    throw RequestError(path + ": " + label + " cannot hold a " + std::to_string(dims) +
                       "D image; name the output .nii.gz or .mha");
  }
  if (!writable_components(name, components)) {
    throw RequestError(path + ": " + label + " cannot hold " + std::to_string(components) +
                       "-component pixels; name the output .nii.gz or .mha");
  }
  const auto types = writable_types(name);
  if (!types.empty() && std::find(types.begin(), types.end(), type) == types.end()) {
    std::string list;
    for (auto t : types)
      list += std::string(list.empty() ? "" : ", ") + to_string(t);
    throw RequestError(path + ": " + label + " holds only " + list + " pixels, not " +
                       to_string(type));
  }
  for (int a = 0; geometry != nullptr && name == "NiftiImageIO" && a < geometry->dims; ++a) {
    const double spacing = geometry->spacing[a];
    if (spacing != 0 && std::abs(spacing) < kSmallestNormalFloat) {
      std::ostringstream value;
      value << spacing;
      throw RequestError(path + ": the voxel size " + value.str() + " along axis " +
                         std::to_string(a) +
                         " is below the smallest normal float (1.2e-38) that NIfTI can store");
    }
  }
}

ComponentType default_output_type(const std::string& path, ComponentType input_type,
                                  std::string& note) {
  note.clear();
  itk::ImageIOBase::Pointer io = writer_for(path);
  const std::string label = format_label(io->GetNameOfClass());
  const auto types = writable_types(io->GetNameOfClass());
  auto holds = [&](ComponentType t) {
    return types.empty() || std::find(types.begin(), types.end(), t) != types.end();
  };
  if (holds(ComponentType::Float32))
    return ComponentType::Float32;
  const ComponentType chosen = holds(input_type) ? input_type : types.front();
  note = label + " holds no float32 pixels; writing " + to_string(chosen) +
         (chosen == input_type ? " (the input's type)" : "");
  return chosen;
}

WriteReport write_image(const std::string& path, const Image& image, ComponentType type,
                        bool overwrite, const WriteSettings& settings) {
  const Geometry& g = image.info.geometry;
  const int components = static_cast<int>(image.planes.size());
  check_output_format(path, g.dims, components, type, &g);
  if (settings.compression < 0 || settings.compression > kMaxCompressionLevel) {
    throw RequestError("the compression level must be 0 to " +
                       std::to_string(kMaxCompressionLevel));
  }
  if (is_sequence_output(path, g.dims))
    return write_sequence_nrrd(path, image, type, overwrite, settings);
  struct stat st;
  if (!overwrite && ::lstat(path.c_str(), &st) == 0)
    throw RequestError(path + ": exists; use --force to overwrite it");
  OutputNames names = output_names(path, settings.compression);
  check_companions(path, names, overwrite);
  if (settings.itk_encoder) {
    names.kind = OutputKind::ItkDirect;
    names.itk_name = name_of(path);
  }

  StagingFolder stage(path);
  const std::string itk_path = join_path(stage.folder(), names.itk_name);
  // ITK's chatter is silenced only while ITK works, so that the caller's progress shows.
  std::string name;
  {
    QuietStderr quiet;
    name = writer_for(itk_path)->GetNameOfClass();
  }
  auto report_progress = [&](double f) {
    if (settings.progress)
      settings.progress(f);
  };
  report_progress(0.0);
  // Scalar NIfTI and any MetaImage hold the buffer as it is: ITK then writes only a one-voxel
  // image for its header, and the pixels go to the file once, from memory.
  bool from_memory = !settings.itk_encoder &&
                     (((names.kind == OutputKind::Nifti || names.kind == OutputKind::NiftiGz) &&
                       components == 1) ||
                      names.kind == OutputKind::MetaSingle || names.kind == OutputKind::MetaHeader);
  for (int a = 0; a < g.dims; ++a)
    from_memory = from_memory && g.extent[a] <= 32767;  // NIfTI-1 holds int16 extents
  // A float32 scalar plane already is the file's data: no converted copy.
  const bool plane_as_is = from_memory && type == ComponentType::Float32 && components == 1;
  WriteReport report;
  std::vector<char> buffer;
  if (!plane_as_is)
    planes_to_native(image.planes, type, g.voxel_count(), buffer, report, settings.threads);
  const char* data =
      plane_as_is ? reinterpret_cast<const char*>(image.planes[0].data()) : buffer.data();
  const uint64_t data_bytes = static_cast<uint64_t>(g.voxel_count()) * components *
                              static_cast<uint64_t>(component_bytes(type));
  const std::vector<char> one_voxel(data_bytes / static_cast<uint64_t>(g.voxel_count()), 0);
  auto write = [&] {
    QuietStderr quiet;
    itk::ImageIOBase::Pointer io = configured_writer(itk_path, image, type, from_memory);
    io->SetUseCompression((settings.itk_encoder && name == "MetaImageIO") || name == "NrrdImageIO");
    io->WriteImageInformation();
    io->Write(from_memory ? one_voxel.data() : data);
  };
  try {
    if (names.kind == OutputKind::Other)
      write_in_child(write, itk_path, path, data_bytes);
    else
      write();
  } catch (const itk::ExceptionObject& e) {
    const std::string why = write_failure_reason(stage.folder(), data_bytes);
    throw IoError(path + ": writing failed: " + (why.empty() ? one_line(e) : why));
  }
  MemoryPixels pixels;
  if (from_memory) {
    pixels.data = reinterpret_cast<const unsigned char*>(data);
    pixels.bytes = data_bytes;
    pixels.dims = g.dims;
    for (int a = 0; a < g.dims; ++a)
      pixels.extent[a] = g.extent[a];
    pixels.itk_bytes = one_voxel.size();
  } else {
    buffer = std::vector<char>();  // the pixels are on disk now; compression maps that file
  }
  const bool time_in_seconds = name == "NiftiImageIO" && g.dims == 4;
  if (names.kind == OutputKind::ItkDirect && time_in_seconds) {
    QuietStderr quiet;
    mark_time_in_seconds(itk_path);
  }
  // Shares of the write: the uncompressed file first, then its compression where there is one.
  const bool compressing =
      (names.kind == OutputKind::NiftiGz || names.kind == OutputKind::MetaSingle ||
       names.kind == OutputKind::MetaHeader) &&
      settings.compression > 0;
  const double written = from_memory ? 0.05 : compressing ? 0.3 : 0.9;
  report_progress(written);
  std::function<void(double)> compression_progress;
  if (settings.progress)
    compression_progress = [&](double f) { report_progress(written + (0.95 - written) * f); };
  finish_staged_output(stage.folder(), path, names, data_bytes, settings.compression,
                       settings.threads, time_in_seconds, compression_progress,
                       from_memory ? &pixels : nullptr);
  stage.commit(overwrite);
  report_progress(1.0);
  return report;
}

}  // namespace ndconv::io
