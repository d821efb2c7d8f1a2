// End-to-end: headers that do not say in which unit their voxel sizes or time step are. Lengths
// given in mm on such a file are read with the spacing taken as millimetres and one warning per
// input says so; lengths in voxels need no unit and get no warning. A time sigma in seconds on a
// series without a time step or without a time unit is refused (frames work). The files are
// written by the tests (NIfTI-1, NIfTI-2, NRRD, PNG through `ndconv convert`).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include "cli_run.h"
#include "io/image.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// 9 x 7 (x 6 (x 3)) voxels, spacing 0.5 x 1 x 2 (x 0.25), random float32 values.
RawImage random_image(int dims) {
  return oriented_volume(dims, io::ComponentType::Float32, fresh_seed());
}

// NIfTI-1: xyzt_units is byte 123, pixdim[4] (the time step) a float at byte 92.
std::string nifti1(const TempDir& dir, const std::string& name, const RawImage& im,
                   unsigned char xyzt_units) {
  const std::string path = dir / name;
  write_nifti(path, im);
  patch_field<unsigned char>(path, 123, xyzt_units);
  return path;
}

constexpr unsigned char kMm = 2, kSeconds = 8;
const char* const kSpatialWarning = "spatial units unknown";

TEST(CliUnits, UnknownSpatialUnitsWarnOnceWhenLengthsAreInMillimetres) {
  TempDir dir;
  const RawImage im = random_image(3);
  const std::string unknown = nifti1(dir, "unknown.nii", im, 0);
  const std::string known = nifti1(dir, "known.nii", im, kMm);

  CliResult r = run_ndconv({"smooth", unknown, dir / "a.nii", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 1) << r.err;
  EXPECT_NE(r.err.find(unknown + ": spatial units unknown (xyzt_units 0); spacing 0.5 x 1 x 2 "
                                 "read as millimetres"),
            std::string::npos)
      << r.err;

  // The assumption is ITK's: the same values as the file whose unit is mm.
  r = run_ndconv({"smooth", known, dir / "b.nii", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "a.nii").planes, io::read_image(dir / "b.nii").planes);

  // Lengths in voxels need no unit.
  r = run_ndconv({"smooth", unknown, dir / "c.nii", "--sigma", "2vox"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 0) << r.err;
  r = run_ndconv({"median", unknown, dir / "d.nii", "--radius", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 0) << r.err;
}

TEST(CliUnits, EveryFilterTakingMillimetresWarnsOncePerInput) {
  TempDir dir;
  const std::string unknown = nifti1(dir, "unknown.nii", random_image(3), 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"mean", "--box", "3"},
        std::vector<std::string>{"mean", "--sphere", "2"},
        std::vector<std::string>{"gradient", "--sigma", "1"},
        std::vector<std::string>{"laplacian", "--sigma", "1"},
        std::vector<std::string>{"unsharp", "--sigma", "1"}}) {
    std::vector<std::string> command = args;
    command.insert(command.begin() + 1, {unknown, dir / (args[0] + args[1] + ".nii")});
    const CliResult r = run_ndconv(command);
    ASSERT_EQ(r.code, 0) << args[0] << " " << r.err;
    EXPECT_EQ(count_of(r.err, kSpatialWarning), 1) << args[0] << " " << args[1] << ": " << r.err;
  }
  // A batch: one warning for each input.
  const std::string second = nifti1(dir, "second.nii", random_image(3), 0);
  ASSERT_EQ(::mkdir((dir / "batch").c_str(), 0755), 0);
  const CliResult r = run_ndconv({"smooth", unknown, second, "-o", dir / "batch", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 2) << r.err;
  EXPECT_EQ(count_of(r.err, unknown + ": spatial"), 1) << r.err;
  EXPECT_EQ(count_of(r.err, second + ": spatial"), 1) << r.err;
}

TEST(CliUnits, NiftiTwoWithUnknownUnitsWarnsToo) {
  TempDir dir;
  const std::string path = dir / "two.nii";
  write_nifti2(path, random_image(3));
  patch_field<int32_t>(path, 500, 0);  // NIfTI-2's xyzt_units
  CliResult r = run_ndconv({"smooth", path, dir / "o.nii", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, path + ": spatial units unknown (xyzt_units 0)"), 1) << r.err;
  patch_field<int32_t>(path, 500, kMm);
  r = run_ndconv({"smooth", path, dir / "p.nii", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, kSpatialWarning), 0) << r.err;
}

TEST(CliUnits, NrrdSpaceUnitsOtherThanMillimetresWarn) {
  TempDir dir;
  const RawImage im = random_image(3);
  std::vector<float> values(im.values.begin(), im.values.end());
  auto write = [&](const std::string& name, const std::string& units_line) {
    std::string text =
        "NRRD0004\ntype: float\ndimension: 3\nspace: left-posterior-superior\nsizes: 9 7 6\n"
        "space directions: (0.5,0,0) (0,1,0) (0,0,2)\n" +
        units_line + "kinds: domain domain domain\nendian: little\nencoding: raw\n\n";
    text.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    write_bytes(dir / name, text);
    return dir / name;
  };
  const std::string metres = write("metres.nrrd", "space units: \"m\" \"m\" \"m\"\n");
  CliResult r = run_ndconv({"smooth", metres, dir / "a.nii", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, metres + ": spatial units unknown (NRRD space units \"m\" \"m\" \"m\", "
                                     "not applied by ITK)"),
            1)
      << r.err;
  for (const std::string& line :
       {std::string("space units: \"mm\" \"mm\" \"mm\"\n"), std::string()}) {
    const std::string path = write("mm.nrrd", line);
    r = run_ndconv({"smooth", path, dir / "b.nii", "--sigma", "1", "--force"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(count_of(r.err, kSpatialWarning), 0) << line << r.err;
  }
}

TEST(CliUnits, PngHasNoSpatialUnit) {
  TempDir dir;
  const RawImage im = oriented_volume(2, io::ComponentType::UInt8, fresh_seed());
  write_meta(dir / "flat.mha", im);
  CliResult r = run_ndconv({"convert", dir / "flat.mha", dir / "flat.png", "--type", "uint8"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_ndconv({"smooth", dir / "flat.png", dir / "a.mha", "--sigma", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, dir / "flat.png: spatial units unknown (PNG file)"), 1) << r.err;
}

TEST(CliUnits, TimeSigmaInSecondsNeedsATimeStepAndItsUnit) {
  TempDir dir;
  const RawImage im = random_image(4);
  // Time unit 0: the step 0.25 could be seconds or milliseconds.
  const std::string no_unit = nifti1(dir, "no_unit.nii", im, kMm);
  CliResult r =
      run_ndconv({"smooth", no_unit, dir / "a.nii", "--sigma", "1", "--time-sigma", "1s"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("ndconv: error: " + no_unit +
                       ": the time unit is unknown (xyzt_units 2, time step 0.25 in no stated "
                       "unit); give --time-sigma in frames"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(dir / "a.nii"));
  r = run_ndconv({"smooth", no_unit, dir / "b.nii", "--sigma", "1", "--time-sigma", "2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;

  // A time step of 0.
  const std::string no_step = nifti1(dir, "no_step.nii", im, kMm | kSeconds);
  patch_field<float>(no_step, 92, 0.0f);
  r = run_ndconv({"smooth", no_step, dir / "c.nii", "--sigma", "1", "--time-sigma", "1s"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(no_step + ": the time step is 0; give --time-sigma in frames"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(dir / "c.nii"));

  // Both units known: seconds work without a word.
  const std::string known = nifti1(dir, "known.nii", im, kMm | kSeconds);
  r = run_ndconv({"smooth", known, dir / "d.nii", "--sigma", "1", "--time-sigma", "1s"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(CliUnits, InfoSaysWhichUnitIsUnknown) {
  TempDir dir;
  const std::string space = nifti1(dir, "space.nii", random_image(3), 0);
  CliResult r = run_ndconv({"info", space, "--header-only"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("spacing:     0.5 x 1 x 2 mm (unit unknown: xyzt_units 0)\n"),
            std::string::npos)
      << r.out;
  const std::string time = nifti1(dir, "time.nii", random_image(4), kMm);
  r = run_ndconv({"info", time, "--header-only"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("spacing:     0.5 x 1 x 2 mm\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time step:   0.25 (spacing of axis t; unit unknown: xyzt_units 2)"),
            std::string::npos)
      << r.out;
}

TEST(CliUnits, ASigmaOfOneTapWarns) {
  TempDir dir;
  const std::string path = nifti1(dir, "in.nii", random_image(3), kMm);
  const CliResult r = run_ndconv({"smooth", path, dir / "a.nii", "--sigma", "0.05vox"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("is a single tap"), std::string::npos) << r.err;
  // Along time the sigma is in frames.
  const std::string series = nifti1(dir, "series.nii", random_image(4), kMm | kSeconds);
  const CliResult t =
      run_ndconv({"smooth", series, dir / "b.nii", "--sigma", "1", "--time-sigma", "0.01s"});
  EXPECT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.err.find("sigma 0.04 frames along t is a single tap"), std::string::npos) << t.err;
}

}  // namespace
}  // namespace ndconv::test
