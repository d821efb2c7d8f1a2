// `ndconv convert`: values, type and geometry carried over between formats; the default keeps the
// stored type, and a scaled NIfTI's values (float32) unrounded; an existing output is left alone.
#include <gtest/gtest.h>

#include "cli_run.h"
#include "io/image.h"

namespace ndconv::test {
namespace {

RawImage uint8_sequence() {
  RawImage im;
  im.dims = 4;
  im.extent = {7, 6, 5, 3};
  im.spacing = {0.5, 0.6, 0.7, 0.04};
  im.type = io::ComponentType::UInt8;
  im.values = random_for_type(im.voxels(), im.type, 17);
  return im;
}

TEST(CliConvert, KeepsTypeValuesAndGeometryAcrossFormats) {
  TempDir dir;
  const RawImage im = uint8_sequence();
  write_nifti(dir / "in.nii", im);
  for (const char* ext : {".mha", ".nii.gz", ".nii"}) {
    const std::string out = dir / (std::string("out") + ext);
    const CliResult r = run_ndconv({"convert", dir / "in.nii", out, "-q"});
    ASSERT_EQ(r.code, 0) << r.err;
    const io::Image in = io::read_image(dir / "in.nii");
    const io::Image got = io::read_image(out);
    EXPECT_EQ(got.info.component_type, io::ComponentType::UInt8) << ext;
    EXPECT_EQ(got.info.geometry.extent, in.info.geometry.extent) << ext;
    for (int a = 0; a < 4; ++a)
      EXPECT_NEAR(got.info.geometry.spacing[a], in.info.geometry.spacing[a], 1e-6) << ext;
    EXPECT_EQ(got.planes, in.planes) << ext;
  }
}

TEST(CliConvert, TypeOptionGivesFloat32) {
  TempDir dir;
  write_nifti(dir / "in.nii", uint8_sequence());
  const CliResult r = run_ndconv({"convert", dir / "in.nii", dir / "out.mha", "--type", "float"});
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image got = io::read_image(dir / "out.mha");
  EXPECT_EQ(got.info.component_type, io::ComponentType::Float32);
  EXPECT_EQ(got.planes, io::read_image(dir / "in.nii").planes);
}

TEST(CliConvert, ScaledNiftiKeepsItsScaledValues) {
  TempDir dir;
  write_nifti(dir / "in.nii", uint8_sequence(), false, 0.5, 0.25);
  const CliResult r = run_ndconv({"convert", dir / "in.nii", dir / "out.nii.gz"});
  ASSERT_EQ(r.code, 0) << r.err;
  const io::Image in = io::read_image(dir / "in.nii");
  const io::Image got = io::read_image(dir / "out.nii.gz");
  EXPECT_EQ(got.info.component_type, io::ComponentType::Float32);
  EXPECT_EQ(got.planes, in.planes);
  EXPECT_EQ(in.planes[0][0], static_cast<float>(0.5 * uint8_sequence().values[0] + 0.25));
}

TEST(CliConvert, ExistingOutputIsLeftAlone) {
  TempDir dir;
  write_nifti(dir / "in.nii", uint8_sequence());
  write_bytes(dir / "out.mha", "mine");
  const CliResult r = run_ndconv({"convert", dir / "in.nii", dir / "out.mha"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(read_bytes(dir / "out.mha"), "mine");
}

}  // namespace
}  // namespace ndconv::test
