// Ultrasound DICOM that carries a 3D volume in one multi-frame file (the SOP classes GDCM reads
// through ITK's GDCMImageIO: Enhanced US Volume, Ultrasound Multi-frame Image): one frame per
// slice, the values exact, a frame cut short refused; and the voxel size from where each IOD
// keeps it (io/dicom_ultrasound.h), on files written by ITK's GDCM writer and then given their
// functional groups or ultrasound regions with known spacings by GDCM's writer.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "format_fixtures.h"
#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

constexpr const char* kEnhancedUsVolume = "1.2.840.10008.5.1.4.1.1.6.2";
constexpr const char* kUsMultiFrame = "1.2.840.10008.5.1.4.1.1.3.1";

TEST(UltrasoundDicom, MultiFrameVolumesReadAsThreeDimensional) {
  TempDir dir;
  const RawImage raw = random_volume({24, 20, 7, 1}, io::ComponentType::UInt8, 21);
  const std::pair<const char*, const char*> classes[] = {
      {"enhanced_us_volume.dcm", kEnhancedUsVolume}, {"us_multiframe.dcm", kUsMultiFrame}};
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

DicomElement decimal(uint16_t group, uint16_t element, const std::string& text) {
  return {group, element, "DS", text, 0, {}};
}
DicomElement number(uint16_t group, uint16_t element, const char* vr, double value) {
  return {group, element, vr, "", value, {}};
}
DicomElement sequence(uint16_t group, uint16_t element,
                      std::vector<std::vector<DicomElement>> items) {
  return {group, element, "SQ", "", 0, std::move(items)};
}

// A Pixel Measures functional group: Pixel Spacing (rows\columns), Spacing Between Slices if given.
std::vector<DicomElement> pixel_measures(const std::string& pixel_spacing,
                                         const std::string& between = "") {
  std::vector<DicomElement> measures = {decimal(0x0028, 0x0030, pixel_spacing)};
  if (!between.empty())
    measures.push_back(decimal(0x0018, 0x0088, between));
  return {sequence(0x0028, 0x9110, {measures})};
}

DicomElement shared_groups(std::vector<DicomElement> group) {
  return sequence(0x5200, 0x9229, {std::move(group)});
}

// Each frame's position (Plane Position (Volume), or (Patient) with `patient`), z values along
// the direction (0, 0.6, 0.8); each frame's group also holds `extra` (e.g. its pixel measures).
DicomElement per_frame_groups(const std::vector<double>& z, bool patient,
                              const std::vector<std::vector<DicomElement>>& extra = {}) {
  std::vector<std::vector<DicomElement>> frames;
  for (size_t f = 0; f < z.size(); ++f) {
    char position[96];
    std::snprintf(position, sizeof position, "%.6f\\%.6f\\%.6f", 4.0, 0.6 * z[f], 0.8 * z[f]);
    std::vector<DicomElement> group = {
        patient ? sequence(0x0020, 0x9113, {{decimal(0x0020, 0x0032, position)}})
                : sequence(0x0020, 0x930e, {{decimal(0x0020, 0x9301, position)}})};
    if (f < extra.size())
      group.insert(group.end(), extra[f].begin(), extra[f].end());
    frames.push_back(group);
  }
  return sequence(0x5200, 0x9230, frames);
}

std::vector<double> evenly(double step, int frames = 7) {
  std::vector<double> z;
  for (int f = 0; f < frames; ++f)
    z.push_back(-1.5 + f * step);
  return z;
}

// An Ultrasound Region: spatial format (1: 2D, 2: M-mode), units X and Y (3: cm, 4: seconds),
// Physical Delta X and Y.
std::vector<DicomElement> region(int format, int units_x, int units_y, double dx, double dy) {
  return {number(0x0018, 0x6012, "US", format), number(0x0018, 0x6024, "US", units_x),
          number(0x0018, 0x6026, "US", units_y), number(0x0018, 0x602c, "FD", dx),
          number(0x0018, 0x602e, "FD", dy)};
}

class UltrasoundSpacing : public ::testing::Test {
 protected:
  // An ultrasound file of the SOP class with its top-level voxel size (ITK's writer puts 0.8 mm
  // there, where neither IOD keeps it) left in place, and `add` written into it.
  std::string write(const char* sop_class, const std::vector<DicomElement>& add) {
    RawImage raw = random_volume({24, 20, 7, 1}, io::ComponentType::UInt8, 5);
    raw.spacing = {0.8, 0.8, 0.8, 1};
    const std::string path = dir / ("us" + std::to_string(++files) + ".dcm");
    itk_write_dicom_volume(path, raw, "US", sop_class);
    rewrite_dicom(path, {}, add);
    return path;
  }
  static void expect_spacing(const io::ImageInfo& info, double x, double y, double z) {
    EXPECT_NEAR(info.geometry.spacing[0], x, 1e-9);
    EXPECT_NEAR(info.geometry.spacing[1], y, 1e-9);
    EXPECT_NEAR(info.geometry.spacing[2], z, 1e-6);
  }
  TempDir dir;
  int files = 0;
};

TEST_F(UltrasoundSpacing, EnhancedVolumeFromPixelMeasuresAndFramePositions) {
  // Shared pixel measures, Spacing Between Slices and positions 0.5 apart agreeing.
  io::Image image =
      io::read_image(write(kEnhancedUsVolume, {shared_groups(pixel_measures("0.3\\0.25", "0.5")),
                                               per_frame_groups(evenly(0.5), false)}));
  expect_spacing(image.info, 0.25, 0.3, 0.5);
  EXPECT_EQ(image.info.spatial_unit_unknown, "");
  // Per-frame pixel measures, patient positions 0.7 apart, no Spacing Between Slices.
  const std::vector<std::vector<DicomElement>> measures(7, pixel_measures("0.4\\0.35"));
  io::ImageInfo info =
      io::read_info(write(kEnhancedUsVolume, {per_frame_groups(evenly(0.7), true, measures)}));
  expect_spacing(info, 0.35, 0.4, 0.7);
  EXPECT_EQ(info.spatial_unit_unknown, "");
  // Spacing Between Slices alone.
  info =
      io::read_info(write(kEnhancedUsVolume, {shared_groups(pixel_measures("0.3\\0.25", "1.5"))}));
  expect_spacing(info, 0.25, 0.3, 1.5);
  EXPECT_EQ(info.spatial_unit_unknown, "");
}

TEST_F(UltrasoundSpacing, EnhancedVolumeMissingVoxelSizeIsOneAndSaid) {
  // Only the top-level attributes ITK wrote: not where the IOD keeps the voxel size.
  io::ImageInfo info = io::read_info(write(kEnhancedUsVolume, {}));
  expect_spacing(info, 1, 1, 1);
  EXPECT_NE(info.spatial_unit_unknown.find("without Pixel Measures"), std::string::npos)
      << info.spatial_unit_unknown;
  // Frames at positions that repeat (two volumes in time): the frame axis's spacing unknown.
  info = io::read_info(
      write(kEnhancedUsVolume, {shared_groups(pixel_measures("0.3\\0.25", "0.5")),
                                per_frame_groups({0, 0.5, 1, 0, 0.5, 1, 1.5}, false)}));
  expect_spacing(info, 0.25, 0.3, 1);
  EXPECT_NE(info.spatial_unit_unknown.find("not evenly spaced"), std::string::npos)
      << info.spatial_unit_unknown;
}

TEST_F(UltrasoundSpacing, EnhancedVolumeContradictionsAreRefused) {
  const auto refused = [&](const std::vector<DicomElement>& add, const std::string& what) {
    try {
      (void)io::read_info(write(kEnhancedUsVolume, add));
      ADD_FAILURE() << "accepted; expected an error about " << what;
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused({shared_groups(pixel_measures("0.3\\0.25", "0.5")), per_frame_groups(evenly(0.7), false)},
          "Spacing Between Slices (0.5) and its frames' positions (0.7 apart) disagree");
  std::vector<std::vector<DicomElement>> measures(7, pixel_measures("0.4\\0.35"));
  measures[3] = pixel_measures("0.4\\0.5");
  refused({per_frame_groups(evenly(0.7), true, measures)}, "different Pixel Spacing");
  refused({shared_groups(pixel_measures("0\\0.25"))}, "Pixel Spacing 0\\0.25 is not a voxel size");
  refused({shared_groups(pixel_measures("-0.3\\0.25"))}, "is not a voxel size");
  refused({shared_groups(pixel_measures("0.3\\0.25", "inf"))}, "not a list of numbers");
  refused({shared_groups(pixel_measures("0.3\\0.25x"))}, "not a list of numbers");
  refused({shared_groups(pixel_measures("0.3"))}, "is not two numbers");
}

TEST_F(UltrasoundSpacing, MultiFrameFromTheTwoDimensionalRegionsInCentimetres) {
  // A 2D region in cm (0.02 x 0.03 cm) beside an M-mode region with other deltas (not spatial).
  io::ImageInfo info = io::read_info(write(
      kUsMultiFrame,
      {sequence(0x0018, 0x6011, {region(1, 3, 3, 0.02, 0.03), region(2, 4, 3, 0.004, 0.5)})}));
  expect_spacing(info, 0.2, 0.3, 1);
  EXPECT_EQ(info.spatial_unit_unknown, "");
  // Two 2D regions of the same scale.
  info = io::read_info(write(
      kUsMultiFrame,
      {sequence(0x0018, 0x6011, {region(1, 3, 3, 0.02, 0.03), region(1, 3, 3, 0.02, 0.03)})}));
  expect_spacing(info, 0.2, 0.3, 1);
}

TEST_F(UltrasoundSpacing, MultiFrameWithoutSpatialRegionIsOneAndSaid) {
  for (const std::vector<DicomElement>& add :
       {std::vector<DicomElement>{},
        std::vector<DicomElement>{sequence(0x0018, 0x6011, {region(2, 4, 3, 0.004, 0.5)})},
        std::vector<DicomElement>{sequence(0x0018, 0x6011, {region(1, 0, 0, 0.02, 0.03)})}}) {
    const io::ImageInfo info = io::read_info(write(kUsMultiFrame, add));
    expect_spacing(info, 1, 1, 1);
    EXPECT_NE(info.spatial_unit_unknown.find("without a 2D region in centimetres"),
              std::string::npos)
        << info.spatial_unit_unknown;
  }
}

TEST_F(UltrasoundSpacing, MultiFrameContradictionsAreRefused) {
  const auto refused = [&](const std::vector<std::vector<DicomElement>>& regions,
                           const std::string& what) {
    try {
      (void)io::read_info(write(kUsMultiFrame, {sequence(0x0018, 0x6011, regions)}));
      ADD_FAILURE() << "accepted; expected an error about " << what;
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused({region(1, 3, 3, 0.02, 0.03), region(1, 3, 3, 0.04, 0.03)},
          "2D ultrasound regions give different Physical Delta X/Y");
  refused({region(1, 3, 3, -0.02, 0.03)}, "is not a voxel size");
  refused({region(1, 3, 3, 0.02, 0)}, "is not a voxel size");
}

}  // namespace
}  // namespace ndconv::test
