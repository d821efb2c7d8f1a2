// ndconv_io against files whose bytes the tests wrote themselves (test_files.h): every component
// type, 2D/3D/4D, MetaImage and NIfTI (both byte orders, scl_slope), geometry, writing with
// rounding and clamping, atomic and no-clobber writes, and every kind of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "io/image.h"
#include "io/pixel_convert.h"
#include "test_data.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

const ComponentType kAllTypes[] = {
    ComponentType::UInt8,   ComponentType::Int8,   ComponentType::UInt16, ComponentType::Int16,
    ComponentType::UInt32,  ComponentType::Int32,  ComponentType::UInt64, ComponentType::Int64,
    ComponentType::Float32, ComponentType::Float64};

// A rotation about z by 30 degrees (not symmetric, so a transposed matrix would show).
void rotate(RawImage& im) {
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  im.direction = {c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
}

RawImage make_raw(int dims, ComponentType type, int components, uint64_t seed) {
  RawImage im;
  im.dims = dims;
  im.extent = {5, 4, dims >= 3 ? 3 : 1, dims == 4 ? 2 : 1};
  im.spacing = {0.5, 0.75, 1.25, 0.04};
  im.origin = {-10.5, 20.25, 3.0, 0.0};
  im.type = type;
  im.components = components;
  im.values = random_for_type(im.voxels() * components, type, seed);
  return im;
}

void expect_values(const io::Image& got, const RawImage& want) {
  ASSERT_EQ(got.info.components, want.components);
  const int64_t n = want.voxels();
  for (int c = 0; c < want.components; ++c)
    for (int64_t v = 0; v < n; ++v)
      ASSERT_EQ(got.planes[c][v], static_cast<float>(want.values[v * want.components + c]))
          << "component " << c << " voxel " << v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(IoRead, MetaImageEveryTypeAndDimensionWithGeometry) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dims = 2; dims <= 4; ++dims) {
    for (ComponentType t : kAllTypes) {
      SCOPED_TRACE(std::to_string(dims) + "D " + io::to_string(t));
      RawImage raw = make_raw(dims, t, 1, seed + dims);
      if (dims >= 3)
        rotate(raw);
      const std::string path = dir / "in.mha";
      write_meta(path, raw);
      const io::Image im = io::read_image(path);
      EXPECT_EQ(im.info.component_type, t);
      EXPECT_EQ(im.info.format, "MetaImageIO");
      const io::Geometry& g = im.info.geometry;
      ASSERT_EQ(g.dims, dims);
      for (int a = 0; a < dims; ++a) {
        EXPECT_EQ(g.extent[a], raw.extent[a]);
        EXPECT_DOUBLE_EQ(g.spacing[a], raw.spacing[a]);
        EXPECT_DOUBLE_EQ(g.origin[a], raw.origin[a]);
        for (int r = 0; r < dims; ++r)
          EXPECT_NEAR(g.direction[r * kMaxDims + a], raw.direction[r * kMaxDims + a], 1e-12);
      }
      expect_values(im, raw);
    }
  }
}

TEST(IoRead, NiftiEveryTypeBothByteOrders) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (bool big : {false, true}) {
    for (ComponentType t : kAllTypes) {
      SCOPED_TRACE(std::string(big ? "big" : "little") + "-endian " + io::to_string(t));
      const RawImage raw = make_raw(3, t, 1, seed);
      write_nifti(dir / "in.nii", raw, big);
      const io::Image im = io::read_image(dir / "in.nii");
      EXPECT_EQ(im.info.component_type, t);
      for (int a = 0; a < 3; ++a)
        EXPECT_NEAR(im.info.geometry.spacing[a], raw.spacing[a], 1e-6);
      expect_values(im, raw);
    }
  }
}

TEST(IoRead, NiftiSclSlopeAndInterceptAreApplied) {
  TempDir dir;
  RawImage raw = make_raw(3, ComponentType::Int16, 1, fresh_seed());
  write_nifti(dir / "scaled.nii", raw, false, 2.5, -10.0);
  const io::Image im = io::read_image(dir / "scaled.nii");
  // ITK 5.2 applies the scaling and reports float32 pixels.
  EXPECT_EQ(im.info.component_type, ComponentType::Float32);
  for (int64_t v = 0; v < raw.voxels(); ++v)
    ASSERT_FLOAT_EQ(im.planes[0][v], static_cast<float>(raw.values[v] * 2.5 - 10.0));
}

