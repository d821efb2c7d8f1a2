// ndconv_io's NRRD and DICOM readers against files written by ITK's own writers
// (format_fixtures.h): values and geometry exact for attached raw and gzip .nrrd, detached .nhdr,
// 2D/3D/4D; NRRD written by ndconv read back; hostile NRRD headers refused before ITK reads them
// (data file outside the header's folder, absurd sizes, bad type or encoding, non-finite geometry);
// a DICOM series read from a folder or a @list in slice order, and the series ndconv must refuse;
// a compressed .mha whose length field was written after its data, read by ITK's MetaIO.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "io/image.h"
#include "format_fixtures.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

void expect_image(const io::Image& got, const RawImage& want) {
  expect_geometry(got.info.geometry, want, 1e-12);
  EXPECT_EQ(got.info.component_type, want.type);
  ASSERT_EQ(got.planes.size(), 1u);
  ASSERT_EQ(static_cast<int64_t>(got.planes[0].size()), want.voxels());
  for (int64_t v = 0; v < want.voxels(); ++v)
    ASSERT_EQ(got.planes[0][v], static_cast<float>(want.values[v])) << "voxel " << v;
}

// The IoError reading `input` throws: from its header alone, or with `pixels` from reading it all.
std::string read_error(const std::string& input, bool pixels) {
  try {
    pixels ? (void)io::read_image(input) : (void)io::read_info(input);
  } catch (const io::IoError& e) {
    return e.what();
  }
  return "(read without error)";
}

TEST(NrrdRead, ItkWrittenFilesEveryEncodingDimensionAndType) {
  TempDir dir;
  uint64_t seed = 1;
  for (const int dims : {2, 3, 4}) {
    for (const ComponentType type :
         {ComponentType::UInt8, ComponentType::Int16, ComponentType::Float32}) {
      const RawImage want = oriented_volume(dims, type, ++seed);
      for (const std::string name : {"raw.nrrd", "gzip.nrrd", "raw.nhdr", "gzip.nhdr"}) {
        SCOPED_TRACE(std::to_string(dims) + "D " + io::to_string(type) + " " + name);
        const std::string path = dir / (std::to_string(seed) + name);
        itk_write_nrrd(path, want, name.rfind("gzip", 0) == 0);
        expect_image(io::read_image(path), want);
        const io::ImageInfo info = io::read_info(path);
        EXPECT_EQ(info.format, "NrrdImageIO");
        EXPECT_EQ(info.geometry.extent, want.extent);
      }
    }
  }
}

TEST(NrrdWrite, NdconvWritesNrrdAndNhdrThatReadBackExactly) {
  TempDir dir;
  for (const int dims : {2, 3, 4}) {
    const RawImage want = oriented_volume(dims, ComponentType::Float32, 40 + dims);
    const std::string source = dir / ("in" + std::to_string(dims) + ".nrrd");
    itk_write_nrrd(source, want, false);
    const io::Image image = io::read_image(source);
    for (const std::string ext : {".nrrd", ".nhdr"}) {
      SCOPED_TRACE(std::to_string(dims) + "D " + ext);
      const std::string out = dir / ("out" + std::to_string(dims) + ext);
      io::write_image(out, image, ComponentType::Float32, false);
      expect_image(io::read_image(out), want);
    }
  }
  // Compressed, and the detached header names its data file by a name beside it.
  const std::string header = read_bytes(dir / "out3.nhdr");
  EXPECT_NE(header.find("encoding: gzip"), std::string::npos) << header;
  EXPECT_NE(header.find("data file: out3.raw.gz"), std::string::npos) << header;
  EXPECT_TRUE(fs::exists(dir / "out3.raw.gz"));
}

