// What a header says about the unit of its spacing and time step (io::ImageInfo's
// spatial_unit_unknown and time_unit_unknown), from NIfTI-1 and NIfTI-2 headers written by the
// tests, and NIfTI-2 voxel sizes in metres or microns read as ITK reads NIfTI-1's.
#include <gtest/gtest.h>

#include <cstdint>

#include "io/image.h"
#include "io/nrrd_header.h"
#include "test_data.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

RawImage image(int dims) {
  return oriented_volume(dims, io::ComponentType::Float32, fresh_seed());
}

// NIfTI-1's xyzt_units is a byte at 123, NIfTI-2's an int32 at 500.
io::ImageInfo with_units(const TempDir& dir, int version, int dims, int units) {
  const std::string path = dir / ("v" + std::to_string(version) + "_" + std::to_string(dims) +
                                  "d_" + std::to_string(units) + ".nii");
  if (version == 1) {
    write_nifti(path, image(dims));
    patch_field<unsigned char>(path, 123, static_cast<unsigned char>(units));
  } else {
    write_nifti2(path, image(dims));
    patch_field<int32_t>(path, 500, units);
  }
  return io::read_info(path);
}

TEST(Units, NiftiSaysWhichUnitIsUnknown) {
  TempDir dir;
  for (int version : {1, 2}) {
    SCOPED_TRACE(version);
    io::ImageInfo i = with_units(dir, version, 3, 0);
    EXPECT_EQ(i.spatial_unit_unknown, "xyzt_units 0");
    EXPECT_EQ(i.time_unit_unknown, "");            // 3D: no time step
    EXPECT_DOUBLE_EQ(i.geometry.spacing[2], 2.0);  // read as millimetres
    i = with_units(dir, version, 4, 2);            // mm, no time unit
    EXPECT_EQ(i.spatial_unit_unknown, "");
    EXPECT_EQ(i.time_unit_unknown, "xyzt_units 2");
    EXPECT_DOUBLE_EQ(i.geometry.spacing[3], 0.25);
    i = with_units(dir, version, 4, 2 | 16);  // mm, ms
    EXPECT_EQ(i.spatial_unit_unknown, "");
    EXPECT_EQ(i.time_unit_unknown, "");
    EXPECT_DOUBLE_EQ(i.geometry.spacing[3], 0.25e-3);
  }
}

TEST(Units, NiftiTwoScalesMetresAndMicronsAsItkDoesNiftiOne) {
  TempDir dir;
  for (int units : {1, 3}) {
    const io::ImageInfo one = with_units(dir, 1, 3, units), two = with_units(dir, 2, 3, units);
    for (int a = 0; a < 3; ++a) {
      EXPECT_DOUBLE_EQ(two.geometry.spacing[a], one.geometry.spacing[a]) << units << " " << a;
      EXPECT_DOUBLE_EQ(two.geometry.origin[a], one.geometry.origin[a]) << units << " " << a;
    }
    EXPECT_DOUBLE_EQ(one.geometry.spacing[0], units == 1 ? 500.0 : 0.5e-3);
  }
}

TEST(Units, NrrdSpaceUnitsInMillimetres) {
  EXPECT_TRUE(io::space_units_are_mm(""));
  EXPECT_TRUE(io::space_units_are_mm("\"mm\" \"mm\" \"mm\""));
  EXPECT_TRUE(io::space_units_are_mm("\"millimeters\" \"MM\""));
  EXPECT_FALSE(io::space_units_are_mm("\"m\" \"m\" \"m\""));
  EXPECT_FALSE(io::space_units_are_mm("\"mm\" \"mm\" \"um\""));
}

}  // namespace
}  // namespace ndconv::test