// A damaged header that claims a huge volume in a tiny file is refused before anything is
// allocated or read (on a machine with enough memory it would otherwise read and filter gigabytes).
TEST(IoRead, HeaderClaimingFarMoreDataThanTheFileHoldsIsRefused) {
  TempDir dir;
  RawImage raw = make_raw(3, ComponentType::UInt8, 1, fresh_seed());
  write_nifti(dir / "small.nii", raw, false, 0.0, 0.0);
  std::string bytes = read_bytes(dir / "small.nii");
  const int16_t dim[4] = {3, 20000, 20000, 20000};  // dim[0..3] at byte 40 (little endian)
  std::memcpy(&bytes[40], dim, sizeof dim);
  write_bytes(dir / "huge.nii", bytes);
  try {
    io::read_image(dir / "huge.nii");
    FAIL() << "a header describing 8e12 voxels in " << bytes.size() << " bytes was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the file holds only"), std::string::npos) << e.what();
  }
}

TEST(IoRead, NiftiFourDimensionalTimeStepAndVectorPixels) {
  TempDir dir;
  RawImage raw = make_raw(4, ComponentType::Float32, 1, fresh_seed());
  write_nifti(dir / "series.nii", raw);
  const io::Image im = io::read_image(dir / "series.nii");
  EXPECT_EQ(im.info.geometry.dims, 4);
  EXPECT_NEAR(im.info.geometry.spacing[3], raw.spacing[3], 1e-6);
  expect_values(im, raw);

  RawImage vec = make_raw(3, ComponentType::Int16, 3, fresh_seed());
  write_nifti(dir / "vector.nii", vec);
  const io::Image v = io::read_image(dir / "vector.nii");
  EXPECT_EQ(v.info.components, 3);
  expect_values(v, vec);
}

// Writing every type to NIfTI (.nii.gz), MetaImage (.mha) and MetaImage with a data file (.mhd):
// values come back as convert_value() says (rounded, clamped), geometry unchanged.
TEST(IoWrite, EveryTypeAndFormatRoundTrips) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* ext : {".nii.gz", ".mha", ".mhd"}) {
    for (int dims : {2, 3, 4}) {
      for (ComponentType t : kAllTypes) {
        SCOPED_TRACE(std::string(ext) + " " + std::to_string(dims) + "D " + io::to_string(t));
        RawImage raw = make_raw(dims, ComponentType::Float32, 1, seed);
        if (dims >= 3)
          rotate(raw);
        write_meta(dir / "src.mha", raw);
        io::Image im = io::read_image(dir / "src.mha");
        // values around the small types' ranges, with halves, to exercise rounding and clamping
        const auto noise = random_values(raw.voxels(), seed + 1);
        for (int64_t v = 0; v < raw.voxels(); ++v)
          im.planes[0][v] = static_cast<float>(std::round(noise[v] * 600.0) / 2.0);
        const std::string out = dir / (std::string("out") + ext);
        io::write_image(out, im, t, true);
        const io::Image back = io::read_image(out);
        EXPECT_EQ(back.info.component_type, t);
        const io::Geometry &g = back.info.geometry, &w = im.info.geometry;
        ASSERT_EQ(g.dims, w.dims);
        for (int a = 0; a < dims; ++a) {
          EXPECT_EQ(g.extent[a], w.extent[a]);
          EXPECT_NEAR(g.spacing[a], w.spacing[a], 1e-6);
          EXPECT_NEAR(g.origin[a], w.origin[a], 1e-4);
          for (int r = 0; r < dims; ++r)
            EXPECT_NEAR(g.direction[r * kMaxDims + a], w.direction[r * kMaxDims + a], 1e-6);
        }
        for (int64_t v = 0; v < raw.voxels(); ++v)
          ASSERT_EQ(back.planes[0][v], static_cast<float>(io::convert_value(im.planes[0][v], t)))
              << "voxel " << v << " value " << im.planes[0][v];
      }
    }
  }
  // Only the outputs remain: no staging folders.
  for (const auto& n : dir.list())
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
}