// A compressed .mha names its compressed length before the data, which ndconv writes as it is
// compressed: the length field is as wide as the length's bound, its digits right-aligned. Data
// that deflate shrinks well leaves blanks before the digits; ITK's MetaIO and ndconv read the
// file to the values written.
TEST(MetaImageWrite, CompressedLengthWrittenAfterTheDataReadsBack) {
  TempDir dir;
  RawImage want = oriented_volume(3, ComponentType::Float32, 77);
  for (size_t v = 0; v < want.values.size(); ++v)
    want.values[v] = static_cast<double>(v % 5);
  write_meta(dir / "in.mha", want);
  const io::Image image = io::read_image(dir / "in.mha");
  for (const int level : {1, 9}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const std::string out = dir / ("out" + std::to_string(level) + ".mha");
    io::WriteSettings settings;
    settings.compression = level;
    io::write_image(out, image, ComponentType::Float32, false, settings);
    const std::string file = read_bytes(out);
    const std::string key = "CompressedDataSize = ";
    const size_t at = file.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t eol = file.find('\n', at);
    const std::string field = file.substr(at + key.size(), eol - at - key.size());
    const size_t data_at = file.find("ElementDataFile = LOCAL\n") + 24;
    const std::string digits = std::to_string(file.size() - data_at);
    // Shrunk to fewer digits than its bound has: blanks, then the length of the data.
    ASSERT_GT(field.size(), digits.size()) << field;
    EXPECT_EQ(field, std::string(field.size() - digits.size(), ' ') + digits);
    const std::vector<float> itk = itk_read_metaimage(out);
    ASSERT_EQ(static_cast<int64_t>(itk.size()), want.voxels());
    for (int64_t v = 0; v < want.voxels(); ++v)
      ASSERT_EQ(itk[v], static_cast<float>(want.values[v])) << "voxel " << v;
    expect_image(io::read_image(out), want);
  }
}

TEST(NrrdWrite, DicomAndDetachedNamesWithPercentAreRefusedBeforeWriting) {
  EXPECT_THROW(io::check_output_format("/tmp/x.dcm", 2, 1, ComponentType::Int16), io::RequestError);
  EXPECT_THROW(io::check_output_format("/tmp/a%d.nhdr", 3, 1, ComponentType::Float32),
               io::RequestError);
  EXPECT_NO_THROW(io::check_output_format("/tmp/50%/a.nhdr", 3, 1, ComponentType::Float32));
  EXPECT_NO_THROW(io::check_output_format("/tmp/a%d.nrrd", 3, 1, ComponentType::Float32));
}

// A valid header for a 3D short volume of 4 x 3 x 2 with its data in `data file` (or attached
// when `data_file` is empty), with one field replaced, added or (an empty value) left out.
std::string nrrd_header(const std::string& data_file, const std::string& field = "",
                        const std::string& value = "") {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"type", "short"},
      {"dimension", "3"},
      {"sizes", "4 3 2"},
      {"space", "left-posterior-superior"},
      {"space directions", "(0.5,0,0) (0,0.75,0) (0,0,2)"},
      {"space origin", "(1,2,3)"},
      {"endian", "little"},
      {"encoding", "raw"}};
  if (!data_file.empty())
    fields.push_back({"data file", data_file});
  bool replaced = false;
  for (auto& [k, v] : fields) {
    if (k == field) {
      v = value;
      replaced = true;
    }
  }
  if (!field.empty() && !replaced)
    fields.push_back({field, value});
  std::string text = "NRRD0004\n";
  for (const auto& [k, v] : fields)
    if (!v.empty())  // an empty value leaves the field out
      text += k + ": " + v + "\n";
  return text;
}

const std::string kData(48, '\x01');

TEST(NrrdRead, HandWrittenHeaderAttachedAndDetached) {
  TempDir dir;
  write_bytes(dir / "a.nrrd", nrrd_header("") + "\n" + kData);
  write_bytes(dir / "d.raw", kData);
  write_bytes(dir / "d.nhdr", nrrd_header("d.raw"));
  fs::create_directory(dir / "sub");
  write_bytes(dir / "sub/d.raw", kData);
  write_bytes(dir / "s.nhdr", nrrd_header("sub/./d.raw"));
  for (const std::string name : {"a.nrrd", "d.nhdr", "s.nhdr"}) {
    SCOPED_TRACE(name);
    const io::Image image = io::read_image(dir / name);
    EXPECT_EQ(image.info.geometry.extent, (Index{4, 3, 2, 1}));
    EXPECT_EQ(image.info.geometry.spacing[1], 0.75);
    EXPECT_EQ(image.info.geometry.origin[2], 3.0);
    EXPECT_EQ(image.planes[0][23], 257.0f);
  }
}

