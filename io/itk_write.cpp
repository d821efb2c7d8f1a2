// Writing through ITK's ImageIOBase: the writer is chosen by the output's extension, set up with
// the image's geometry and pixel type at run time, and writes into a staging folder beside the
// output (output_file.h); NIfTI and MetaImage pixels go to the file from memory and are compressed
// on all cores (output_encode.h); formats whose ITK writers cannot report a full disk are written
// in a forked child; 4D images named .seq.nrrd are written as Slicer volume sequences
// (nrrd_sequence.h).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

#include "io/image.h"
#include "io/itk_read.h"
#include "io/itk_support.h"
#include "io/nrrd_header.h"
#include "io/nrrd_sequence.h"
#include "io/output_encode.h"
#include "io/output_file.h"
#include "io/pixel_convert.h"

#include "nifti1_io.h"

namespace ndconv::io {

namespace {

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
      (void)read_file_image(written);
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