// A 4D NIfTI keeps its time step in seconds: 40 ms in, pixdim[4] 0.04 with unit "s" out.
TEST(IoWrite, NiftiTimeStepIsWrittenInSeconds) {
  TempDir dir;
  RawImage raw = make_raw(4, ComponentType::Float32, 1, fresh_seed());
  raw.spacing[3] = 40;
  write_nifti(dir / "ms.nii", raw);
  std::string bytes = read_bytes(dir / "ms.nii");
  bytes[123] = 2 | 16;  // mm, ms
  write_bytes(dir / "ms.nii", bytes);
  const io::Image im = io::read_image(dir / "ms.nii");
  EXPECT_NEAR(im.info.geometry.spacing[3], 0.04, 1e-9);
  for (const char* out : {"s.nii", "s.nii.gz"}) {
    io::write_image(dir / out, im, ComponentType::Float32, false);
    EXPECT_NEAR(io::read_info(dir / out).geometry.spacing[3], 0.04, 1e-7) << out;
  }
  const std::string header = read_bytes(dir / "s.nii");
  EXPECT_EQ(header[123], 2 | 8);  // mm, s
  float pixdim4 = 0;
  std::memcpy(&pixdim4, header.data() + 92, 4);
  EXPECT_NEAR(pixdim4, 0.04f, 1e-7);
}

TEST(IoWrite, RoundingAndClampingAreCounted) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> planes{
      {-300.f, 300.f, 1.5f, 2.5f, -2.5f, nan, -0.5f, 7.49f}};
  std::vector<char> buf;
  io::WriteReport u8;
  io::planes_to_native(planes, ComponentType::UInt8, 8, buf, u8);
  const std::vector<uint8_t> want_u8{0, 255, 2, 3, 0, 0, 0, 7};
  EXPECT_EQ(std::vector<uint8_t>(buf.begin(), buf.end()), want_u8);
  EXPECT_EQ(u8.clamped, 4);  // -300, 300, -2.5 -> -3, -0.5 -> -1
  EXPECT_EQ(u8.nan_zeroed, 1);
  EXPECT_EQ(u8.min, -300.0);
  EXPECT_EQ(u8.max, 300.0);
  io::WriteReport i8;
  io::planes_to_native(planes, ComponentType::Int8, 8, buf, i8);
  const std::vector<int8_t> want_i8{-128, 127, 2, 3, -3, 0, -1, 7};
  EXPECT_EQ(std::vector<int8_t>(buf.begin(), buf.end()), want_i8);
  EXPECT_EQ(i8.clamped, 2);
  io::WriteReport f;
  io::planes_to_native(planes, ComponentType::Float32, 8, buf, f);
  EXPECT_EQ(f.clamped, 0);
  EXPECT_TRUE(std::isnan(reinterpret_cast<const float*>(buf.data())[5]));
  EXPECT_EQ(io::convert_value(1e30f, ComponentType::UInt64), 18446744073709551615.0);
  EXPECT_EQ(io::convert_value(-1e30f, ComponentType::Int64), -9223372036854775808.0);
}

io::Image small_image(int dims, uint64_t seed) {
  io::Image im;
  im.info.geometry.dims = dims;
  im.info.geometry.extent = {6, 5, dims >= 3 ? 4 : 1, 1};
  im.info.pixel_kind = "scalar";
  im.planes.push_back(random_values(im.info.geometry.voxel_count(), seed));
  return im;
}

TEST(IoWrite, ExistingFileIsKeptUnlessOverwriteAndNothingIsLeftBehind) {
  TempDir dir;
  const std::string out = dir / "out.nii.gz";
  write_bytes(out, "precious");
  const io::Image im = small_image(3, fresh_seed());
  const std::string msg =
      error_of([&] { io::write_image(out, im, ComponentType::Float32, false); });
  EXPECT_NE(msg.find(out), std::string::npos) << msg;
  EXPECT_NE(msg.find("exists"), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(out), "precious");
  io::write_image(out, im, ComponentType::Float32, true);
  EXPECT_EQ(io::read_info(out).geometry.extent[2], 4);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.nii.gz"});
}

TEST(IoWrite, MhdHeaderAndDataFileBothArrive) {
  TempDir dir;
  const io::Image im = small_image(3, fresh_seed());
  io::write_image(dir / "vol.mhd", im, ComponentType::Int16, false);
  const auto names = dir.list();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1], "vol.zraw");
  EXPECT_EQ(io::read_info(dir / "vol.mhd").component_type, ComponentType::Int16);
  // Without overwrite, an existing data file also blocks the write.
  fs::remove(dir / "vol.mhd");
  EXPECT_THROW(io::write_image(dir / "vol.mhd", im, ComponentType::Int16, false), io::RequestError);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"vol.zraw"});
}