// The encodings and layouts ITK's writer does not produce: ascii, hex, big-endian raw, data at
// the end of the file (byte skip -1), and a leading vector axis (the pixel's components).
TEST(NrrdRead, OtherEncodingsAndAVectorAxis) {
  TempDir dir;
  const RawImage want = oriented_volume(3, ComponentType::Int16, 31);
  std::string ascii, hex, big_endian;
  for (const double v : want.values) {
    const auto bits = static_cast<uint16_t>(static_cast<int16_t>(v));
    char text[16];
    std::snprintf(text, sizeof text, "%04x", bits);
    ascii += std::to_string(static_cast<int>(v)) + "\n";
    hex += text;
    big_endian += {static_cast<char>(bits >> 8), static_cast<char>(bits & 0xFF)};
  }
  const std::string header =
      "NRRD0005\n# written by hand\ntype: int16\ndimension: 3\nsizes: 9 7 6\nspace: "
      "left-posterior-superior\nspace directions: (0.5,0,0) (0,1,0) (0,0,2)\nendian: big\n";
  write_bytes(dir / "ascii.nrrd", header + "encoding: ascii\n\n" + ascii);
  write_bytes(dir / "hex.nrrd", header + "encoding: hex\n\n" + hex + "\n");
  write_bytes(dir / "big.nrrd", header + "encoding: raw\n\n" + big_endian);
  write_bytes(dir / "tail.nrrd", header + "encoding: raw\nbyte skip: -1\n\nskipped" + big_endian);
  for (const std::string name : {"ascii.nrrd", "hex.nrrd", "big.nrrd", "tail.nrrd"}) {
    SCOPED_TRACE(name);
    const io::Image image = io::read_image(dir / name);
    ASSERT_EQ(image.info.geometry.extent, want.extent);
    EXPECT_EQ(image.info.geometry.spacing[2], 2.0);
    for (int64_t v = 0; v < want.voxels(); ++v)
      ASSERT_EQ(image.planes[0][v], static_cast<float>(want.values[v])) << "voxel " << v;
  }

  std::string vectors;
  for (int v = 0; v < 3 * 24; ++v) {
    const float x = 0.5f * static_cast<float>(v) - 7.0f;
    vectors.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  write_bytes(dir / "vector.nrrd",
              "NRRD0004\ntype: float\ndimension: 4\nsizes: 3 4 3 2\nkinds: vector domain domain "
              "domain\nspace: left-posterior-superior\nspace directions: none (0.5,0,0) (0,0.75,0) "
              "(0,0,2)\nendian: little\nencoding: raw\n\n" +
                  vectors);
  const io::Image image = io::read_image(dir / "vector.nrrd");
  EXPECT_EQ(image.info.geometry.dims, 3);
  ASSERT_EQ(image.info.components, 3);
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 24; ++v)
      ASSERT_EQ(image.planes[c][v], 0.5f * static_cast<float>(3 * v + c) - 7.0f);
}

struct HostileNrrd {
  const char* label;
  std::string header;  ///< the .nhdr's text (or the .nrrd's with its data)
  const char* expected;
};

