// The CLI's fast read path: NIfTI-1 pixels decoded by ndconv itself (gzip members in parallel,
// other gzip files in single libdeflate calls) and images read in their stored type
// (io::read_stored_image, for the stored-type API) give the same float32 values, bit for bit, as
// ITK's readers; filtering the stored volume on the CPU gives the same output as filtering the
// float planes; truncated and damaged files are still refused with the same errors.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "io/image.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "ndconv/stored.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using io::ComponentType;

// The same bytes as one gzip member, written by zlib (as gzip, ITK and nibabel write .nii.gz).
void gzip_with_zlib(const std::string& from, const std::string& to) {
  const std::string bytes = read_bytes(from);
  gzFile f = gzopen(to.c_str(), "wb6");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The stored image converted on the CPU, as the engine's CPU backend converts it.
std::vector<float> converted(const io::StoredImage& s) {
  std::vector<float> out(static_cast<size_t>(s.info.geometry.voxel_count()), NAN);
  convert_to_float(s.view(), make_view(out.data(), s.info.geometry.dims, s.info.geometry.extent));
  return out;
}

// Reads `path` both ways and checks them against `reference` (ITK's float32 values).
void expect_reads_as(const std::string& path, const std::vector<float>& reference,
                     bool stored_expected) {
  SCOPED_TRACE(path);
  const io::Image image = io::read_image(path);
  ASSERT_EQ(image.planes.size(), 1u);
  EXPECT_TRUE(same_bits(image.planes[0], reference));
  io::StoredImage stored;
  ASSERT_EQ(io::read_stored_image(path, stored), stored_expected);
  if (stored_expected) {
    EXPECT_TRUE(same_bits(converted(stored), reference));
    // Ordinary memory (a run that may stay on the CPU) holds the same values.
    io::StoredImage ordinary;
    ASSERT_TRUE(io::read_stored_image(path, ordinary, HostMemory::Ordinary));
    EXPECT_FALSE(ordinary.storage.pinned());
    EXPECT_TRUE(same_bits(converted(ordinary), reference));
  }
}

struct Case {
  ComponentType type;
  bool big_endian;
  double slope, inter;
};

class StoredRead : public ::testing::TestWithParam<Case> {};

TEST_P(StoredRead, NiftiPlainAndGzipEqualItk) {
  const Case c = GetParam();
  TempDir dir;
  const RawImage raw = oriented_volume(4, c.type, 71 + static_cast<int>(c.type));
  const std::string nii = dir / "a.nii", single = dir / "single.nii.gz", members = dir / "m.nii.gz";
  write_nifti(nii, raw, c.big_endian, c.slope, c.inter);
  gzip_with_zlib(nii, single);
  // The reference: ITK's own reader, on a MetaImage holding the same values (unscaled), or on the
  // .nii itself where ITK applies scl_slope/scl_inter (ndconv leaves scaled files to ITK's
  // float path).
  std::vector<float> reference;
  const bool scaled = c.slope != 0 && (c.slope != 1 || c.inter != 0);
  if (scaled) {
    reference = io::read_image(nii).planes[0];
  } else {
    write_meta(dir / "ref.mha", raw);
    reference = io::read_image(dir / "ref.mha").planes[0];
  }
  // Values that would be the same whichever reader ran: fresh, not all equal.
  ASSERT_NE(reference.front(), reference.back());
  const bool stored_type = c.type == ComponentType::UInt8 || c.type == ComponentType::Int8 ||
                           c.type == ComponentType::UInt16 || c.type == ComponentType::Int16 ||
                           c.type == ComponentType::Float32;
  expect_reads_as(nii, reference, stored_type);
  expect_reads_as(single, reference, stored_type);
  if (!scaled) {
    // ndconv's own writer: the same values as several gzip members (small chunks: many).
    io::Image image;
    image.info = io::read_info(nii);
    image.planes.push_back(reference);
    io::write_image(members, image, c.type, false, {});
    expect_reads_as(members, reference, stored_type);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, StoredRead,
                         ::testing::Values(Case{ComponentType::UInt8, false, 0, 0},
                                           Case{ComponentType::Int8, true, 0, 0},
                                           Case{ComponentType::UInt16, true, 0, 0},
                                           Case{ComponentType::Int16, false, 0, 0},
                                           Case{ComponentType::Float32, true, 0, 0},
                                           Case{ComponentType::Int32, false, 0, 0},
                                           Case{ComponentType::UInt8, false, 0.5, -3.25},
                                           Case{ComponentType::Int16, true, 1.75, 100},
                                           Case{ComponentType::UInt16, false, 1, 7}));

TEST(StoredRead, MetaImageEqualsFloatRead) {
  TempDir dir;
  for (ComponentType t : {ComponentType::UInt8, ComponentType::Int16, ComponentType::Float32}) {
    const RawImage raw = oriented_volume(3, t, 5);
    write_meta(dir / "a.mha", raw);
    expect_reads_as(dir / "a.mha", io::read_image(dir / "a.mha").planes[0], true);
  }
  // Vector pixels stay on the float path.
  write_meta(dir / "v.mha", oriented_volume(3, ComponentType::UInt8, 6, 3));
  io::StoredImage stored;
  EXPECT_FALSE(io::read_stored_image(dir / "v.mha", stored));
}

// Compressed MetaImages (one zlib stream: ndconv's parallel encoder at two levels, and ITK's own
// encoder), a separate data file, and a big-endian header (left to ITK): the same values as ITK's
// float read, in 3D and 4D.
TEST(StoredRead, CompressedAndOtherMetaImagesEqualTheFloatRead) {
  TempDir dir;
  for (int dims : {3, 4}) {
    for (ComponentType t : {ComponentType::UInt8, ComponentType::Int16, ComponentType::Float32}) {
      SCOPED_TRACE(std::to_string(dims) + "D type " + std::to_string(static_cast<int>(t)));
      write_meta(dir / "a.mha", oriented_volume(dims, t, 40 + dims));
      const io::Image image = io::read_image(dir / "a.mha");
      const std::vector<float>& reference = image.planes[0];
      ASSERT_NE(reference.front(), reference.back());
      io::WriteSettings level6, itk;
      level6.compression = 6;
      itk.itk_encoder = true;
      io::write_image(dir / "z1.mha", image, t, true, {});
      io::write_image(dir / "z6.mha", image, t, true, level6);
      io::write_image(dir / "zi.mha", image, t, true, itk);
      io::write_image(dir / "d.mhd", image, t, true, {});
      for (const char* name : {"z1.mha", "z6.mha", "zi.mha", "d.mhd"})
        expect_reads_as(dir / name, reference, true);
      ASSERT_NE(read_bytes(dir / "z6.mha").find("CompressedData = True"), std::string::npos);
    }
  }
  // Bytes need no swapping, but a big-endian header still goes to ITK: the same values.
  write_meta(dir / "b.mha", oriented_volume(3, ComponentType::UInt8, 8));
  const std::vector<float> reference = io::read_image(dir / "b.mha").planes[0];
  std::string bytes = read_bytes(dir / "b.mha");
  const std::string little = "BinaryDataByteOrderMSB = False";
  ASSERT_NE(bytes.find(little), std::string::npos);
  bytes.replace(bytes.find(little), little.size(), "BinaryDataByteOrderMSB = True ");
  write_bytes(dir / "big.mha", bytes);
  expect_reads_as(dir / "big.mha", reference, true);
}

// A compressed MetaImage cut short or damaged: refused by read_image; the stored read falls back
// to ITK (which refuses it) and never returns data.
TEST(StoredRead, TruncatedAndDamagedCompressedMetaImagesAreRefused) {
  TempDir dir;
  write_meta(dir / "a.mha", oriented_volume(3, ComponentType::Int16, 13));
  const io::Image image = io::read_image(dir / "a.mha");
  io::WriteSettings level6;
  level6.compression = 6;
  io::write_image(dir / "z.mha", image, ComponentType::Int16, false, level6);
  const std::string bytes = read_bytes(dir / "z.mha");
  write_bytes(dir / "cut.mha", bytes.substr(0, bytes.size() * 2 / 3));
  std::string damaged = bytes;
  damaged[damaged.size() - 6] ^= 0x55;  // in the deflate data's end or the Adler-32
  write_bytes(dir / "bad.mha", damaged);
  for (const char* name : {"cut.mha", "bad.mha"}) {
    SCOPED_TRACE(name);
    EXPECT_THROW(io::read_image(dir / name), io::IoError);
    io::StoredImage stored;
    EXPECT_THROW(io::read_stored_image(dir / name, stored), io::IoError);
  }
}

// What the CLI runs when a GPU may filter, on the CPU: the same output as the float path.
TEST(StoredRead, FilteringTheStoredImageEqualsFilteringPlanes) {
  TempDir dir;
  for (const bool gz : {false, true}) {
    const RawImage raw = oriented_volume(4, ComponentType::UInt8, 9);
    write_nifti(dir / "e.nii", raw, false, 0.5, 2);
    const std::string path = gz ? dir / "e.nii.gz" : dir / "e.nii";
    if (gz)
      gzip_with_zlib(dir / "e.nii", path);
    const io::Image image = io::read_image(path);
    io::StoredImage stored;
    ASSERT_TRUE(io::read_stored_image(path, stored));
    const SeparableFilter g = gaussian_filter(4, {1.0, 0.8, 1.3, 0});
    Options o;
    o.backend = Backend::Cpu;
    const auto& geo = image.info.geometry;
    std::vector<float> a(static_cast<size_t>(geo.voxel_count()), NAN), b = a;
    filter_separable(image.plane_view(0), g, make_view(a.data(), geo.dims, geo.extent), o);
    filter_separable_stored(stored.view(), g, make_view(b.data(), geo.dims, geo.extent), o);
    EXPECT_TRUE(same_bits(a, b));
    const std::vector<float> taps = {0.3f, -1.1f, 0.7f,  0.2f, 0.9f, -0.4f, 1.3f,  0.1f,  -0.6f,
                                     0.5f, 0.8f,  -0.2f, 0.4f, 0.6f, -0.9f, 0.25f, 0.15f, 0.35f};
    DenseFilter d;
    d.dims = 4;
    d.extent = {3, 2, 3, 1};
    d.taps = taps.data();
    filter_dense(image.plane_view(0), d, make_view(a.data(), geo.dims, geo.extent), o);
    filter_dense_stored(stored.view(), d, make_view(b.data(), geo.dims, geo.extent), o);
    EXPECT_TRUE(same_bits(a, b));
  }
}

// A volume of several 1 MiB members: inflated in parallel, the same values.
TEST(StoredRead, SeveralGzipMembersEqualItk) {
  TempDir dir;
  RawImage raw;
  raw.dims = 3;
  raw.extent = {128, 128, 80, 1};
  raw.type = ComponentType::UInt8;
  raw.values = random_for_type(raw.voxels(), raw.type, 33);
  write_nifti(dir / "a.nii", raw);
  write_meta(dir / "a.mha", raw);
  const std::vector<float> reference = io::read_image(dir / "a.mha").planes[0];
  io::Image image;
  image.info = io::read_info(dir / "a.nii");
  image.planes.push_back(reference);
  io::write_image(dir / "m.nii.gz", image, ComponentType::UInt8, false, {});
  const std::string bytes = read_bytes(dir / "m.nii.gz");
  ASSERT_GE(
      io::find_gzip_members(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size())
          .size(),
      2u);
  expect_reads_as(dir / "m.nii.gz", reference, true);
}

// A .nii.gz cut short or with a damaged member: still refused by read_image with the error of
// the slow path; the stored read falls back (false) or refuses it too, never returns data.
TEST(StoredRead, TruncatedAndDamagedGzipAreRefused) {
  TempDir dir;
  const RawImage raw = oriented_volume(3, ComponentType::UInt8, 12);
  write_nifti(dir / "a.nii", raw);
  gzip_with_zlib(dir / "a.nii", dir / "single.nii.gz");
  io::Image image;
  image.info = io::read_info(dir / "a.nii");
  image.planes.push_back(io::read_image(dir / "a.nii").planes[0]);
  io::write_image(dir / "m.nii.gz", image, ComponentType::UInt8, false, {});
  for (const std::string name : {"single.nii.gz", "m.nii.gz"}) {
    const std::string bytes = read_bytes(dir / name);
    write_bytes(dir / ("cut_" + name), bytes.substr(0, bytes.size() * 2 / 3));
    std::string damaged = bytes;
    damaged[damaged.size() - 12] ^= 0x55;  // inside the last member's deflate data
    write_bytes(dir / ("bad_" + name), damaged);
    for (const std::string prefix : {"cut_", "bad_"}) {
      const std::string path = dir / (prefix + name);
      SCOPED_TRACE(path);
      EXPECT_THROW(io::read_image(path), io::IoError);
      io::StoredImage stored;
      try {
        EXPECT_FALSE(io::read_stored_image(path, stored));
      } catch (const io::IoError&) {
      }
    }
  }
}

}  // namespace
}  // namespace ndconv::test
