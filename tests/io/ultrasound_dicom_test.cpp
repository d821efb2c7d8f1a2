// Issue 47: ultrasound DICOM that carries a 3D volume in one multi-frame file (the SOP classes
// GDCM reads through ITK's GDCMImageIO: Enhanced US Volume, Ultrasound Multi-frame Image), read
// beside today's series reader: one frame per slice, the values exact, a frame cut short refused.
// The files are written here by ITK's GDCM writer, which stores the voxel size as Pixel Spacing;
// GDCM takes an ultrasound file's voxel size from its Ultrasound Regions or functional groups
// instead, so the geometry of these generated files is not checked (docs/cli.md says so).
#include <gtest/gtest.h>

#include <string>

#include "format_fixtures.h"
#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

TEST(UltrasoundDicom, MultiFrameVolumesReadAsThreeDimensional) {
  TempDir dir;
  const RawImage raw = random_volume({24, 20, 7, 1}, io::ComponentType::UInt8, 21);
  const std::pair<const char*, const char*> classes[] = {
      {"enhanced_us_volume.dcm", "1.2.840.10008.5.1.4.1.1.6.2"},
      {"us_multiframe.dcm", "1.2.840.10008.5.1.4.1.1.3.1"}};
  for (const auto& [name, sop_class] : classes) {
    SCOPED_TRACE(name);
    const std::string path = dir / name;
    itk_write_dicom_volume(path, raw, "US", sop_class);
    const io::Image image = io::read_image(path);
    EXPECT_EQ(image.info.format, "GDCMImageIO");
    ASSERT_EQ(image.info.geometry.dims, 3);
    ASSERT_EQ(image.info.geometry.extent, raw.extent);
    ASSERT_EQ(image.planes.size(), 1u);
    for (int64_t v = 0; v < raw.voxels(); ++v)
      ASSERT_EQ(image.planes[0][v], static_cast<float>(raw.values[v])) << "voxel " << v;
    // A frame cut off the end is refused, not read as zeros.
    const std::string bytes = read_bytes(path);
    write_bytes(dir / "cut.dcm", bytes.substr(0, bytes.size() - 24 * 20));
    EXPECT_THROW(io::read_image(dir / "cut.dcm"), io::IoError);
  }
}

}  // namespace
}  // namespace ndconv::test
