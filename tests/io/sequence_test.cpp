// Issue 47: 3D Slicer volume sequences (.seq.nrrd) read as 4D images, in both axis orders (list
// axis last, as Slicer writes them now, or first, as older files do), the index values as the
// time axis's positions where evenly spaced and an error naming the problem where not; written
// back as a sequence with the input's custom fields. Every file is written here, by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

constexpr int kX = 4, kY = 3, kZ = 2, kT = 3;

int16_t value_at(int x, int y, int z, int t) {
  return static_cast<int16_t>(1000 * t + 100 * z + 10 * y + x - 50);
}

// The items' voxels, list axis last (x fastest, t slowest) or first (t fastest).
std::string sequence_data(bool list_first) {
  std::string data;
  auto add = [&](int16_t v) { data.append(reinterpret_cast<const char*>(&v), 2); };
  if (list_first) {
    for (int z = 0; z < kZ; ++z)
      for (int y = 0; y < kY; ++y)
        for (int x = 0; x < kX; ++x)
          for (int t = 0; t < kT; ++t)
            add(value_at(x, y, z, t));
  } else {
    for (int t = 0; t < kT; ++t)
      for (int z = 0; z < kZ; ++z)
        for (int y = 0; y < kY; ++y)
          for (int x = 0; x < kX; ++x)
            add(value_at(x, y, z, t));
  }
  return data;
}

std::string sequence_file(bool list_first, const std::string& space, const std::string& values,
                          const std::string& extra = "") {
  const std::string axis = list_first ? "0" : "3";
  const std::string sizes = list_first ? "3 4 3 2" : "4 3 2 3";
  const std::string dirs = "(0.5,0,0) (0,0.75,0) (0,0,2)";
  return "NRRD0004\ntype: short\ndimension: 4\nspace: " + space + "\nsizes: " + sizes +
         "\nspace directions: " + (list_first ? "none " + dirs : dirs + " none") +
         "\nkinds: " + (list_first ? "list domain domain domain" : "domain domain domain list") +
         "\nendian: little\nencoding: raw\nspace origin: (10,20,30)\n" +
         "DataNodeClassName:=vtkMRMLScalarVolumeNode\naxis " + axis + " index type:=numeric\n" +
         (values.empty() ? "" : "axis " + axis + " index values:=" + values + "\n") + extra + "\n" +
         sequence_data(list_first);
}

void expect_sequence(const io::Image& image, double t0, double dt) {
  const io::Geometry& g = image.info.geometry;
  ASSERT_EQ(g.dims, 4);
  ASSERT_EQ(g.extent, (Index{kX, kY, kZ, kT}));
  ASSERT_EQ(image.planes.size(), 1u);
  EXPECT_DOUBLE_EQ(g.spacing[1], 0.75);
  EXPECT_DOUBLE_EQ(g.spacing[2], 2.0);
  EXPECT_DOUBLE_EQ(g.spacing[3], dt);
  EXPECT_DOUBLE_EQ(g.origin[3], t0);
  EXPECT_DOUBLE_EQ(g.direction[3 * kMaxDims + 3], 1.0);
  int64_t i = 0;
  for (int t = 0; t < kT; ++t)
    for (int z = 0; z < kZ; ++z)
      for (int y = 0; y < kY; ++y)
        for (int x = 0; x < kX; ++x)
          ASSERT_EQ(image.planes[0][i++], value_at(x, y, z, t)) << x << y << z << t;
}

TEST(SlicerSequence, BothAxisOrdersReadAsTime) {
  TempDir dir;
  for (const bool list_first : {false, true}) {
    SCOPED_TRACE(list_first ? "list axis first" : "list axis last");
    const std::string path = dir / (list_first ? "old.seq.nrrd" : "new.seq.nrrd");
    write_bytes(path, sequence_file(list_first, "left-posterior-superior", "0.25 0.3 0.35"));
    const io::Image image = io::read_image(path);
    expect_sequence(image, 0.25, 0.05);
    EXPECT_DOUBLE_EQ(image.info.geometry.origin[0], 10.0);
    EXPECT_DOUBLE_EQ(image.info.geometry.direction[0], 1.0);
    EXPECT_EQ(io::read_info(path).geometry.extent, image.info.geometry.extent);
  }
  // Right-anterior-superior: x and y turned into ITK's left-posterior-superior.
  write_bytes(dir / "ras.seq.nrrd", sequence_file(false, "right-anterior-superior", "0 1 2"));
  const io::Image ras = io::read_image(dir / "ras.seq.nrrd");
  expect_sequence(ras, 0, 1);
  EXPECT_DOUBLE_EQ(ras.info.geometry.origin[0], -10.0);
  EXPECT_DOUBLE_EQ(ras.info.geometry.origin[1], -20.0);
  EXPECT_DOUBLE_EQ(ras.info.geometry.origin[2], 30.0);
  EXPECT_DOUBLE_EQ(ras.info.geometry.direction[0], -1.0);
  EXPECT_DOUBLE_EQ(ras.info.geometry.direction[1 * kMaxDims + 1], -1.0);
  // No index values: items 0, 1, 2.
  write_bytes(dir / "plain.seq.nrrd", sequence_file(false, "left-posterior-superior", ""));
  expect_sequence(io::read_image(dir / "plain.seq.nrrd"), 0, 1);
}

TEST(SlicerSequence, IndexValuesThatAreNotATimeAxisAreRefused) {
  TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"0 1 3", "is not evenly spaced: item 2 is at 3 where 2 was expected"},
      {"0 1", "gives 2 positions for 3 items"},
      {"a b c", "not a number"},
      {"2 1 0", "does not increase"},
      {"0 0 0", "does not increase"}};
  int n = 0;
  for (const auto& [values, expected] : cases) {
    const std::string path = dir / ("bad" + std::to_string(n++) + ".seq.nrrd");
    write_bytes(path, sequence_file(n % 2 == 0, "left-posterior-superior", values));
    try {
      (void)io::read_image(path);
      ADD_FAILURE() << values;
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
    }
  }
}

TEST(SlicerSequence, WrittenAsASequenceWithTheInputsCustomFields) {
  TempDir dir;
  for (const bool list_first : {false, true}) {
    SCOPED_TRACE(list_first ? "list axis first" : "list axis last");
    const std::string in = dir / (list_first ? "old.seq.nrrd" : "new.seq.nrrd");
    write_bytes(in, sequence_file(list_first, "left-posterior-superior", "0.25 0.3 0.35",
                                  "MyField:=kept value\n"));
    const io::Image image = io::read_image(in);
    for (const int level : {0, 1}) {
      const std::string out =
          dir / ("out" + std::to_string(list_first) + "_" + std::to_string(level) + ".seq.nrrd");
      io::WriteSettings settings;
      settings.compression = level;
      io::write_image(out, image, io::ComponentType::Int16, false, settings);
      const std::string text = read_bytes(out);
      const std::string header = text.substr(0, text.find("\n\n"));
      for (const char* line : {"kinds: domain domain domain list",
                               "space directions: (0.5,0,0) (0,0.75,0) (0,0,2) none",
                               "axis 3 index values:=0.25 0.3 0.35", "axis 3 index type:=numeric",
                               "DataNodeClassName:=vtkMRMLScalarVolumeNode", "MyField:=kept value",
                               "space origin: (10,20,30)"})
        EXPECT_NE(header.find(line), std::string::npos) << line << "\n" << header;
      EXPECT_EQ(header.find("axis 0 index"), std::string::npos) << header;
      expect_sequence(io::read_image(out), 0.25, 0.05);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
