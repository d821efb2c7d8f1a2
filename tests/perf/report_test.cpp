// CSV and JSON writing: header and rows, quoting, non-finite numbers, files never half-written
// and never overwritten without asking.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "ndconv/errors.h"
#include "perf/gpu.h"
#include "perf/report.h"

namespace ndconv::perf {
namespace {

TEST(Csv, HeaderAndRows) {
  std::vector<Json> rows;
  rows.push_back(Json::object().set("ko", 1).set("ms", 2.5).set("name", "a,b").set("ok", true));
  rows.push_back(Json::object()
                     .set("ko", 2)
                     .set("ms", std::numeric_limits<double>::quiet_NaN())
                     .set("name", "say \"hi\"")
                     .set("ok", false));
  std::ostringstream s;
  write_csv(s, rows);
  EXPECT_EQ(s.str(),
            "ko,ms,name,ok\n"
            "1,2.5,\"a,b\",true\n"
            "2,,\"say \"\"hi\"\"\",false\n");
}

TEST(Csv, RowsMustMatchTheHeader) {
  std::vector<Json> rows{Json::object().set("a", 1).set("b", 2), Json::object().set("a", 1)};
  std::ostringstream s;
  EXPECT_THROW(write_csv(s, rows), std::invalid_argument);
  rows[1] = Json::object().set("b", 1).set("a", 2);
  EXPECT_THROW(write_csv(s, rows), std::invalid_argument);
}

TEST(Json, Document) {
  Json j = Json::object()
               .set("name", "H100 \"SXM\"\n")
               .set("peak", 65.5)
               .set("none", std::numeric_limits<double>::infinity())
               .set("n", int64_t{1} << 40)
               .set("list", Json::array().push(1).push(2))
               .set("rows", Json::array().push(Json::object().set("k", 3)));
  j.set("peak", 66.0);  // replaces, keeps the position
  EXPECT_EQ(j.dump(),
            "{\n  \"name\": \"H100 \\\"SXM\\\"\\n\",\n  \"peak\": 66,\n  \"none\": null,\n"
            "  \"n\": 1099511627776,\n  \"list\": [1,2],\n  \"rows\": [\n    {\n      \"k\": 3\n"
            "    }\n  ]\n}");
  ASSERT_NE(j.find("n"), nullptr);
  EXPECT_EQ(j.find("missing"), nullptr);
}

TEST(WriteFile, RefusesToOverwriteAndLeavesNoTemporary) {
  const std::string path = ::testing::TempDir() + "ndconv_perf_write_file.txt";
  std::remove(path.c_str());
  write_file(path, "one\n", false);
  EXPECT_THROW(write_file(path, "two\n", false), InvalidArgument);
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "one");
  write_file(path, "three\n", true);
  std::ifstream g(path);
  std::getline(g, line);
  EXPECT_EQ(line, "three");
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  EXPECT_THROW(write_file("/nonexistent-dir/x.csv", "x", true), InvalidArgument);
  std::remove(path.c_str());
}

TEST(Summarize, MedianAndMinimum) {
  Timing t = summarize({5, 1, 3});
  EXPECT_EQ(t.median_ms, 3);
  EXPECT_EQ(t.min_ms, 1);
  t = summarize({4, 1, 3, 2});
  EXPECT_EQ(t.median_ms, 2.5);
  EXPECT_EQ(t.samples_ms.size(), 4u);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

}  // namespace
}  // namespace ndconv::perf
