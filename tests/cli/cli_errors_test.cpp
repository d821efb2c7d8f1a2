// Every bad input of issue 3: a one-line error naming the file (or option) and what is wrong,
// exit code 2 for usage errors and 1 for failed work, and no output file (nor any temporary file)
// left behind. An existing output is untouched without --force.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "cli_run.h"
#include "io/image.h"
#include "ndconv/engine.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

RawImage volume(int dims, uint64_t seed) {
  RawImage im;
  im.dims = dims;
  im.extent = {8, 7, dims >= 3 ? 5 : 1, dims == 4 ? 2 : 1};
  im.values = random_for_type(im.voxels(), ComponentType::Float32, seed);
  return im;
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;  ///< "@" + name: a path in the test folder
  int code;
  std::vector<std::string> expected;  ///< substrings of the error line ("@" expands too)
};

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = fresh_seed();
    write_meta(dir / "in.mha", volume(3, seed));
    write_meta(dir / "in4d.mha", volume(4, seed + 1));
    write_meta(dir / "in2d.mha", volume(2, seed + 2));
    RawImage k2 = volume(2, seed + 3);
    k2.extent = {3, 3, 1, 1};
    k2.values.resize(9, 0.5);
    write_meta(dir / "k2d.mha", k2);
    RawImage big = volume(3, seed + 4);
    big.extent = {33, 1, 1, 1};
    big.values.assign(33, 1.0);
    write_meta(dir / "kbig.mha", big);
    RawImage zero = volume(3, seed + 5);
    zero.extent = {2, 1, 1, 1};
    zero.values = {1.0, -1.0};
    write_meta(dir / "kzero.mha", zero);
    RawImage rgb = volume(3, seed + 6);
    rgb.extent = {3, 3, 3, 1};
    rgb.components = 3;
    rgb.values.assign(81, 1.0);
    write_meta(dir / "kvector.mha", rgb);
    write_meta(dir / "one.mha", volume(3, seed), 1);
    write_meta(dir / "five.mha", volume(3, seed), 5);
    write_nifti(dir / "complex.nii", volume(3, seed), false, 0, 0, 32);
    write_bytes(dir / "text.nii.gz", "hello, this is not an image at all, only some text\n");
    write_bytes(dir / "empty.mha", "");
    write_bytes(dir / "huge.mha",
                "ObjectType = Image\nNDims = 3\nDimSize = 100000 100000 100000\n"
                "ElementType = MET_FLOAT\nElementDataFile = LOCAL\n");
    write_bytes(dir / "garbage.mha", "ObjectType = Image\nNDims = 3\nDimSize = 4 banana\n");
    io::write_image(dir / "full.nii.gz", io::read_image(dir / "in.mha"), ComponentType::Float32,
                    false);
    const std::string gz = read_bytes(dir / "full.nii.gz");
    write_bytes(dir / "truncated.nii.gz", gz.substr(0, gz.size() * 2 / 3));
    fs::remove(dir / "full.nii.gz");
    fs::create_directory(dir / "folder.nii");
    write_bytes(dir / "afile", "x");
    before_ = dir.list();
  }

  std::string expand(const std::string& s) const { return s[0] == '@' ? dir / s.substr(1) : s; }

  void check(const BadCase& c) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> args;
    for (const auto& a : c.args)
      args.push_back(expand(a));
    const CliResult r = run_ndconv(args);
    EXPECT_EQ(r.code, c.code) << r.err;
    // exactly one line, the error
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_EQ(r.err.rfind("ndconv: error: ", 0), 0u) << r.err;
    for (const auto& e : c.expected)
      EXPECT_NE(r.err.find(expand(e)), std::string::npos)
          << "expected '" << expand(e) << "' in: " << r.err;
    // nothing was created in the test folder
    EXPECT_EQ(dir.list(), before_);
  }

  TempDir dir;
  std::vector<std::string> before_;
};

