// JSON and CSV output: documents that parse back with their fields (non-finite numbers as null),
// CSV header and rows with quoting and empty fields, files never half-written and never
// overwritten without asking; and the timing statistics.
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Json, WrittenDocumentParsesBackWithItsFields) {
  Json doc = {{"name", "H100 \"SXM\"\n"},
              {"peak", 65.5},
              {"none", std::numeric_limits<double>::infinity()},
              {"missing", kNaN},
              {"n", int64_t{1} << 40},
              {"rows", Json::array({Json{{"k", 3}}, Json{{"k", 5}}})}};
  doc["peak"] = 66.25;  // replaces, keeps the position
  const Json back = Json::parse(doc.dump(2));
  EXPECT_EQ(back["name"], "H100 \"SXM\"\n");
  EXPECT_EQ(back["peak"], 66.25);
  EXPECT_TRUE(back["none"].is_null());
  EXPECT_TRUE(back["missing"].is_null());
  EXPECT_EQ(back["n"], int64_t{1} << 40);
  ASSERT_EQ(back["rows"].size(), 2u);
  EXPECT_EQ(back["rows"][1]["k"], 5);
  EXPECT_EQ(back.begin().key(), "name");  // keys in the order written
  EXPECT_EQ(std::next(back.begin()).key(), "peak");
}

TEST(Json, BytesThatAreNotUtf8AreReplacedNotFatal) {
  const Json doc = {{"command", std::string("ndconv sweep --csv caf\xe9.csv")}};
  const std::string written = json_text(doc);
  EXPECT_EQ(written.back(), '\n');
  const Json back = Json::parse(written);
  EXPECT_EQ(back["command"].get<std::string>().rfind("ndconv sweep --csv caf", 0), 0u);
}

TEST(Json, TextAndNumberOfMembers) {
  const Json row = {{"s", "a b"},   {"i", 7},      {"x", 2.5},    {"b", true},
                    {"z", nullptr}, {"nan", kNaN}, {"big", 1e300}};
  EXPECT_EQ(text(row, "s"), "a b");
  EXPECT_EQ(text(row, "i"), "7");
  EXPECT_EQ(text(row, "x"), "2.5");
  EXPECT_EQ(text(row, "b"), "true");
  EXPECT_EQ(text(row, "z"), "");
  EXPECT_EQ(text(row, "nan"), "");
  EXPECT_EQ(text(row, "absent"), "");
  EXPECT_EQ(number(row, "x"), 2.5);
  EXPECT_EQ(number(row, "i"), 7.0);
  EXPECT_TRUE(std::isnan(number(row, "z")));
  EXPECT_TRUE(std::isnan(number(row, "s")));
  EXPECT_TRUE(std::isnan(number(row, "absent")));
  EXPECT_EQ(std::stod(text(row, "big")), 1e300);
}

TEST(Csv, HeaderAndRows) {
  const std::vector<Json> rows = {
      {{"ko", 1}, {"ms", 2.5}, {"name", "a,b"}, {"ok", true}},
      {{"ko", 2}, {"ms", kNaN}, {"name", "say \"hi\""}, {"ok", false}},
      {{"ko", nullptr}, {"name", "line\nbreak"}}};  // a missing column is an empty field
  std::ostringstream s;
  write_csv(s, rows);
  EXPECT_EQ(s.str(),
            "ko,ms,name,ok\n"
            "1,2.5,\"a,b\",true\n"
            "2,,\"say \"\"hi\"\"\",false\n"
            ",,\"line\nbreak\",\n");
  std::ostringstream none;
  write_csv(none, {});
  EXPECT_EQ(none.str(), "");
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