TEST(IoWrite, ImpossibleRequestsFailBeforeWritingAnything) {
  TempDir dir;
  const io::Image vol = small_image(3, fresh_seed());
  std::string msg =
      error_of([&] { io::write_image(dir / "a.png", vol, ComponentType::UInt8, false); });
  EXPECT_NE(msg.find("cannot hold a 3D image"), std::string::npos) << msg;
  const io::Image pic = small_image(2, fresh_seed());
  msg = error_of([&] { io::write_image(dir / "a.png", pic, ComponentType::Float32, false); });
  EXPECT_NE(msg.find("holds only uint8, uint16"), std::string::npos) << msg;
  msg = error_of([&] { io::write_image(dir / "a.xyz", pic, ComponentType::Float32, false); });
  EXPECT_NE(msg.find("unknown output format"), std::string::npos) << msg;
  msg =
      error_of([&] { io::write_image(dir / "no/such/a.nii", pic, ComponentType::Float32, false); });
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  EXPECT_TRUE(dir.list().empty());
  std::string note;
  EXPECT_EQ(io::default_output_type(dir / "a.png", ComponentType::UInt16, note),
            ComponentType::UInt16);
  EXPECT_NE(note.find("no float32"), std::string::npos);
  EXPECT_EQ(io::default_output_type(dir / "a.nii", ComponentType::UInt16, note),
            ComponentType::Float32);
}

TEST(IoWrite, RgbPngRoundTrip) {
  TempDir dir;
  io::Image im;
  im.info.geometry.dims = 2;
  im.info.geometry.extent = {7, 5, 1, 1};
  im.info.pixel_kind = "rgb";
  for (int c = 0; c < 3; ++c) {
    im.planes.emplace_back(35);
    for (int v = 0; v < 35; ++v)
      im.planes[c][v] = static_cast<float>((v * 7 + c * 50) % 256);
  }
  io::write_image(dir / "rgb.png", im, ComponentType::UInt8, false);
  const io::Image back = io::read_image(dir / "rgb.png");
  EXPECT_EQ(back.info.format, "PNGImageIO");
  EXPECT_EQ(back.info.components, 3);
  EXPECT_EQ(back.info.pixel_kind, "rgb");
  EXPECT_EQ(back.planes, im.planes);
}