TEST_F(CliErrors, BadInputFiles) {
  const std::string out = "@out.nii.gz";
  const BadCase cases[] = {
      {"missing input",
       {"smooth", "@nope.nii", out, "--sigma", "1"},
       1,
       {"@nope.nii", "No such file"}},
      {"input is a folder",
       {"smooth", "@folder.nii", out, "--sigma", "1"},
       1,
       {"@folder.nii", "is a folder"}},
      {"empty file", {"smooth", "@empty.mha", out, "--sigma", "1"}, 1, {"@empty.mha", "empty"}},
      {"not an image",
       {"smooth", "@text.nii.gz", out, "--sigma", "1"},
       1,
       {"@text.nii.gz", "not an image"}},
      {"truncated",
       {"smooth", "@truncated.nii.gz", out, "--sigma", "1"},
       1,
       {"@truncated.nii.gz", "truncated"}},
      {"corrupt header", {"smooth", "@garbage.mha", out, "--sigma", "1"}, 1, {"@garbage.mha"}},
      {"header claims a huge size",
       {"smooth", "@huge.mha", out, "--sigma", "1"},
       1,
       {"@huge.mha", "corrupt header"}},
      {"1D", {"smooth", "@one.mha", out, "--sigma", "1"}, 1, {"@one.mha", "1D image"}},
      {"5D", {"info", "@five.mha"}, 1, {"@five.mha", "5D image"}},
      {"complex pixels",
       {"convolve", "@complex.nii", "@k2d.mha", out},
       1,
       {"@complex.nii", "complex"}},
      {"kernel dimension",
       {"convolve", "@in.mha", "@k2d.mha", out},
       1,
       {"@k2d.mha", "kernel is 2D", "3D"}},
      {"kernel 2D on 4D",
       {"convolve", "@in4d.mha", "@k2d.mha", out},
       1,
       {"@k2d.mha", "or 3D to filter each frame"}},
      {"kernel too large",
       {"convolve", "@in.mha", "@kbig.mha", out},
       1,
       {"@kbig.mha", "33 taps", "limit"}},
      {"kernel not scalar",
       {"convolve", "@in.mha", "@kvector.mha", out},
       1,
       {"@kvector.mha", "scalar"}},
      {"missing kernel",
       {"convolve", "@in.mha", "@nokernel.mha", out},
       1,
       {"@nokernel.mha", "No such file"}},
      {"normalize zero sum",
       {"convolve", "@in.mha", "@kzero.mha", out, "--normalize"},
       1,
       {"@kzero.mha", "sums to 0"}},
  };
  for (const auto& c : cases)
    check(c);
}