TEST(NrrdRead, HostileHeadersAreRefusedBeforeItkReadsThem) {
  TempDir dir;
  fs::create_directory(dir / "h");
  fs::create_directory(dir / "h/sub");
  write_bytes(dir / "outside.raw", kData);
  write_bytes(dir / "h/inside.raw", kData);
  fs::create_symlink(dir / "outside.raw", dir / "h/link.raw");
  fs::create_symlink("../outside.raw", dir / "h/relative_link.raw");
  ASSERT_EQ(::mkfifo((dir / "h/fifo.raw").c_str(), 0600), 0);
  const std::string attached_end = "\n" + kData;
  const HostileNrrd cases[] = {
      {"absolute", nrrd_header(dir / "outside.raw"), "is an absolute path"},
      {"absolute etc", nrrd_header("/etc/passwd"), "is an absolute path"},
      {"dot dot", nrrd_header("../outside.raw"), "is outside the header's folder"},
      {"dot dot back in", nrrd_header("../h/../outside.raw"), "is outside the header's folder"},
      {"symlink out", nrrd_header("link.raw"), "is outside the header's folder"},
      {"relative symlink out", nrrd_header("relative_link.raw"), "is outside the header's folder"},
      {"fifo", nrrd_header("fifo.raw"), "is not a regular file"},
      {"missing", nrrd_header("absent.raw"), "cannot be read"},
      {"its own folder", nrrd_header("."), "is outside the header's folder"},
      {"sub-folder", nrrd_header("sub"), "is not a regular file"},
      {"list", nrrd_header("LIST") + "inside.raw\n", "LIST"},
      {"pattern", nrrd_header("inside%s.raw 1 2 1"), "pattern"},
      {"absurd sizes", nrrd_header("inside.raw", "sizes", "100000 100000 100000"),
       "more than this machine can hold"},
      {"size zero", nrrd_header("inside.raw", "sizes", "4 0 2"), "is not a whole number"},
      {"negative size", nrrd_header("inside.raw", "sizes", "4 -3 2"), "is not a whole number"},
      {"size overflow", nrrd_header("inside.raw", "sizes", "4 3 99999999999999999999"),
       "is not a whole number"},
      {"sizes count", nrrd_header("inside.raw", "sizes", "4 3"), "gives 2 values for dimension 3"},
      {"dimension 1", nrrd_header("inside.raw", "dimension", "1"), "gives 3 values"},
      {"bad type", nrrd_header("inside.raw", "type", "block"), "type \"block\" is not supported"},
      {"unknown type", nrrd_header("inside.raw", "type", "quaternion"), "is not supported"},
      {"bzip2", nrrd_header("inside.raw", "encoding", "bzip2"), "encoding \"bzip2\""},
      {"nan spacing", nrrd_header("inside.raw", "space directions", "") + "spacings: 1 nan 1\n",
       "spacing \"nan\" of axis 1"},
      {"nan direction", nrrd_header("inside.raw", "space directions", "(nan,0,0) (0,1,0) (0,0,1)"),
       "not finite"},
      {"inf origin", nrrd_header("inside.raw", "space origin", "(1,inf,3)"), "not finite"},
      {"zero direction", nrrd_header("inside.raw", "space directions", "(0,0,0) (0,1,0) (0,0,1)"),
       "is zero"},
      {"truncated attached", nrrd_header("") + "\n" + kData.substr(0, 47), "holds only 47 bytes"},
      {"too many values for gzip",
       [] {
         std::string h = nrrd_header("", "encoding", "gzip");
         return h.replace(h.find("4 3 2"), 5, "1000 1000 1000");
       }() +
           "\nxx",
       "holds only"},
      {"not field value", nrrd_header("inside.raw") + "garbage line\n", "is not \"field: value\""},
      {"directions before space",
       "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 3 2\nspace directions: (1,0,0) (0,1,0) "
       "(0,0,1)\nspace: left-posterior-superior\nendian: little\nencoding: raw\n\n" +
           kData,
       "space directions comes before a space"},
      {"no data file", nrrd_header(""), "without a data file"},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    const bool attached =
        c.header.find("data file") == std::string::npos && std::string(c.label) != "no data file";
    const std::string path =
        dir / ("h/case" + std::to_string(n++) + (attached ? ".nrrd" : ".nhdr"));
    write_bytes(path, c.header);
    const std::string info_error = read_error(path, false);
    EXPECT_NE(info_error.find(c.expected), std::string::npos) << info_error;
    EXPECT_EQ(info_error, read_error(path, true));
    EXPECT_EQ(info_error.find('\n'), std::string::npos) << info_error;
    EXPECT_EQ(info_error.rfind(path, 0), 0u) << info_error;
  }
}

TEST(DicomSeries, FolderAndListReadInSlicePositionOrder) {
  TempDir dir;
  fs::create_directory(dir / "series");
  RawImage want = oriented_volume(3, ComponentType::Int16, 7);
  const auto files = itk_write_dicom_series(dir / "series", want, "im");
  // A file that is not DICOM is left out of the series, not an error.
  write_bytes(dir / "series/README.txt", "notes about the scan\n");
  const io::Image image = io::read_image(dir / "series");
  expect_image(image, want);
  EXPECT_EQ(image.info.format, "GDCMImageIO");
  const io::ImageInfo info = io::read_info(dir / "series");
  EXPECT_EQ(info.geometry.extent, want.extent);
  EXPECT_NEAR(info.geometry.spacing[2], want.spacing[2], 1e-9);

  // The same slices listed in another order, beside the list and under it.
  std::string list = "# slices of one series\n";
  for (size_t i = 0; i < files.size(); ++i)
    list += "series/" + fs::path(files[(i * 5) % files.size()]).filename().string() + "\n";
  write_bytes(dir / "slices.txt", list);
  expect_image(io::read_image("@" + (dir / "slices.txt")), want);
}