// NIfTI-2 is read by ndconv itself (ITK 5.2 reads NIfTI-1 only): the same image written as
// NIfTI-1 (read by ITK) and as NIfTI-2 must read the same, geometry included.
TEST(IoRead, Nifti2ReadsLikeNifti1) {
  TempDir dir;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  NiftiForm qform;
  qform.qform_code = 1;
  qform.qfac = -1;
  qform.quatern[0] = 0.1;
  qform.quatern[1] = -0.2;
  qform.quatern[2] = 0.3;
  qform.qoffset[0] = 12.5;
  qform.qoffset[1] = -7.25;
  qform.qoffset[2] = 3.0;
  NiftiForm sform;
  sform.sform_code = 2;
  const double c = std::cos(0.4), s = std::sin(0.4);
  const double srow[12] = {0.5 * c, -0.75 * s, 0, -4, 0.5 * s, 0.75 * c, 0, 9, 0, 0, 1.25, 2};
  std::copy(srow, srow + 12, sform.srow);
  const NiftiForm forms[] = {NiftiForm{}, qform, sform};
  for (int f = 0; f < 3; ++f) {
    for (ComponentType t : kAllTypes) {
      SCOPED_TRACE("form " + std::to_string(f) + " " + io::to_string(t));
      const RawImage raw = make_raw(3, t, 1, seed + f);
      write_nifti_form(dir / "v1.nii", raw, forms[f]);
      write_nifti2(dir / "v2.nii", raw, t == ComponentType::Int16, 0, 0, forms[f]);
      const io::Image a = io::read_image(dir / "v1.nii"), b = io::read_image(dir / "v2.nii");
      EXPECT_EQ(b.info.component_type, t);
      for (int ax = 0; ax < 3; ++ax) {
        EXPECT_EQ(b.info.geometry.extent[ax], a.info.geometry.extent[ax]);
        EXPECT_NEAR(b.info.geometry.spacing[ax], a.info.geometry.spacing[ax], 1e-6);
        EXPECT_NEAR(b.info.geometry.origin[ax], a.info.geometry.origin[ax], 1e-4);
        for (int r = 0; r < 3; ++r)
          EXPECT_NEAR(b.info.geometry.direction[r * kMaxDims + ax],
                      a.info.geometry.direction[r * kMaxDims + ax], 1e-5)
              << "row " << r << " axis " << ax;
      }
      expect_values(b, raw);
    }
  }
  // 4D with scl_slope, vector pixels, gzip.
  const RawImage series = make_raw(4, ComponentType::Int16, 1, seed);
  write_nifti2(dir / "s.nii", series, false, 0.5, 3.0);
  const io::Image s4 = io::read_image(dir / "s.nii");
  EXPECT_EQ(s4.info.geometry.dims, 4);
  EXPECT_NEAR(s4.info.geometry.spacing[3], series.spacing[3], 1e-9);
  EXPECT_EQ(s4.info.component_type, ComponentType::Float32);
  for (int64_t v = 0; v < series.voxels(); ++v)
    ASSERT_FLOAT_EQ(s4.planes[0][v], static_cast<float>(series.values[v] * 0.5 + 3.0));
  const RawImage vec = make_raw(3, ComponentType::Float32, 2, seed);
  write_nifti2(dir / "vec.nii", vec);
  ASSERT_EQ(std::system(("gzip -f " + dir / "vec.nii").c_str()), 0);
  expect_values(io::read_image(dir / "vec.nii.gz"), vec);
  const std::string full = read_bytes(dir / "s.nii");
  write_bytes(dir / "cut.nii", full.substr(0, full.size() - 10));
  const std::string msg = error_of([&] { io::read_image(dir / "cut.nii"); });
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(IoRead, Truncated2DFilesAreRefused) {
  TempDir dir;
  io::Image im;
  im.info.geometry.dims = 2;
  im.info.geometry.extent = {40, 30, 1, 1};
  im.info.pixel_kind = "scalar";
  im.planes.emplace_back(1200);
  for (int v = 0; v < 1200; ++v)
    im.planes[0][v] = static_cast<float>((v * 37) % 256);
  for (const char* ext : {".png", ".jpg", ".bmp"}) {
    SCOPED_TRACE(ext);
    const std::string full = dir / (std::string("full") + ext);
    io::write_image(full, im, ComponentType::UInt8, true);
    EXPECT_NO_THROW(io::read_image(full));
    const std::string bytes = read_bytes(full);
    const std::string half = dir / (std::string("half") + ext);
    write_bytes(half, bytes.substr(0, bytes.size() / 2));
    const std::string msg = error_of([&] { io::read_image(half); });
    EXPECT_EQ(msg.rfind(half + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
}

TEST(IoRead, BadFilesGiveOneLineErrorsNamingTheFile) {
  TempDir dir;
  const RawImage raw = make_raw(3, ComponentType::Int16, 1, fresh_seed());
  write_bytes(dir / "empty.nii", "");
  write_bytes(dir / "text.nii", "this is not an image, just some text that is long enough\n");
  write_meta(dir / "one.mha", raw, 1);
  write_meta(dir / "five.mha", raw, 5);
  write_nifti(dir / "complex.nii", raw, false, 0, 0, 32);
  write_meta(dir / "full.mha", raw);
  const std::string full = read_bytes(dir / "full.mha");
  write_bytes(dir / "truncated.mha", full.substr(0, full.size() - 40));
  io::write_image(dir / "full.nii.gz", io::read_image(dir / "full.mha"), ComponentType::Float32,
                  false);
  const std::string gz = read_bytes(dir / "full.nii.gz");
  write_bytes(dir / "truncated.nii.gz", gz.substr(0, gz.size() / 2));
  write_bytes(dir / "garbage.mha", "ObjectType = Image\nNDims = banana\nDimSize = x\n");
  fs::create_directory(dir / "folder.nii");
  const std::pair<std::string, std::string> cases[] = {
      {"missing.nii", "No such file"},
      {"empty.nii", "empty"},
      {"text.nii", "not an image"},
      {"one.mha", "1D image"},
      {"five.mha", "5D image"},
      {"complex.nii", "complex"},
      {"truncated.mha", "truncated"},
      {"truncated.nii.gz", "truncated"},
      {"garbage.mha", dir / "garbage.mha"},
      {"folder.nii", "is a folder"},
  };
  for (const auto& [name, expected] : cases) {
    const std::string path = dir / name;
    const std::string msg = error_of([&] { io::read_image(path); });
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << name << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace ndconv::test
