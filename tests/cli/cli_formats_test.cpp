// End-to-end NRRD and DICOM through the `ndconv` binary, on files written by ITK's own writers
// (tests/io/format_fixtures.h): `smooth` on .nrrd and .nhdr gives the values it gives on the same
// volume as .nii and keeps the geometry (4D time step too); `info` describes both formats; a
// DICOM series given as a folder or @list is smoothed like the same volume as NRRD; ultrasound
// DICOM's voxel size from its regions, or 1 with a warning; hostile
// NRRD headers and refused series end with one `ndconv: error:` line, exit 1 and no output.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "cli_run.h"
#include "io/image.h"
#include "format_fixtures.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

void smooth(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"smooth", "--quiet", "--device", test_device()};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_ndconv(args);
  ASSERT_EQ(r.code, 0) << r.err;
}

void expect_same_values(const io::Image& got, const io::Image& want) {
  ASSERT_EQ(got.planes.size(), want.planes.size());
  ASSERT_EQ(got.planes[0].size(), want.planes[0].size());
  for (size_t v = 0; v < want.planes[0].size(); ++v)
    ASSERT_EQ(got.planes[0][v], want.planes[0][v]) << "voxel " << v;
}

TEST(CliFormats, SmoothOnNrrdAndNhdrEqualsSmoothOnNiftiAndKeepsGeometry) {
  TempDir dir;
  const RawImage in = oriented_volume(3, ComponentType::Float32, 5);
  write_nifti(dir / "in.nii", in);
  itk_write_nrrd(dir / "in.nrrd", in, false);
  itk_write_nrrd(dir / "in.nhdr", in, true);
  smooth({"--sigma", "1.5", dir / "in.nii", dir / "nii_out.nii"});
  const io::Image reference = io::read_image(dir / "nii_out.nii");
  for (const std::string input : {"in.nrrd", "in.nhdr"}) {
    for (const std::string output : {"out.nrrd", "out.nhdr"}) {
      SCOPED_TRACE(input + " -> " + output);
      const std::string out = dir / (input.substr(3, 4) + "_" + output);
      smooth({"--sigma", "1.5", dir / input, out});
      const io::Image result = io::read_image(out);
      EXPECT_EQ(result.info.format, "NrrdImageIO");
      expect_geometry(result.info.geometry, in, 1e-9);
      expect_same_values(result, reference);
    }
  }
}

TEST(CliFormats, FourDimensionalNrrdKeepsItsTimeStep) {
  TempDir dir;
  const RawImage in = oriented_volume(4, ComponentType::Int16, 9);
  itk_write_nrrd(dir / "in.nrrd", in, true);
  write_nifti(dir / "in.nii", in);
  // 0.5 s at a time step of 0.25 s is 2 frames.
  smooth({"--sigma", "1vox", "--time-sigma", "0.5s", dir / "in.nrrd", dir / "out.nrrd"});
  smooth({"--sigma", "1vox", "--time-sigma", "2", dir / "in.nii", dir / "out.nii"});
  const io::Image result = io::read_image(dir / "out.nrrd");
  expect_geometry(result.info.geometry, in, 1e-9);
  expect_same_values(result, io::read_image(dir / "out.nii"));
}