TEST_F(CliErrors, BadOptionValues) {
  const std::string in = "@in.mha", out = "@out.nii.gz";
  const BadCase cases[] = {
      {"sigma 0", {"smooth", in, out, "--sigma", "0"}, 2, {"--sigma 0", "greater than 0"}},
      {"sigma 0 per axis", {"smooth", in, out, "--sigma", "0x0x0"}, 2, {"greater than 0"}},
      {"negative sigma", {"smooth", in, out, "--sigma", "-1"}, 2, {"--sigma -1", "negative"}},
      {"negative per-axis", {"smooth", in, out, "--sigma", "1x-1x1"}, 2, {"negative"}},
      {"non-numeric sigma", {"smooth", in, out, "--sigma", "abc"}, 2, {"--sigma abc", "number"}},
      {"non-numeric part", {"smooth", in, out, "--sigma", "1x?x2"}, 2, {"'?' is not a number"}},
      {"wrong count",
       {"smooth", in, out, "--sigma", "1x2"},
       2,
       {"--sigma", "2 values", "@in.mha", "3 spatial axes"}},
      {"wrong count 4D",
       {"smooth", "@in4d.mha", out, "--sigma", "1x1x1x1"},
       2,
       {"4 values", "3 spatial axes"}},
      {"unknown unit", {"smooth", in, out, "--sigma", "2cm"}, 2, {"unknown unit 'cm'"}},
      {"missing value", {"smooth", in, out, "--sigma", "1x"}, 2, {"missing"}},
      {"negative fwhm", {"smooth", in, out, "--fwhm", "-3"}, 2, {"--fwhm", "negative"}},
      {"sigma and fwhm", {"smooth", in, out, "--sigma", "1", "--fwhm", "2"}, 2, {"--fwhm"}},
      {"neither", {"smooth", in, out}, 2, {"--sigma or --fwhm"}},
      {"time sigma on 3D",
       {"smooth", in, out, "--sigma", "1", "--time-sigma", "1"},
       2,
       {"--time-sigma", "@in.mha", "3D"}},
      {"bad time sigma",
       {"smooth", "@in4d.mha", out, "--sigma", "1", "--time-sigma", "2m"},
       2,
       {"--time-sigma 2m"}},
      {"zero time sigma",
       {"smooth", "@in4d.mha", out, "--sigma", "1", "--time-sigma", "0s"},
       2,
       {"greater than 0"}},
      {"truncate 0", {"smooth", in, out, "--sigma", "1", "--truncate", "0"}, 2, {"--truncate"}},
      {"truncate text", {"smooth", in, out, "--sigma", "1", "--truncate", "x"}, 2, {"--truncate"}},
      {"sigma too large",
       {"smooth", in, out, "--sigma", "500vox", "--method", "exact"},
       2,
       {"limit"}},
      {"unknown boundary",
       {"convolve", in, "@k2d.mha", out, "--boundary", "wrap"},
       2,
       {"--boundary"}},
      {"unknown region", {"convolve", in, "@k2d.mha", out, "--region", "full"}, 2, {"--region"}},
      {"unknown type",
       {"smooth", in, out, "--sigma", "1", "--type", "complex"},
       2,
       {"unknown type 'complex'"}},
      {"unknown device",
       {"smooth", in, out, "--sigma", "1", "--device", "gpu"},
       2,
       {"--device", "gpu"}},
      {"bad KO",
       {"smooth", in, out, "--sigma", "1", "--outputs-per-thread", "0"},
       2,
       {"--outputs-per-thread"}},
      {"KO the backend lacks",
       {"smooth", in, out, "--sigma", "1", "--outputs-per-thread", "63", "--device", "cpu",
        "--quiet"},
       2,
       {"--outputs-per-thread", "63"}},
      {"negative threads",
       {"smooth", in, out, "--sigma", "1", "--threads", "-2"},
       2,
       {"--threads"}},
      {"missing output argument", {"smooth", in, "--sigma", "1"}, 2, {"OUT"}},
      {"unknown option", {"smooth", in, out, "--sigma", "1", "--bogus"}, 2, {"--bogus"}},
      {"unknown subcommand", {"blur", in, out}, 2, {"blur"}},
      {"no subcommand", {}, 2, {"subcommand"}},
      {"PNG cannot hold 3D",
       {"smooth", in, "@out.png", "--sigma", "1"},
       2,
       {"@out.png", "cannot hold a 3D image"}},
      {"PNG cannot hold float",
       {"smooth", "@in2d.mha", "@out.png", "--sigma", "1", "--type", "float"},
       2,
       {"@out.png", "holds only uint8, uint16"}},
      {"unknown extension",
       {"smooth", in, "@out.xyz", "--sigma", "1"},
       2,
       {"@out.xyz", "unknown output format"}},
      {"preview not PNG-able",
       {"smooth", in, out, "--sigma", "1", "--preview", "@p.txt"},
       2,
       {"@p.txt"}},
  };
  for (const auto& c : cases)
    check(c);
}

TEST_F(CliErrors, BadOutputPaths) {
  const BadCase cases[] = {
      {"missing folder",
       {"smooth", "@in.mha", "@no/such/out.nii", "--sigma", "1"},
       1,
       {"@no/such/out.nii", "does not exist"}},
      {"parent is a file",
       {"smooth", "@in.mha", "@afile/out.nii", "--sigma", "1"},
       1,
       {"@afile/out.nii", "not a folder"}},
      {"output is a folder",
       {"smooth", "@in.mha", "@folder.nii", "--sigma", "1", "--force"},
       1,
       {"@folder.nii", "is a folder"}},
      {"read-only place",
       {"smooth", "@in.mha", "/proc/ndconv_out.nii", "--sigma", "1"},
       1,
       {"/proc/ndconv_out.nii", "cannot write"}},
      {"preview in missing folder",
       {"smooth", "@in.mha", "@out.nii", "--sigma", "1", "--preview", "@no/p.png"},
       1,
       {"@no/p.png", "does not exist"}},
  };
  for (const auto& c : cases)
    check(c);
}

