// The parallel encoders' files against ITK's own (WriteSettings::itk_encoder, ndconv's output
// before them): the same NIfTI bytes once decompressed, the same MetaImage header apart from the
// compressed length, the same pixels; .nii.gz passes `gzip -t`, MetaImage data inflates as one
// zlib stream, and ITK reads every file back to the values written.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/image.h"
#include "io/pixel_convert.h"
#include "test_data.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using io::ComponentType;

io::Image make_image(int dims, int components, uint64_t seed) {
  io::Image im;
  io::Geometry& g = im.info.geometry;
  g.dims = dims;
  g.extent = {37, 29, dims >= 3 ? 23 : 1, dims == 4 ? 5 : 1};
  g.spacing = {0.5, 0.75, 1.25, 0.04};
  g.origin = {-10.5, 20.25, 3.0, 0.0};
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  g.direction = {c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  im.info.components = components;
  im.info.pixel_kind = components == 1 ? "scalar" : "vector";
  const auto values = random_values(g.voxel_count() * components, seed);
  im.planes.resize(components);
  for (int k = 0; k < components; ++k) {
    im.planes[k].resize(static_cast<size_t>(g.voxel_count()));
    for (int64_t v = 0; v < g.voxel_count(); ++v)  // smooth plus noise: compresses somewhat
      im.planes[k][v] = static_cast<float>(
          std::round(100 * std::sin(v * 0.01) + 20 * values[k * g.voxel_count() + v]));
  }
  return im;
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while (f != nullptr && (n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  if (f != nullptr)
    gzclose(f);
  return out;
}

std::string inflate_zlib(const std::string& compressed, size_t size) {
  std::string out(size, '\0');
  uLongf n = static_cast<uLongf>(size);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &n,
                            reinterpret_cast<const Bytef*>(compressed.data()),
                            static_cast<uLong>(compressed.size()));
  return rc == Z_OK && n == size ? out : std::string("(inflate failed)");
}

// A MetaImage header's lines, without the compressed length (which depends on the encoder).
std::string meta_header(const std::string& file, size_t& header_bytes) {
  const std::string end = "ElementDataFile = ";
  const auto at = file.find(end);
  header_bytes = file.find('\n', at) + 1;
  std::string kept;
  size_t from = 0;
  while (from < header_bytes) {
    const size_t eol = file.find('\n', from) + 1;
    const std::string line = file.substr(from, eol - from);
    if (line.rfind("CompressedDataSize", 0) != 0)
      kept += line;
    from = eol;
  }
  return kept;
}

bool have_gzip() {
  return std::system("command -v gzip >/dev/null 2>&1") == 0;
}

TEST(IoEncode, CompressedOutputsEqualItksAndAreStandard) {
  TempDir ours, itk;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    int dims, components;
    ComponentType type;
  };
  const Case cases[] = {{3, 1, ComponentType::Float32},
                        {4, 1, ComponentType::UInt8},
                        {3, 3, ComponentType::Int16},
                        {2, 1, ComponentType::Float64}};
  for (const Case& c : cases) {
    const io::Image im = make_image(c.dims, c.components, seed + c.dims);
    const size_t data_bytes = static_cast<size_t>(im.info.geometry.voxel_count()) * c.components *
                              io::component_bytes(c.type);
    for (const int level : {1, 0, 9}) {
      io::WriteSettings fast;
      fast.compression = level;
      fast.threads = 3;
      io::WriteSettings reference;
      reference.itk_encoder = true;
      for (const std::string name : {"v.nii.gz", "v.nii", "v.mha", "v.mhd"}) {
        SCOPED_TRACE(name + " " + std::to_string(c.dims) + "D x" + std::to_string(c.components) +
                     " " + io::to_string(c.type) + " level " + std::to_string(level));
        io::write_image(ours / name, im, c.type, true, fast);
        io::write_image(itk / name, im, c.type, true, reference);
        if (name == "v.nii.gz" || name == "v.nii") {
          std::string a = gunzip(ours / name), b = gunzip(itk / name);  // gzread reads .nii too
          ASSERT_EQ(a.size(), b.size());
          if (c.dims == 4)  // ITK writes no time unit; ndconv says seconds (byte 123)
            a[123] = b[123];
          EXPECT_TRUE(a == b);
          if (name == "v.nii.gz" && have_gzip()) {
            const std::string t = "gzip -t '" + ours / name + "'";
            EXPECT_EQ(std::system(t.c_str()), 0);
          }
        } else {
          const bool single = name == "v.mha";
          const std::string a = read_bytes(ours / name), b = read_bytes(itk / name);
          size_t ha = 0, hb = 0;
          const std::string header_a = meta_header(a, ha), header_b = meta_header(b, hb);
          const std::string data_b = single ? b.substr(hb) : read_bytes(itk / "v.zraw");
          const std::string raw_b = inflate_zlib(data_b, data_bytes);
          if (level == 0) {  // stored: ITK's header for an uncompressed file, raw data
            EXPECT_NE(header_a.find("CompressedData = False"), std::string::npos) << header_a;
            EXPECT_EQ(single ? a.substr(ha) : read_bytes(ours / "v.raw"), raw_b);
          } else {
            EXPECT_EQ(header_a, header_b);
            const std::string data_a = single ? a.substr(ha) : read_bytes(ours / "v.zraw");
            const size_t field = a.find("CompressedDataSize = ");
            ASSERT_NE(field, std::string::npos);
            EXPECT_EQ(std::stoull(a.substr(field + 21, a.find('\n', field) - field - 21)),
                      data_a.size());
            EXPECT_TRUE(inflate_zlib(data_a, data_bytes) == raw_b);
          }
        }
        // ITK reads ours back to the values written.
        const io::Image back = io::read_image(ours / name);
        ASSERT_EQ(back.planes.size(), im.planes.size());
        for (size_t k = 0; k < im.planes.size(); ++k)
          for (size_t v = 0; v < im.planes[k].size(); ++v)
            ASSERT_EQ(back.planes[k][v],
                      static_cast<float>(io::convert_value(im.planes[k][v], c.type)));
        for (const auto& n : ours.list())
          std::remove((ours / n).c_str());
      }
    }
  }
}

// Type conversion on all cores gives the bytes and the report of one thread, block boundaries
// and NaN / out-of-range values included.
TEST(IoEncode, ConversionOnManyThreadsEqualsOneThread) {
  const int64_t voxels = (int64_t(1) << 18) * 3 + 12345;
  const auto noise = random_values(voxels * 2, fresh_seed());
  std::vector<std::vector<float>> planes(2, std::vector<float>(static_cast<size_t>(voxels)));
  for (int64_t v = 0; v < voxels; ++v) {
    planes[0][v] = static_cast<float>(noise[v] * 400.0);
    planes[1][v] = static_cast<float>(noise[voxels + v] * 40000.0);
  }
  planes[0][5] = std::nanf("");
  planes[1][(1 << 18) + 1] = -INFINITY;
  for (const ComponentType t :
       {ComponentType::UInt8, ComponentType::Int16, ComponentType::Float32}) {
    SCOPED_TRACE(io::to_string(t));
    std::vector<char> one, many;
    io::WriteReport r1, r4;
    io::planes_to_native(planes, t, voxels, one, r1, 1);
    io::planes_to_native(planes, t, voxels, many, r4, 4);
    EXPECT_TRUE(one == many);
    EXPECT_EQ(r1.clamped, r4.clamped);
    EXPECT_EQ(r1.nan_zeroed, r4.nan_zeroed);
    EXPECT_EQ(r1.min, r4.min);
    EXPECT_EQ(r1.max, r4.max);
    if (t == ComponentType::Float32) {  // floats keep every value: nothing to count
      EXPECT_EQ(r1.clamped + r1.nan_zeroed + r1.min + r1.max, 0);
    }
    std::vector<std::vector<float>> back1, back4;
    io::native_to_planes(one.data(), t, 2, voxels, back1, 1);
    io::native_to_planes(one.data(), t, 2, voxels, back4, 4);
    for (int c = 0; c < 2; ++c)  // bytes, since a float32 NaN is not equal to itself
      EXPECT_EQ(std::memcmp(back1[c].data(), back4[c].data(), back1[c].size() * sizeof(float)), 0);
    for (int64_t v = 0; v < voxels; v += 997)
      ASSERT_EQ(back4[1][v], static_cast<float>(io::convert_value(planes[1][v], t)));
  }
}

// A .nii.gz from another program (one gzip member, zlib) reads; cut short, it is refused.
TEST(IoEncode, ForeignGzipIsReadAndItsLengthChecked) {
  TempDir dir;
  const io::Image im = make_image(3, 1, fresh_seed());
  io::write_image(dir / "v.nii", im, ComponentType::Float32, false);
  const std::string raw = read_bytes(dir / "v.nii");
  for (const size_t keep : {raw.size(), raw.size() - 1000}) {
    gzFile f = gzopen((dir / "g.nii.gz").c_str(), "wb6");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, raw.data(), static_cast<unsigned>(keep)), static_cast<int>(keep));
    gzclose(f);
    if (keep == raw.size()) {
      const io::Image back = io::read_image(dir / "g.nii.gz");
      EXPECT_TRUE(back.planes == io::read_image(dir / "v.nii").planes);
    } else {
      try {
        io::read_image(dir / "g.nii.gz");
        ADD_FAILURE() << "a short file was read";
      } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(IoEncode, CompressionLevelOutsideZeroToNineIsRefused) {
  TempDir dir;
  io::WriteSettings s;
  s.compression = 10;
  EXPECT_THROW(
      io::write_image(dir / "x.nii.gz", make_image(2, 1, 1), ComponentType::Float32, false, s),
      io::RequestError);
  EXPECT_TRUE(dir.list().empty());
}

}  // namespace
}  // namespace ndconv::test
