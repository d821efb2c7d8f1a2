#include "format_fixtures.h"

#include <cmath>
#include <stdexcept>

#include "io/pixel_convert.h"

#include "gdcmTrace.h"
#include "itkGDCMImageIO.h"
#include "itkMetaDataObject.h"
#include "itkNrrdImageIO.h"

namespace ndconv::test {

namespace {

itk::IOComponentEnum itk_type(io::ComponentType t) {
  using C = io::ComponentType;
  switch (t) {
    case C::UInt8:
      return itk::IOComponentEnum::UCHAR;
    case C::Int16:
      return itk::IOComponentEnum::SHORT;
    case C::UInt16:
      return itk::IOComponentEnum::USHORT;
    case C::Float32:
      return itk::IOComponentEnum::FLOAT;
    default:
      throw std::invalid_argument("itk_writers: use uint8, int16, uint16 or float32");
  }
}

// The image's values in its own type, interleaved, from the `first`..`first + voxels` voxels.
std::vector<char> native_values(const RawImage& image, int64_t first, int64_t voxels) {
  std::vector<std::vector<float>> planes(image.components, std::vector<float>(voxels));
  for (int64_t v = 0; v < voxels; ++v)
    for (int c = 0; c < image.components; ++c)
      planes[c][v] = static_cast<float>(image.values[(first + v) * image.components + c]);
  std::vector<char> buffer;
  io::WriteReport report;
  io::planes_to_native(planes, image.type, voxels, buffer, report);
  return buffer;
}

// Shape, geometry and type of `image` (or of one of its slices: `dims` 3 with extent z 1).
void describe(itk::ImageIOBase& io, const RawImage& image, int dims, const Index& extent,
              const std::array<double, kMaxDims>& origin) {
  io.SetNumberOfDimensions(static_cast<unsigned>(dims));
  itk::ImageIORegion region(static_cast<unsigned>(dims));
  for (int a = 0; a < dims; ++a) {
    io.SetDimensions(a, static_cast<itk::SizeValueType>(extent[a]));
    io.SetSpacing(a, image.spacing[a]);
    io.SetOrigin(a, origin[a]);
    std::vector<double> column(dims);
    for (int r = 0; r < dims; ++r)
      column[r] = image.direction[r * kMaxDims + a];
    io.SetDirection(a, column);
    region.SetIndex(a, 0);
    region.SetSize(a, static_cast<itk::SizeValueType>(extent[a]));
  }
  io.SetIORegion(region);
  io.SetComponentType(itk_type(image.type));
  io.SetNumberOfComponents(static_cast<unsigned>(image.components));
  io.SetPixelType(image.components == 1 ? itk::IOPixelEnum::SCALAR : itk::IOPixelEnum::VECTOR);
}

}  // namespace

RawImage oriented_volume(int dims, io::ComponentType type, uint64_t seed) {
  RawImage im;
  im.dims = dims;
  im.extent = {9, 7, dims >= 3 ? 6 : 1, dims == 4 ? 4 : 1};
  im.spacing = {0.5, 1.0, 2.0, 0.25};
  im.origin = {-3.5, 12.0, 7.25, 0};
  if (dims >= 3) {
    const double c = std::cos(0.3), s = std::sin(0.3);
    im.direction = {c, 0, s, 0, 0, 1, 0, 0, -s, 0, c, 0, 0, 0, 0, 1};
  }
  im.type = type;
  im.values = random_for_type(im.voxels(), type, seed);
  return im;
}

void itk_write_nrrd(const std::string& path, const RawImage& image, bool compress) {
  itk::NrrdImageIO::Pointer io = itk::NrrdImageIO::New();
  io->SetFileName(path);
  describe(*io, image, image.dims, image.extent, image.origin);
  io->SetUseCompression(compress);
  const std::vector<char> buffer = native_values(image, 0, image.voxels());
  io->WriteImageInformation();
  io->Write(buffer.data());
}

std::vector<std::string> itk_write_dicom_series(const std::string& folder, const RawImage& image,
                                                const std::string& prefix) {
  if (image.dims != 3 || image.components != 1)
    throw std::invalid_argument("itk_write_dicom_series: a 3D scalar image");
  gdcm::Trace::WarningOff();
  // One GDCMImageIO for all slices: it makes the study and series UIDs once and keeps them.
  itk::GDCMImageIO::Pointer io = itk::GDCMImageIO::New();
  auto& tags = io->GetMetaDataDictionary();
  itk::EncapsulateMetaData<std::string>(tags, "0008|0060", "MR");
  itk::EncapsulateMetaData<std::string>(tags, "0008|0016", "1.2.840.10008.5.1.4.1.1.4");
  itk::EncapsulateMetaData<std::string>(tags, "0028|0004", "MONOCHROME2");
  const int64_t slice_voxels = image.extent[0] * image.extent[1];
  std::vector<std::string> paths;
  for (int64_t z = 0; z < image.extent[2]; ++z) {
    std::array<double, kMaxDims> origin = image.origin;
    for (int r = 0; r < 3; ++r)
      origin[r] += static_cast<double>(z) * image.spacing[2] * image.direction[r * kMaxDims + 2];
    const std::string path =
        folder + "/" + prefix + std::to_string(image.extent[2] - 1 - z) + ".dcm";
    io->SetFileName(path);
    describe(*io, image, 3, {image.extent[0], image.extent[1], 1, 1}, origin);
    const std::vector<char> buffer = native_values(image, z * slice_voxels, slice_voxels);
    io->WriteImageInformation();
    io->Write(buffer.data());
    paths.push_back(path);
  }
  return paths;
}

}  // namespace ndconv::test
