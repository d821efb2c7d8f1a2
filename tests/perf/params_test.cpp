// Sweep parameter parsing: lists, ranges, extents, and the one-line errors for bad text.
#include <gtest/gtest.h>

#include "ndconv/errors.h"
#include "perf/params.h"

namespace ndconv::perf {
namespace {

TEST(ParseIntList, ListsAndRanges) {
  EXPECT_EQ(parse_int_list("1,2,4,8,16", "ko"), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_int_list("3:15:2", "f"), (std::vector<int64_t>{3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(parse_int_list("3:6", "f"), (std::vector<int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(parse_int_list("3:8:2", "f"), (std::vector<int64_t>{3, 5, 7}));  // last not hit
  EXPECT_EQ(parse_int_list("1,5:9:4,32", "f"), (std::vector<int64_t>{1, 5, 9, 32}));
  EXPECT_EQ(parse_int_list("7", "f"), (std::vector<int64_t>{7}));
}

TEST(ParseIntList, RejectsBadText) {
  for (const char* bad :
       {"", "a", "1,,2", "3:1", "1:5:0", "1:5:-1", "1:2:3:4", "2.5", "1,x", "0", "1:99999999"}) {
    EXPECT_THROW(parse_int_list(bad, "--ko", 1, 1 << 20), InvalidArgument) << bad;
  }
  try {
    parse_int_list("3:x", "--filters");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("--filters"), std::string::npos);
  }
}

TEST(ParseIntList, Bounds) {
  EXPECT_THROW(parse_int_list("3:33:2", "--filters", 1, 31), InvalidArgument);
  EXPECT_EQ(parse_int_list("31", "--filters", 1, 31).back(), 31);
}

TEST(ParseShape, Extents) {
  const Shape s = parse_shape("256x128x64", "v");
  EXPECT_EQ(s.dims, 3);
  EXPECT_EQ(s.extent, (Index{256, 128, 64, 1}));
  EXPECT_EQ(s.count(), 256 * 128 * 64);
  EXPECT_EQ(format_shape(s), "256x128x64");
  EXPECT_EQ(parse_shape("160x160x160x20", "v").dims, 4);
  const auto list = parse_shape_list("4096x4096,128x128x128x16", "v");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].dims, 2);
  EXPECT_EQ(list[1].extent[3], 16);
}

TEST(ParseShape, RejectsBadText) {
  for (const char* bad : {"", "256", "1x2x3x4x5", "0x4", "4x-1", "axb", "4x", "x4", "4X4"})
    EXPECT_THROW(parse_shape(bad, "--volumes"), InvalidArgument) << bad;
}

TEST(Cube, Extents) {
  EXPECT_EQ(cube(4, 9).extent, (Index{9, 9, 9, 9}));
  EXPECT_EQ(cube(2, 17).count(), 289);
}

}  // namespace
}  // namespace ndconv::perf