TEST(DicomSeries, RefusedSeriesNameTheProblem) {
  TempDir dir;
  const RawImage volume = oriented_volume(3, ComponentType::Int16, 11);
  auto folder = [&](const std::string& name) {
    fs::create_directory(dir / name);
    return dir / name;
  };
  const std::string two = folder("two");
  itk_write_dicom_series(two, volume, "a");
  itk_write_dicom_series(two, volume, "b");
  const std::string gap = folder("gap");
  const auto gap_files = itk_write_dicom_series(gap, volume, "s");
  fs::remove(gap_files[2]);
  const std::string fifo = folder("fifo");
  itk_write_dicom_series(fifo, volume, "s");
  ASSERT_EQ(::mkfifo((fifo + "/pipe").c_str(), 0600), 0);
  const std::string link = folder("link");
  itk_write_dicom_series(link, volume, "s");
  fs::create_symlink("/etc/passwd", link + "/passwd");
  const std::string empty = folder("empty");
  write_bytes(empty + "/notes.txt", "no DICOM here\n");
  write_bytes(dir / "outside.txt", two + "/a0.dcm\n");
  folder("lists");
  write_bytes(dir / "lists/out.txt", "../outside.txt\n");

  const std::pair<std::string, const char*> cases[] = {
      {two, "holds 2 DICOM series"},
      {gap, "a missing slice?"},
      {fifo, "\"pipe\", which is not a regular file"},
      {link, "is outside the header's folder"},
      {empty, "holds no DICOM series"},
      {"@" + (dir / "outside.txt"), "is an absolute path"},
      {"@" + (dir / "lists/out.txt"), "is outside the header's folder"},
      {"@" + (dir / "absent.txt"), "cannot read the slice list"},
  };
  for (const auto& [input, expected] : cases) {
    SCOPED_TRACE(input);
    const std::string e = read_error(input, true);
    EXPECT_NE(e.find(expected), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // Two series mixed in one list lie at the same positions.
  write_bytes(dir / "mixed.txt", "two/a0.dcm\ntwo/b0.dcm\ntwo/a1.dcm\n");
  const std::string e = read_error("@" + (dir / "mixed.txt"), true);
  EXPECT_NE(e.find("lie at the same position"), std::string::npos) << e;
}

// GDCM (built with assertions) aborts on a DICOM file whose first meta element has a bad VR; that
// file, alone or in a series, and a truncated slice GDCM would leave out, end in errors.
TEST(DicomSeries, CorruptFilesAreErrorsNotCrashes) {
  TempDir dir;
  const RawImage volume = oriented_volume(3, ComponentType::Int16, 23);
  fs::create_directory(dir / "aborts");
  break_dicom_meta_header(itk_write_dicom_series(dir / "aborts", volume, "s")[2],
                          dir / "alone.dcm");
  fs::create_directory(dir / "truncated");
  const auto truncated = itk_write_dicom_series(dir / "truncated", volume, "s");
  write_bytes(truncated[3], read_bytes(truncated[3]).substr(0, 700));

  const std::pair<std::string, const char*> cases[] = {
      {dir / "alone.dcm", "a corrupt DICOM file"},
      {dir / "aborts", "a corrupt DICOM file"},
      {dir / "truncated", "s2.dcm is marked as DICOM but GDCM cannot read it"},
  };
  for (const auto& [input, expected] : cases) {
    SCOPED_TRACE(input);
    for (const bool pixels : {false, true}) {
      const std::string e = read_error(input, pixels);
      EXPECT_NE(e.find(expected), std::string::npos) << e;
      EXPECT_EQ(e.rfind(input + ": ", 0), 0u) << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
  }
}

}  // namespace
}  // namespace ndconv::test
