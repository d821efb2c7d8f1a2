// Issue 48, class 1: one parser decides which file is read. ndconv parses NRRD and MetaImage
// headers itself and hands ITK a header rewritten from what it checked (io/itk_header_file.h);
// headers that NRRD or MetaImage readers could parse in more than one way are refused with a
// one-line error naming the file. Every hostile header here would, read by ITK's own parser,
// name the file outside.raw beside the header's folder (its bytes are 0x7F, the good data 0x01):
// the tests check both that such headers are refused and that what is read is never outside.raw.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/header_check.h"
#include "io/image.h"
#include "io/itk_header_file.h"
#include "io/nrrd_header.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;

const std::string kGood(48, '\x01');    // 4 x 3 x 2 shorts of 257
const std::string kSecret(48, '\x7f');  // what a header must not make ndconv read

std::string read_error(const std::string& path) {
  try {
    (void)io::read_image(path);
  } catch (const io::IoError& e) {
    return e.what();
  }
  return "(read without error)";
}

class OneParser : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir / "h");
    write_bytes(dir / "outside.raw", kSecret);
    write_bytes(dir / "h/inside.raw", kGood);
  }
  // Writes `text` as h/NAME and expects reading it to fail with `expected` in a one-line error
  // that starts with the file's path.
  void expect_refused(const std::string& name, const std::string& text,
                      const std::string& expected) {
    SCOPED_TRACE(name);
    const std::string path = dir / ("h/" + name);
    write_bytes(path, text);
    const std::string error = read_error(path);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_EQ(error.rfind(path, 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  // Writes `text` as h/NAME and expects it to read as the good data.
  void expect_good_data(const std::string& name, const std::string& text) {
    SCOPED_TRACE(name);
    const std::string path = dir / ("h/" + name);
    write_bytes(path, text);
    const io::Image image = io::read_image(path);
    ASSERT_EQ(image.info.geometry.voxel_count(), 24);
    for (int v = 0; v < 24; ++v)
      ASSERT_EQ(image.planes[0][v], 257.0f) << "voxel " << v;
  }
  TempDir dir;
};

const std::string kNrrdFields =
    "type: short\ndimension: 3\nsizes: 4 3 2\nspace: left-posterior-superior\n"
    "space directions: (1,0,0) (0,1,0) (0,0,1)\nendian: little\nencoding: raw\n";

TEST_F(OneParser, NrrdHeadersWithMoreThanOneReadingAreRefused) {
  // teem ends a line at a lone \r: "content: x" then "data file: ../outside.raw".
  expect_refused("cr.nrrd",
                 "NRRD0004\ncontent: x\rdata file: ../outside.raw\n" + kNrrdFields + "\n" + kGood,
                 "control character");
  expect_refused("nul.nhdr",
                 "NRRD0004\n" + kNrrdFields + std::string("data file: inside.raw\0x\n", 24),
                 "control character");
  expect_refused("formfeed.nrrd",
                 "NRRD0004\ncontent: x\fdata file: ../outside.raw\n" + kNrrdFields + "\n" + kGood,
                 "control character");
  // NRRD0001 knows no key/value pairs: "data file:=..." would be the data file for such a reader.
  for (const char* magic : {"NRRD0001", "NRRD0002", "NRRD0003"})
    expect_refused(
        std::string(magic) + ".nrrd",
        std::string(magic) + "\ndata file:=../outside.raw\n" + kNrrdFields + "\n" + kGood,
        "older NRRD version");
  expect_refused("kv_name.nhdr", "NRRD0004\n" + kNrrdFields + "data file: inside.raw:=../x\n",
                 "holds \":=\"");
  expect_refused("trailing.nhdr", "NRRD0004\n" + kNrrdFields + "data file: inside.raw \n",
                 "white space");
  expect_refused("tab.nhdr", "NRRD0004\n" + kNrrdFields + "data file: inside.raw\t\n",
                 "white space");
  expect_refused("leading.nhdr", "NRRD0004\n" + kNrrdFields + "data file:  inside.raw\n",
                 "white space");
  expect_refused("twice.nhdr",
                 "NRRD0004\n" + kNrrdFields + "data file: inside.raw\ndata file: ../outside.raw\n",
                 "given twice");
  expect_refused("twice_spelt.nhdr",
                 "NRRD0004\n" + kNrrdFields + "data file: inside.raw\nDataFile: ../outside.raw\n",
                 "given twice");
  expect_refused("unknown.nhdr", "NRRD0004\n" + kNrrdFields + "data files: ../outside.raw\n",
                 "is not \"field: value\"");
  expect_refused("magic_tail.nrrd", "NRRD0004 x\n" + kNrrdFields + "\n" + kGood, "not a NRRD file");
}

// `text` with every LF written as CR LF.
std::string with_crlf(const std::string& text) {
  std::string out;
  for (char c : text)
    out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

TEST_F(OneParser, NrrdReadsOnlyWhatItsOwnParserSaw) {
  // A key/value pair named like a field stays a key/value pair: the data are attached.
  expect_good_data("kv.nrrd", "NRRD0004\ndata file:=../outside.raw\n" + kNrrdFields + "\n" + kGood);
  // Comments, CRLF line ends, fields spelt in capitals, a line skip after the header.
  expect_good_data("crlf.nrrd", "NRRD0005\r\n# comment: data file: ../outside.raw\r\n" +
                                    with_crlf(kNrrdFields) + "LINE SKIP: 1\r\n\r\nskipped line\n" +
                                    kGood);
  expect_good_data("detached.nhdr", "NRRD0004\n" + kNrrdFields + "data file: inside.raw\n");
  // What ITK reads: every field once, the data by a descriptor ndconv opened.
  write_bytes(dir / "h/a.nrrd", "NRRD0004\n# c\nk:=v\n" + kNrrdFields + "\n" + kGood);
  const io::NrrdHeader h = io::check_nrrd_header(dir / "h/a.nrrd");
  const io::ItkHeaderFile file(h.itk_header, "a.nrrd");
  EXPECT_EQ(file.text().find("# c"), std::string::npos) << file.text();
  EXPECT_NE(file.text().find("\nk:=v\n"), std::string::npos) << file.text();
  EXPECT_NE(file.text().find("line skip: 11\ndata file: /proc/self/fd/"), std::string::npos)
      << file.text();
  EXPECT_EQ(file.path().rfind("/proc/self/fd/", 0), 0u);
}

const std::string kMetaFields =
    "ObjectType = Image\nNDims = 3\nDimSize = 4 3 2\nElementType = MET_SHORT\n";

TEST_F(OneParser, MetaImageHeadersWithMoreThanOneReadingAreRefused) {
  // MetaIO also splits a key from its value at ':'.
  expect_refused("colon.mhd", kMetaFields + "ElementDataFile: ../outside.raw\n",
                 "is not 'Key = value'");
  expect_refused("colon_eq.mhd", kMetaFields + "Comment: x = y\nElementDataFile = inside.raw\n",
                 "is not a word before '='");
  expect_refused("space_key.mhd", kMetaFields + "Element DataFile = ../outside.raw\n",
                 "is not a word before '='");
  expect_refused("twice.mhd", kMetaFields + "DimSize = 4 3 2\nElementDataFile = inside.raw\n",
                 "given twice");
  expect_refused("cr.mhd",
                 "Comment = x\rElementDataFile = ../outside.raw\n" + kMetaFields +
                     "ElementDataFile = inside.raw\n",
                 "control character");
  expect_refused("trailing.mhd", kMetaFields + "ElementDataFile = inside.raw \n", "white space");
  expect_refused("tab.mhd", kMetaFields + "ElementDataFile = inside.raw\t\n", "white space");
  write_bytes(dir / "h/s0.raw", kGood.substr(0, 24));
  write_bytes(dir / "h/s1.raw", kGood.substr(0, 24));
  expect_refused("list_space.mhd", kMetaFields + "ElementDataFile = LIST\n s0.raw\ns1.raw\n",
                 "begins with white space");
}

TEST_F(OneParser, MetaImageReadsOnlyWhatItsOwnParserSaw) {
  // Keys MetaIO would act on that ndconv does not check never reach it; CRLF line ends.
  expect_good_data("crlf.mhd",
                   "ObjectType = Image\r\nNDims = 3\r\nDimSize = 4 3 2\r\n"
                   "ElementType = MET_SHORT\r\nElementDataFile = inside.raw\r\n");
  expect_good_data("local.mha", kMetaFields + "Unknown = x\nElementDataFile = LOCAL\n" + kGood);
  expect_good_data("local_msb.mha", kMetaFields +
                                        "BinaryDataByteOrderMSB = True\n"
                                        "ElementDataFile = LOCAL\n" +
                                        kGood);
  write_bytes(dir / "h/s0.raw", kGood.substr(0, 24));
  write_bytes(dir / "h/s1.raw", kGood.substr(0, 24));
  expect_good_data("list.mhd", kMetaFields + "ElementDataFile = LIST\ns0.raw\ns1.raw\n");
  expect_good_data("pattern.mhd", kMetaFields + "ElementDataFile = s%d.raw 0 1 1\n");
  const io::HeaderFacts facts = io::check_header(dir / "h/list.mhd");
  const io::ItkHeaderFile file(facts.itk_header, "list.mhd");
  EXPECT_NE(file.text().find("ElementDataFile = LIST\n/"), std::string::npos) << file.text();
  const io::HeaderFacts single = io::check_header(dir / "h/local.mha");
  const io::ItkHeaderFile local(single.itk_header, "local.mha");
  EXPECT_EQ(local.text().find("Unknown"), std::string::npos) << local.text();
  EXPECT_NE(local.text().find("ElementDataFile = /proc/self/fd/"), std::string::npos)
      << local.text();
}

}  // namespace
}  // namespace ndconv::test