TEST_F(CliErrors, FolderWithoutWritePermission) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root: permissions do not stop root (the read-only case is "
                    "covered by BadOutputPaths)";
  fs::create_directory(dir / "locked");
  ::chmod((dir / "locked").c_str(), 0555);
  before_ = dir.list();
  check({"no write permission",
         {"smooth", "@in.mha", "@locked/out.nii", "--sigma", "1"},
         1,
         {"@locked/out.nii", "cannot write", "Permission denied"}});
  ::chmod((dir / "in.mha").c_str(), 0);
  check({"unreadable input",
         {"smooth", "@in.mha", "@out.nii", "--sigma", "1"},
         1,
         {"@in.mha", "Permission denied"}});
}

TEST_F(CliErrors, ExistingOutputIsUntouchedWithoutForce) {
  write_bytes(dir / "out.nii.gz", "precious");
  write_bytes(dir / "p.png", "picture");
  before_ = dir.list();
  check({"existing output",
         {"smooth", "@in.mha", "@out.nii.gz", "--sigma", "1"},
         2,
         {"@out.nii.gz", "exists", "--force"}});
  check({"existing preview",
         {"smooth", "@in.mha", "@new.nii.gz", "--sigma", "1", "--preview", "@p.png"},
         2,
         {"@p.png", "exists"}});
  EXPECT_EQ(read_bytes(dir / "out.nii.gz"), "precious");
  EXPECT_EQ(read_bytes(dir / "p.png"), "picture");
  const std::string input = read_bytes(dir / "in.mha");
  check({"output is the input",
         {"smooth", "@in.mha", "@in.mha", "--sigma", "1"},
         2,
         {"@in.mha", "is the input", "--force"}});
  check({"output is the input by another name",
         {"smooth", "@in.mha", dir.path() + "/./in.mha", "--sigma", "1"},
         2,
         {"is the input"}});
  EXPECT_EQ(read_bytes(dir / "in.mha"), input);
  // With --force both are replaced, and nothing else appears.
  CliResult r = run_ndconv(
      {"smooth", dir / "in.mha", dir / "out.nii.gz", "--sigma", "1", "--force", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::read_info(dir / "out.nii.gz").geometry.dims, 3);
  r = run_ndconv({"smooth", dir / "in.mha", dir / "in.mha", "--sigma", "1", "--force", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read_bytes(dir / "in.mha"), input);
  EXPECT_EQ(dir.list(), before_);
}

// A MetaImage header (text only) with the given extents, element type and ElementDataFile; the
// lines after it (LIST entries) are `tail`.
std::string meta_header(const std::string& dim_size, const std::string& type,
                        const std::string& data_file, const std::string& tail = "") {
  const int ndims = 1 + static_cast<int>(std::count(dim_size.begin(), dim_size.end(), ' '));
  return "ObjectType = Image\nNDims = " + std::to_string(ndims) + "\nDimSize = " + dim_size +
         "\nElementType = " + type + "\nElementDataFile = " + data_file + "\n" + tail;
}

// Issue 30, class 1: a header must not make ndconv read files the user did not name.
TEST_F(CliErrors, DataFilesOutsideTheHeaderFolderAreRefused) {
  fs::create_directory(dir / "sub");
  write_bytes(dir / "secret.raw", std::string(64, 's'));
  write_bytes(dir / "sl1.raw", std::string(16, 's'));
  write_bytes(dir / "sl2.raw", std::string(16, 's'));
  write_bytes(dir / "sub/inside.raw", std::string(64, 'i'));
  write_bytes(dir / "sub/slice0.raw", std::string(16, 'i'));
  fs::create_symlink("../secret.raw", dir / "sub/link.raw");
  fs::create_symlink("inside.raw", dir / "sub/near.raw");
  const std::string passwd = "/etc/passwd";
  const auto passwd_size = fs::exists(passwd) ? fs::file_size(passwd) : 64;
  write_bytes(dir / "sub/abs.mhd",
              meta_header(std::to_string(passwd_size) + " 1", "MET_UCHAR", passwd));
  write_bytes(dir / "sub/up.mhd", meta_header("4 4 4", "MET_UCHAR", "../secret.raw"));
  write_bytes(dir / "sub/sym.mhd", meta_header("4 4 4", "MET_UCHAR", "link.raw"));
  write_bytes(dir / "sub/list.mhd",
              meta_header("4 4 2", "MET_UCHAR", "LIST", "slice0.raw\n../secret.raw\n"));
  write_bytes(dir / "sub/pattern.mhd", meta_header("4 4 2", "MET_UCHAR", "../sl%d.raw 1 2 1"));
  write_bytes(dir / "sub/fine.mhd", meta_header("4 4 4", "MET_UCHAR", "near.raw"));
  // A NIfTI pair whose .img is a link out of the folder.
  RawImage pair = volume(3, fresh_seed());
  pair.type = ComponentType::UInt8;
  for (double& v : pair.values)
    v = std::abs(std::fmod(v, 200.0));
  write_nifti(dir / "whole.nii", pair);
  std::string nii = read_bytes(dir / "whole.nii");
  fs::remove(dir / "whole.nii");
  std::string hdr = nii.substr(0, 348);
  std::memcpy(&hdr[344], "ni1", 4);
  const float zero = 0;
  std::memcpy(&hdr[108], &zero, 4);
  write_bytes(dir / "sub/pair.hdr", hdr);
  write_bytes(dir / "secret.img", nii.substr(352));
  fs::create_symlink("../secret.img", dir / "sub/pair.img");
  before_ = dir.list();

  const std::string out = "@out.nii.gz", rule = "outside the header's folder";
  const BadCase cases[] = {
      {"absolute",
       {"smooth", "@sub/abs.mhd", out, "--sigma", "1"},
       1,
       {"@sub/abs.mhd", passwd, rule, "--allow-external-data"}},
      {"..", {"smooth", "@sub/up.mhd", out, "--sigma", "1"}, 1, {"../secret.raw", rule}},
      {"symbolic link out",
       {"smooth", "@sub/sym.mhd", out, "--sigma", "1"},
       1,
       {"link.raw", "secret.raw", rule}},
      {"LIST entry", {"smooth", "@sub/list.mhd", out, "--sigma", "1"}, 1, {"../secret.raw", rule}},
      {"slice pattern",
       {"smooth", "@sub/pattern.mhd", out, "--sigma", "1"},
       1,
       {"../sl1.raw", rule}},
      {"NIfTI pair",
       {"smooth", "@sub/pair.hdr", out, "--sigma", "1"},
       1,
       {"@sub/pair.hdr", "pair.img", rule}},
      {"as the kernel", {"convolve", "@in.mha", "@sub/up.mhd", out}, 1, {"@sub/up.mhd", rule}},
      {"info", {"info", "@sub/list.mhd", "--header-only"}, 1, {rule}},
  };
  for (const auto& c : cases)
    check(c);

  // Inside the folder (also through a link that stays inside) is read as before, and the
  // opt-in reads the others.
  CliResult r = run_ndconv({"info", dir / "sub/fine.mhd"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_ndconv({"info", dir / "sub/up.mhd", "--allow-external-data"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("value range: 115 .. 115"), std::string::npos) << r.out;  // 's'
  r = run_ndconv({"smooth", dir / "sub/pair.hdr", dir / "out.nii", "--sigma", "1vox", "--quiet",
                  "--allow-external-data"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "out.nii"));
}

// Issue 30, classes 2, 7 and 9: header fields ITK, MetaIO or niftilib would trust are checked
// first, and refused with a message that names the field.
TEST_F(CliErrors, HeaderFieldsAreCheckedBeforeItkReadsThem) {
  write_bytes(dir / "pct_s.mhd", meta_header("4 4 2", "MET_UCHAR", "slice%s.raw 1 2 1"));
  write_bytes(dir / "pct_n.mhd", meta_header("4 4 2", "MET_UCHAR", "slice%n%n.raw"));
  write_bytes(dir / "a%s%n.mhd", meta_header("4 4 4", "MET_UCHAR", "a%s%n.raw"));
  write_bytes(dir / "string.mha",
              meta_header("4 4 4", "MET_STRING", "LOCAL") + std::string(64, 'x'));
  write_bytes(dir / "noend.mha",
              "ObjectType = Image\nNDims = 3\nDimSize = 4 4 4\n"
              "ElementType = MET_UCHAR\n");
  write_bytes(dir / "nandir.mha", meta_header("4 4 4", "MET_UCHAR", "LOCAL")
                                          .insert(0, "TransformMatrix = 1 0 0 0 nan 0 0 0 1\n") +
                                      std::string(64, 'x'));
  // NIfTI-1 variants of a good file, patched byte by byte.
  write_nifti(dir / "good.nii", volume(3, fresh_seed()));
  const std::string good = read_bytes(dir / "good.nii");
  fs::remove(dir / "good.nii");
  auto patched = [&](const std::string& name, size_t offset, const void* value, size_t n,
                     int16_t sform_code = 0) {
    std::string b = good;
    std::memcpy(&b[offset], value, n);
    if (sform_code)
      std::memcpy(&b[254], &sform_code, 2);
    write_bytes(dir / name, b);
  };
  const float nan = std::nanf(""), inf = INFINITY, inside = 100, negative = -352;
  patched("nansform.nii", 280, &nan, 4, 1);
  patched("infsform.nii", 300, &inf, 4, 1);
  const float near_max = 3.4e38f;
  patched("hugesform.nii", 292, &near_max, 4, 1);
  patched("nanpixdim.nii", 80, &nan, 4);
  patched("voxinside.nii", 108, &inside, 4);
  patched("voxnegative.nii", 108, &negative, 4);
  // NIfTI-2 whose dim[5] (components) does not fit in 32 bits: read as 2 if wrapped.
  write_nifti2(dir / "wide.nii", volume(3, fresh_seed()));
  std::string n2 = read_bytes(dir / "wide.nii");
  const int64_t ndim = 5, wrapping = (int64_t{1} << 32) + 2;
  std::memcpy(&n2[16], &ndim, 8);
  std::memcpy(&n2[16 + 8 * 5], &wrapping, 8);
  write_bytes(dir / "wide.nii", n2);
  before_ = dir.list();

  const std::string out = "@out.nii.gz";
  const BadCase cases[] = {
      {"%s pattern",
       {"smooth", "@pct_s.mhd", out, "--sigma", "1"},
       1,
       {"@pct_s.mhd", "ElementDataFile", "single %d"}},
      {"%n pattern", {"info", "@pct_n.mhd"}, 1, {"@pct_n.mhd", "single %d"}},
      {"% in the input name", {"info", "@a%s%n.mhd"}, 1, {"@a%s%n.mhd", "single %d"}},
      {"MET_STRING",
       {"smooth", "@string.mha", out, "--sigma", "1"},
       1,
       {"@string.mha", "MET_STRING", "not a pixel type"}},
      {"malformed header",
       {"info", "@noend.mha"},
       1,
       {"@noend.mha", "malformed MetaImage header", "no ElementDataFile"}},
      {"NaN direction", {"info", "@nandir.mha"}, 1, {"TransformMatrix", "not a finite number"}},
      {"NaN sform",
       {"smooth", "@nansform.nii", out, "--sigma", "1"},
       1,
       {"@nansform.nii", "sform", "NaN, Inf"}},
      {"Inf sform", {"info", "@infsform.nii"}, 1, {"sform", "NaN, Inf"}},
      {"sform offset near FLT_MAX (niftilib loops on it)",
       {"info", "@hugesform.nii"},
       1,
       {"sform", "beyond +-1e15"}},
      {"NaN pixdim", {"info", "@nanpixdim.nii"}, 1, {"pixdim[1]", "finite"}},
      {"vox_offset inside the header",
       {"info", "@voxinside.nii"},
       1,
       {"vox_offset = 100", "inside the header"}},
      {"negative vox_offset", {"info", "@voxnegative.nii"}, 1, {"vox_offset"}},
      {"NIfTI-2 extent wrapping 32 bits",
       {"info", "@wide.nii"},
       1,
       {"@wide.nii", "dim[5] = 4294967298", "2147483647"}},
      {"absurd sigma",
       {"smooth", "@in.mha", out, "--sigma", "1e300"},
       2,
       {"--sigma", "1e+300 voxels along axis 0", "1023 taps"}},
      {"device as input", {"info", "/dev/zero"}, 1, {"/dev/zero", "device", "regular files"}},
  };
  for (const auto& c : cases)
    check(c);
  // A % in a name is harmless where nothing formats it.
  write_meta(dir / "b%d%s.mha", volume(3, fresh_seed()));
  const CliResult r = run_ndconv({"info", dir / "b%d%s.mha", "--header-only"});
  EXPECT_EQ(r.code, 0) << r.err;
}

// Issue 30, class 7: a 4D NIfTI with a time step of 0 says so, and --time-sigma in seconds on
// it is an error, not a silent step of 1.
TEST_F(CliErrors, ZeroTimeStepIsReportedNotReplaced) {
  RawImage series = volume(4, fresh_seed());
  series.spacing[3] = 0;
  write_nifti(dir / "t0.nii", series);
  before_ = dir.list();
  const CliResult r = run_ndconv({"info", dir / "t0.nii", "--header-only"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("time step:   0 "), std::string::npos) << r.out;
  check({"seconds on a zero step",
         {"smooth", "@t0.nii", "@out.nii", "--sigma", "1", "--time-sigma", "1s"},
         1,
         {"@t0.nii", "time step is 0"}});
}

TEST_F(CliErrors, CudaRequestedWithoutUsableGpuFailsCleanly) {
  // Asked of the command, not of this process: CUDA started here would stay in this process's
  // memory, which the memory tests measure their children against.
  const CliResult version = run_ndconv({"--version"});
  ASSERT_EQ(version.code, 0) << version.err;
  if (version.out.find("GPU: none") == std::string::npos &&
      version.out.find("CUDA: not compiled in") == std::string::npos)
    GTEST_SKIP() << "a GPU is usable here";
  check({"--device cuda",
         {"smooth", "@in.mha", "@out.nii", "--sigma", "1", "--device", "cuda"},
         1,
         {"CUDA backend unavailable"}});
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// Damaged files of every format (random bytes, bytes flipped in the header, cut short) must
// end in exit code 0 or 1, never in a crash (a signal gives 128 + its number) or a hang.
TEST(CliRobustness, DamagedFilesNeverCrash) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  io::Image pic;
  pic.info.geometry.dims = 2;
  pic.info.geometry.extent = {24, 16, 1, 1};
  pic.info.pixel_kind = "scalar";
  pic.planes.emplace_back(24 * 16);
  for (int v = 0; v < 24 * 16; ++v)
    pic.planes[0][v] = static_cast<float>(v % 251);
  io::Image vol = pic;
  vol.info.geometry.dims = 3;
  vol.info.geometry.extent = {8, 6, 4, 1};
  vol.planes[0].resize(8 * 6 * 4);
  const std::pair<const char*, const io::Image*> formats[] = {
      {".nii", &vol}, {".nii.gz", &vol}, {".mha", &vol}, {".png", &pic},
      {".jpg", &pic}, {".tif", &pic},    {".bmp", &pic}};
  for (const auto& [ext, image] : formats) {
    const std::string good = dir / (std::string("good") + ext);
    io::write_image(good, *image, io::ComponentType::UInt8, true);
    const std::string bytes = read_bytes(good);
    for (int trial = 0; trial < 12; ++trial) {
      std::string bad = bytes;
      if (trial == 0) {
        for (char& b : bad)
          b = static_cast<char>(rng());
      } else if (trial < 3) {
        bad.resize(rng() % bad.size());
      } else {
        const size_t span = std::min<size_t>(bad.size(), 400);
        for (int k = 0; k < 1 + trial % 4; ++k)
          bad[rng() % span] = static_cast<char>(rng());
      }
      const std::string path = dir / (std::string("bad") + ext);
      write_bytes(path, bad);
      SCOPED_TRACE(std::string(ext) + " trial " + std::to_string(trial));
      const CliResult r = run_ndconv({"smooth", path, dir / "out.mha", "--sigma", "1vox", "--force",
                                      "--quiet", "--device", "cpu"});
      EXPECT_TRUE(r.code == 0 || r.code == 1) << "exit " << r.code << ": " << r.err;
      if (r.code == 1) {
        EXPECT_EQ(r.err.rfind("ndconv: error: ", 0), 0u) << r.err;
      }
    }
  }
}

}  // namespace
}  // namespace ndconv::test
