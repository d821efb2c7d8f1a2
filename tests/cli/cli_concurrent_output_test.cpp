// Issue 48, class 5, at the level of processes: several `ndconv` commands writing one output at
// once. Exactly one succeeds and the others fail with a clear message (exit 2), the output being
// the whole of the winner's; with --force every one succeeds and the output is one command's
// whole result; an output that is a FIFO is never replaced, even with --force.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cli_run.h"
#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

constexpr int kCommands = 4;

struct Outcome {
  std::vector<int> codes;
  std::vector<std::string> errors;
};

// Runs `ndconv convert in<i>.mha OUT [extra]` for every i at once (one shell, background jobs).
Outcome convert_all_at_once(const TempDir& dir, const std::string& out, const std::string& extra) {
  std::string script;
  for (int i = 0; i < kCommands; ++i) {
    const std::string n = std::to_string(i);
    script += "(" + shell_quote(NDCONV_CLI_PATH) + " convert " +
              shell_quote(dir / ("in" + n + ".mha")) + " " + shell_quote(out) + " " + extra +
              " >/dev/null 2>" + shell_quote(dir / ("err" + n)) + " </dev/null; echo $? >" +
              shell_quote(dir / ("code" + n)) + ") & ";
  }
  script += "wait";
  EXPECT_EQ(std::system(("bash -c " + shell_quote(script)).c_str()), 0);
  Outcome o;
  for (int i = 0; i < kCommands; ++i) {
    o.codes.push_back(std::stoi(read_bytes(dir / ("code" + std::to_string(i)))));
    o.errors.push_back(read_bytes(dir / ("err" + std::to_string(i))));
  }
  return o;
}

class CliConcurrentOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kCommands; ++i) {
      RawImage raw;
      raw.dims = 3;
      raw.extent = {64, 64, 32, 1};
      raw.type = io::ComponentType::Float32;
      raw.values.assign(static_cast<size_t>(raw.voxels()), static_cast<double>(i + 1));
      write_meta(dir / ("in" + std::to_string(i) + ".mha"), raw);
    }
  }
  // The output holds one input's values, all of them.
  void expect_one_whole_input(const std::string& out) {
    const io::Image image = io::read_image(out);
    const float first = image.planes[0][0];
    EXPECT_TRUE(first >= 1 && first <= kCommands) << first;
    for (float v : image.planes[0])
      ASSERT_EQ(v, first);
  }
  TempDir dir;
};

TEST_F(CliConcurrentOutput, ExactlyOneCommandWritesANewOutput) {
  for (int round = 0; round < 3; ++round) {
    const std::string out = dir / ("out" + std::to_string(round) + ".nii.gz");
    const Outcome o = convert_all_at_once(dir, out, "");
    int won = 0;
    for (int i = 0; i < kCommands; ++i) {
      if (o.codes[i] == 0) {
        ++won;
        continue;
      }
      EXPECT_EQ(o.codes[i], 2) << o.errors[i];
      const bool clear = o.errors[i].find("exists; use --force") != std::string::npos ||
                         o.errors[i].find("was created by another program") != std::string::npos;
      EXPECT_TRUE(clear) << o.errors[i];
    }
    EXPECT_EQ(won, 1);
    expect_one_whole_input(out);
  }
}

TEST_F(CliConcurrentOutput, WithForceEveryCommandSucceedsAndOneWinsWhole) {
  const std::string out = dir / "forced.nii.gz";
  const Outcome o = convert_all_at_once(dir, out, "--force");
  for (int i = 0; i < kCommands; ++i)
    EXPECT_EQ(o.codes[i], 0) << o.errors[i];
  expect_one_whole_input(out);
}

TEST_F(CliConcurrentOutput, AFifoOutputIsNotReplacedEvenWithForce) {
  const std::string fifo = dir / "fifo.nii.gz";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CliResult r = run_ndconv({"convert", dir / "in0.mha", fifo, "--force"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace ndconv::test
