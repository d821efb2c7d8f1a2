#include "format_fixtures.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "io/pixel_convert.h"

#include "gdcmReader.h"
#include "gdcmSequenceOfItems.h"
#include "gdcmTrace.h"
#include "gdcmWriter.h"
#include "itkGDCMImageIO.h"
#include "itkMetaDataObject.h"
#include "itkMetaImageIO.h"
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

void expect_geometry(const io::Geometry& got, const RawImage& want, double tolerance) {
  ASSERT_EQ(got.dims, want.dims);
  for (int a = 0; a < want.dims; ++a) {
    EXPECT_EQ(got.extent[a], want.extent[a]) << "axis " << a;
    EXPECT_NEAR(got.spacing[a], want.spacing[a], tolerance) << "axis " << a;
    EXPECT_NEAR(got.origin[a], want.origin[a], tolerance) << "axis " << a;
    for (int r = 0; r < want.dims; ++r)
      EXPECT_NEAR(got.direction[r * kMaxDims + a], want.direction[r * kMaxDims + a], tolerance)
          << "row " << r << " axis " << a;
  }
}

std::vector<float> itk_read_metaimage(const std::string& path) {
  auto meta = itk::MetaImageIO::New();
  meta->SetFileName(path);
  meta->ReadImageInformation();
  if (meta->GetNumberOfComponents() != 1 || meta->GetComponentType() != itk::IOComponentEnum::FLOAT)
    throw std::runtime_error(path + ": not a scalar float32 MetaImage");
  itk::ImageIORegion region(meta->GetNumberOfDimensions());
  for (unsigned a = 0; a < meta->GetNumberOfDimensions(); ++a) {
    region.SetIndex(a, 0);
    region.SetSize(a, meta->GetDimensions(a));
  }
  meta->SetIORegion(region);
  std::vector<float> values(meta->GetImageSizeInPixels());
  meta->Read(values.data());
  return values;
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

void itk_write_dicom_volume(const std::string& path, const RawImage& image,
                            const std::string& modality, const std::string& sop_class) {
  if (image.dims != 3 || image.components != 1)
    throw std::invalid_argument("itk_write_dicom_volume: a 3D scalar image");
  gdcm::Trace::WarningOff();
  itk::GDCMImageIO::Pointer io = itk::GDCMImageIO::New();
  auto& tags = io->GetMetaDataDictionary();
  itk::EncapsulateMetaData<std::string>(tags, "0008|0060", modality);
  itk::EncapsulateMetaData<std::string>(tags, "0008|0016", sop_class);
  itk::EncapsulateMetaData<std::string>(tags, "0028|0004", "MONOCHROME2");
  io->SetFileName(path);
  describe(*io, image, 3, image.extent, image.origin);
  const std::vector<char> buffer = native_values(image, 0, image.voxels());
  io->WriteImageInformation();
  io->Write(buffer.data());
}

namespace {

gdcm::DataElement dicom_element(const DicomElement& e) {
  gdcm::DataElement de(gdcm::Tag(e.group, e.element));
  std::string bytes;
  if (e.vr == "DS") {
    de.SetVR(gdcm::VR::DS);
    bytes = e.text + (e.text.size() % 2 ? " " : "");
  } else if (e.vr == "US") {
    de.SetVR(gdcm::VR::US);
    const auto v = static_cast<uint16_t>(e.number);
    bytes = {static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
  } else if (e.vr == "FD") {
    de.SetVR(gdcm::VR::FD);
    bytes.resize(sizeof(double));
    std::memcpy(bytes.data(), &e.number, sizeof(double));  // little endian, as the file
  } else if (e.vr == "SQ") {
    de.SetVR(gdcm::VR::SQ);
    gdcm::SmartPointer<gdcm::SequenceOfItems> sq = new gdcm::SequenceOfItems;
    sq->SetLengthToUndefined();
    for (const std::vector<DicomElement>& nested : e.items) {
      gdcm::Item item;
      item.SetVLToUndefined();
      for (const DicomElement& n : nested)
        item.GetNestedDataSet().Replace(dicom_element(n));
      sq->AddItem(item);
    }
    de.SetValue(*sq);
    de.SetVLToUndefined();
    return de;
  } else {
    throw std::invalid_argument("rewrite_dicom: VR " + e.vr);
  }
  de.SetByteValue(bytes.data(), static_cast<uint32_t>(bytes.size()));
  return de;
}

}  // namespace

void rewrite_dicom(const std::string& path,
                   const std::vector<std::pair<uint16_t, uint16_t>>& remove,
                   const std::vector<DicomElement>& add) {
  gdcm::Reader reader;
  reader.SetFileName(path.c_str());
  if (!reader.Read())
    throw std::invalid_argument("rewrite_dicom: GDCM cannot read " + path);
  gdcm::DataSet& ds = reader.GetFile().GetDataSet();
  for (const auto& [group, element] : remove)
    ds.Remove(gdcm::Tag(group, element));
  for (const DicomElement& e : add)
    ds.Replace(dicom_element(e));
  gdcm::Writer writer;
  writer.SetFileName(path.c_str());
  writer.SetFile(reader.GetFile());
  if (!writer.Write())
    throw std::invalid_argument("rewrite_dicom: GDCM cannot write " + path);
}

void break_dicom_meta_header(const std::string& path, const std::string& copy) {
  std::string bytes = read_bytes(path);
  if (bytes.size() < 140 || bytes.compare(128, 4, "DICM") != 0)
    throw std::invalid_argument("break_dicom_meta_header: not a DICOM Part 10 file: " + path);
  bytes[136] = '\xFF';  // the first letter of the VR of (0002,0000)
  write_bytes(path, bytes);
  if (!copy.empty())
    write_bytes(copy, bytes);
}

}  // namespace ndconv::test
