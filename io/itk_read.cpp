#include "io/itk_read.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "core/first_touch.h"
#include "io/decoder_sandbox.h"
#include "io/dicom_pixel_check.h"
#include "io/dicom_sandbox.h"
#include "io/dicom_ultrasound.h"
#include "io/header_check.h"
#include "io/header_text.h"
#include "io/itk_header_file.h"
#include "io/itk_support.h"
#include "io/memory_check.h"
#include "io/nifti2_reader.h"
#include "io/nrrd_header.h"
#include "io/nrrd_sequence.h"
#include "io/pixel_convert.h"
#include "io/raw_pixel_read.h"

#include "itkGDCMImageIO.h"
#include "itkImageIOFactory.h"
#include "itkMetaImageIO.h"
#include "itkNrrdImageIO.h"
#include "nifti1_io.h"

namespace ndconv::io {

namespace {

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

void check_reader_matches(const std::string& path, const std::string& reader,
                          const HeaderFacts& facts, bool nrrd) {
  const bool meta = reader == "MetaImageIO", nifti = reader == "NiftiImageIO";
  if ((meta && facts.kind != HeaderFacts::Kind::MetaImage) ||
      (nifti && facts.kind != HeaderFacts::Kind::Nifti1) || (reader == "NrrdImageIO" && !nrrd)) {
    throw IoError(path + ": ITK would read it as " + format_label(reader) +
                  ", but its header is not one ndconv can check first; refused");
  }
}

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

void frames_from_components(const NrrdHeader& h, ImageInfo& info) {
  Geometry& g = info.geometry;
  g.dims = 4;
  g.extent[3] = info.components;
  g.spacing[3] = h.time_step;
  g.origin[3] = h.time_origin;
  info.components = 1;
  info.pixel_kind = "scalar";
}

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
    struct stat st;
    const double bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
    check_dicom_survives(path, bytes, [&] { read_file_image(path); });
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
  if (dicom)
    apply_ultrasound_spacing(path, info);
  info.metaimage_pixels = {facts.local_data_offset, facts.compressed, facts.pixel_file,
                           facts.compressed_size};
  check_memory(path, voxels * info.components, io->GetComponentSize());
  return info;
}

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

void set_whole_region(itk::ImageIOBase& io) {
  const unsigned dims = io.GetNumberOfDimensions();
  itk::ImageIORegion region(dims);
  for (unsigned a = 0; a < dims; ++a) {
    region.SetIndex(a, 0);
    region.SetSize(a, io.GetDimensions(a));
  }
  io.SetIORegion(region);
}

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

ImageInfo read_file_info(const std::string& path) {
  QuietStderr quiet;
  check_input_file(path);
  if (is_nifti2(path))
    return read_nifti2(path, false).info;
  itk::ImageIOBase::Pointer io;
  std::unique_ptr<ItkHeaderFile> header_file;
  return open_header(path, io, header_file);
}

Image read_file_image(const std::string& path) {
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

bool read_stored_file(const std::string& path, StoredImage& out, HostMemory memory) {
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

}  // namespace ndconv::io
