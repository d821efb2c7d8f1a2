// Issue 48, class 3: damaged data is never a success. A gzip member whose length field (ISIZE)
// is wrong, a compressed MetaImage whose declared compressed size is too small or too large, a
// DICOM slice cut short and DICOM pixel data declared far larger than its file are each an
// IoError naming the file, never a volume padded with zeros; the oversized declaration is refused
// before anything is read.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "io/image.h"
#include "io/parallel_deflate.h"
#include "format_fixtures.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using io::ComponentType;

// Expects reading `path` (as float planes and in its stored type) to fail, naming `names`.
void expect_damaged(const std::string& path, const std::string& names) {
  SCOPED_TRACE(path);
  try {
    (void)io::read_image(path);
    ADD_FAILURE() << "read without error";
  } catch (const io::IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(names), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  io::StoredImage stored;
  try {
    EXPECT_FALSE(io::read_stored_image(path, stored));
  } catch (const io::IoError&) {
  }
}

// The image of `raw` as ndconv holds it (read back from a MetaImage written byte by byte).
io::Image as_image(const TempDir& dir, const RawImage& raw) {
  write_meta(dir / "source.mha", raw);
  return io::read_image(dir / "source.mha");
}

TEST(DamagedData, GzipMemberWithAWrongLengthFieldIsRefused) {
  TempDir dir;
  // 1.3 MB: two members of ndconv's parallel compressor, each with its ISIZE.
  const io::Image image = as_image(dir, random_volume({128, 128, 80, 1}, ComponentType::UInt8, 5));
  io::write_image(dir / "m.nii.gz", image, ComponentType::UInt8, false, {});
  const std::string bytes = read_bytes(dir / "m.nii.gz");
  const auto members =
      io::find_gzip_members(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  ASSERT_GE(members.size(), 2u);
  int n = 0;
  for (const auto& m : {members.front(), members.back()}) {
    for (const int64_t delta : {-4096, 4096, 1}) {
      std::string patched = bytes;
      const uint32_t isize = m.uncompressed + static_cast<uint32_t>(delta);
      std::memcpy(&patched[m.offset + m.length - 4], &isize, 4);
      const std::string path = dir / ("isize" + std::to_string(n++) + ".nii.gz");
      write_bytes(path, patched);
      expect_damaged(path, path);
    }
  }
  // The same in a file of one member written by another program (zlib's gzip).
  write_nifti(dir / "plain.nii", random_volume({40, 30, 20, 1}, ComponentType::UInt8, 6));
  io::Image plain = io::read_image(dir / "plain.nii");
  io::WriteSettings itk;
  itk.itk_encoder = true;
  io::write_image(dir / "z.nii.gz", plain, ComponentType::UInt8, false, itk);
  std::string single = read_bytes(dir / "z.nii.gz");
  single[single.size() - 2] ^= 0x01;
  write_bytes(dir / "single.nii.gz", single);
  expect_damaged(dir / "single.nii.gz", dir / "single.nii.gz");
}

// The CompressedDataSize field of a MetaImage written compressed, set to `size`.
std::string with_compressed_size(std::string header, const std::string& size) {
  const std::string key = "CompressedDataSize = ";
  const auto at = header.find(key);
  EXPECT_NE(at, std::string::npos);
  const auto end = header.find('\n', at);
  return header.replace(at + key.size(), end - at - key.size(), size);
}

TEST(DamagedData, CompressedMetaImageSizeMustMatchItsData) {
  TempDir dir;
  const io::Image image = as_image(dir, random_volume({64, 48, 20, 1}, ComponentType::UInt8, 7));
  io::WriteSettings level6;
  level6.compression = 6;
  io::write_image(dir / "z.mha", image, ComponentType::UInt8, false, level6);
  io::write_image(dir / "d.mhd", image, ComponentType::UInt8, false, level6);
  const std::string mha = read_bytes(dir / "z.mha");
  const auto end = mha.find("ElementDataFile = LOCAL\n") + 24;
  const std::string header = mha.substr(0, end), data = mha.substr(end);
  for (const std::string& size : {std::to_string(data.size() / 2), std::to_string(data.size() + 9),
                                  std::string("0"), std::string("-5"), std::string("x")}) {
    const std::string path = dir / ("size_" + size + ".mha");
    write_bytes(path, with_compressed_size(header, size) + data);
    expect_damaged(path, path);
    const std::string mhd = dir / ("size_" + size + ".mhd");
    write_bytes(mhd, with_compressed_size(read_bytes(dir / "d.mhd"), size));
    expect_damaged(mhd, mhd);
  }
  EXPECT_EQ(io::read_image(dir / "z.mha").planes[0], image.planes[0]);
  EXPECT_EQ(io::read_image(dir / "d.mhd").planes[0], image.planes[0]);
}

TEST(DamagedData, DicomSliceCutShortIsRefused) {
  TempDir dir;
  const RawImage raw = random_volume({32, 24, 4, 1}, ComponentType::Int16, 9);
  std::filesystem::create_directory(dir / "series");
  const auto files = itk_write_dicom_series(dir / "series", raw, "s");
  const std::string slice = read_bytes(files[2]);
  for (const size_t cut : {size_t{2}, size_t{100}, size_t{32 * 24 * 2 - 2}}) {
    SCOPED_TRACE(cut);
    write_bytes(files[2], slice.substr(0, slice.size() - cut));
    expect_damaged(dir / "series", files[2]);
    expect_damaged(files[2], files[2]);
  }
}

// Rows set to 65535 in a slice of 24: the pixel data declared is 2,700 times the file. Refused
// from the header, before gigabytes are allocated and read.
TEST(DamagedData, DicomPixelDataFarLargerThanItsFileIsRefusedBeforeReading) {
  TempDir dir;
  const RawImage raw = random_volume({32, 24, 1, 1}, ComponentType::Int16, 11);
  const auto files = itk_write_dicom_series(dir.path(), raw, "one");
  std::string bytes = read_bytes(files[0]);
  // Rows (0028,0010), explicit or implicit VR little-endian.
  auto at = bytes.find(std::string("\x28\x00\x10\x00US\x02\x00", 8));
  if (at == std::string::npos)
    at = bytes.find(std::string("\x28\x00\x10\x00\x02\x00\x00\x00", 8));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 8] = '\xff';
  bytes[at + 9] = '\xff';
  write_bytes(dir / "big.dcm", bytes);
  const auto start = std::chrono::steady_clock::now();
  expect_damaged(dir / "big.dcm", dir / "big.dcm");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

}  // namespace
}  // namespace ndconv::test