TEST(CliFormats, InfoDescribesNrrdAndADicomSeries) {
  TempDir dir;
  const RawImage in = oriented_volume(3, ComponentType::Int16, 13);
  itk_write_nrrd(dir / "in.nhdr", in, true);
  fs::create_directory(dir / "series");
  itk_write_dicom_series(dir / "series", in, "slice");
  for (const std::string input : {"in.nhdr", "series"}) {
    SCOPED_TRACE(input);
    const CliResult r = run_ndconv({"info", dir / input});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(input == "series" ? "GDCMImageIO" : "NrrdImageIO"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("9 x 7 x 6 (378 voxels)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("int16 scalar"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("spacing:     0.5 x 1 x 2 mm"), std::string::npos) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
}

TEST(CliFormats, UltrasoundDicomVoxelSizeIsTheRegionsOrOneWithAWarning) {
  TempDir dir;
  const RawImage in = random_volume({12, 10, 5, 1}, ComponentType::UInt8, 8);
  itk_write_dicom_volume(dir / "regions.dcm", in, "US", "1.2.840.10008.5.1.4.1.1.3.1");
  // A 2D region of 0.02 x 0.03 cm a pixel (spatial format 1, units 3: cm).
  std::vector<DicomElement> region;
  for (const auto& [element, vr, value] :
       std::vector<std::tuple<uint16_t, const char*, double>>{{0x6012, "US", 1},
                                                              {0x6024, "US", 3},
                                                              {0x6026, "US", 3},
                                                              {0x602c, "FD", 0.02},
                                                              {0x602e, "FD", 0.03}})
    region.push_back({0x0018, element, vr, "", value, {}});
  rewrite_dicom(dir / "regions.dcm", {}, {{0x0018, 0x6011, "SQ", "", 0, {region}}});
  const CliResult r = run_ndconv({"info", dir / "regions.dcm"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("spacing:     0.2 x 0.3 x 1 mm\n"), std::string::npos) << r.out;
  // Without regions: spacing 1, and a filter in mm says so.
  itk_write_dicom_volume(dir / "bare.dcm", in, "US", "1.2.840.10008.5.1.4.1.1.3.1");
  const CliResult s =
      run_ndconv({"smooth", dir / "bare.dcm", dir / "out.nii", "--sigma", "1", "--device", "cpu"});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.err.find("spatial units unknown (ultrasound image without a 2D region in "
                       "centimetres (Sequence of Ultrasound Regions)); spacing 1 x 1 x 1"),
            std::string::npos)
      << s.err;
}

TEST(CliFormats, DicomSeriesFromAFolderOrAListSmoothsLikeTheSameVolume) {
  TempDir dir;
  const RawImage in = oriented_volume(3, ComponentType::Int16, 17);
  fs::create_directory(dir / "series");
  const auto slices = itk_write_dicom_series(dir / "series", in, "im");
  itk_write_nrrd(dir / "in.nrrd", in, false);
  std::string list;
  for (auto it = slices.rbegin(); it != slices.rend(); ++it)
    list += "series/" + fs::path(*it).filename().string() + "\n";
  write_bytes(dir / "slices.txt", list);
  smooth({"--sigma", "1.2vox", dir / "in.nrrd", dir / "reference.nrrd"});
  const io::Image reference = io::read_image(dir / "reference.nrrd");
  for (const std::string& input : {dir / "series", "@" + (dir / "slices.txt")}) {
    SCOPED_TRACE(input);
    fs::remove(dir / "out.nii.gz");
    smooth({"--sigma", "1.2vox", input, dir / "out.nii.gz"});
    const io::Image result = io::read_image(dir / "out.nii.gz");
    expect_same_values(result, reference);
    // NIfTI holds the geometry in float32.
    for (int a = 0; a < 3; ++a) {
      EXPECT_NEAR(result.info.geometry.spacing[a], in.spacing[a], 1e-6);
      EXPECT_NEAR(result.info.geometry.origin[a], in.origin[a], 1e-5);
    }
  }
}

TEST(CliFormats, HostileNrrdAndRefusedSeriesGiveOneLineAndNoOutput) {
  TempDir dir;
  const std::string data(48, '\x02');
  write_bytes(dir / "outside.raw", data);
  fs::create_directory(dir / "h");
  fs::create_symlink(dir / "outside.raw", dir / "h/link.raw");
  const std::string header =
      "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 3 2\nendian: little\nencoding: raw\n";
  write_bytes(dir / "h/absolute.nhdr", header + "data file: " + (dir / "outside.raw") + "\n");
  write_bytes(dir / "h/dotdot.nhdr", header + "data file: ../outside.raw\n");
  write_bytes(dir / "h/symlink.nhdr", header + "data file: link.raw\n");
  write_bytes(dir / "h/absurd.nrrd",
              "NRRD0004\ntype: short\ndimension: 3\nsizes: 99999 99999 99999\nendian: "
              "little\nencoding: raw\n\n" +
                  data);
  write_bytes(dir / "h/type.nrrd",
              "NRRD0004\ntype: block\nblock size: 2\ndimension: 3\nsizes: 4 3 2\nencoding: "
              "raw\n\n" +
                  data);
  write_bytes(dir / "h/nan.nrrd", header + "spacings: 1 nan 1\n\n" + data);
  fs::create_directory(dir / "two");
  const RawImage in = oriented_volume(3, ComponentType::Int16, 21);
  itk_write_dicom_series(dir / "two", in, "a");
  itk_write_dicom_series(dir / "two", in, "b");
  fs::create_directory(dir / "corrupt");
  break_dicom_meta_header(itk_write_dicom_series(dir / "corrupt", in, "s")[0], dir / "h/one.dcm");

  const std::pair<std::string, const char*> cases[] = {
      {"h/absolute.nhdr", "is an absolute path"},
      {"h/dotdot.nhdr", "is outside the header's folder"},
      {"h/symlink.nhdr", "is outside the header's folder"},
      {"h/absurd.nrrd", "more than this machine can hold"},
      {"h/type.nrrd", "type \"block\" is not supported"},
      {"h/nan.nrrd", "spacing \"nan\" of axis 1"},
      {"two", "holds 2 DICOM series"},
      {"corrupt", "a corrupt DICOM file"},
      {"h/one.dcm", "a corrupt DICOM file"},
  };
  const auto before = dir.list();
  for (const auto& [input, expected] : cases) {
    for (const std::string command : {"smooth", "info"}) {
      SCOPED_TRACE(input + " " + command);
      std::vector<std::string> args = {command, dir / input};
      if (command == "smooth")
        args.insert(args.end(), {dir / "out.nrrd", "--sigma", "1", "--quiet"});
      const CliResult r = run_ndconv(args);
      EXPECT_EQ(r.code, 1) << r.err;
      EXPECT_EQ(r.err.rfind("ndconv: error: " + (dir / input) + ": ", 0), 0u) << r.err;
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
      EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_EQ(dir.list(), before);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
