// Outputs that cannot be half-done and output names that cannot hit what the user did not name:
// a write past a file size limit (ulimit -f, which lowers RLIMIT_FSIZE for any user, root or
// not) fails with the system's reason and leaves nothing for every output format; paths are
// compared by what they resolve to; companion files are counted; awkward but legal names work.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "io/image.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

RawImage volume(int dims, Index extent, uint64_t seed) {
  RawImage im;
  im.dims = dims;
  im.extent = extent;
  im.values = random_for_type(im.voxels(), ComponentType::Float32, seed);
  return im;
}

// Runs ndconv under `ulimit -f KIB` (blocks of 1 KiB); ndconv itself ignores SIGXFSZ, so a
// write past the limit fails with EFBIG instead of killing it.
CliResult run_limited(int kib, const std::vector<std::string>& args) {
  static TempDir logs;
  std::string line = "ulimit -f " + std::to_string(kib) + "; exec " + shell_quote(NDCONV_CLI_PATH);
  for (const auto& a : args)
    line += " " + shell_quote(a);
  line +=
      " >" + shell_quote(logs / "stdout") + " 2>" + shell_quote(logs / "stderr") + " </dev/null";
  const std::string cmd = "/bin/sh -c " + shell_quote(line);
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_bytes(logs / "stderr");
  return r;
}

class CliOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = fresh_seed();
    write_meta(in_ / "in3d.mha", volume(3, {40, 36, 30, 1}, seed));
    write_meta(in_ / "in4d.mha", volume(4, {24, 20, 16, 6}, seed + 1));
    RawImage flat = volume(2, {300, 280, 1, 1}, seed + 2);
    flat.type = ComponentType::UInt8;
    flat.values = random_for_type(flat.voxels(), ComponentType::UInt8, seed + 3);
    write_meta(in_ / "in2d.mha", flat);
  }
  TempDir in_, out_;
};

TEST_F(CliOutput, FileSizeLimitFailsEveryFormatWithTheReasonAndLeavesNothing) {
  struct Case {
    std::string input, output;
    std::vector<std::string> extra;
  };
  const Case cases[] = {
      {"in3d.mha", "o.nii", {}},
      {"in3d.mha", "o.nii.gz", {"--compression", "0"}},
      {"in3d.mha", "o.nii.gz", {}},
      {"in3d.mha", "o.mha", {}},
      {"in3d.mha", "o.mhd", {}},
      {"in3d.mha", "o.mhd", {"--compression", "0"}},
      {"in3d.mha", "o.hdr", {}},
      {"in4d.mha", "o4.nii", {}},
      {"in4d.mha", "o4.nii.gz", {}},
      {"in2d.mha", "o.png", {"--type", "uint8"}},
      {"in2d.mha", "o.jpg", {"--type", "uint8"}},
      {"in2d.mha", "o.bmp", {"--type", "uint8"}},
      {"in3d.mha", "o.tif", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.output + (c.extra.empty() ? "" : " " + c.extra[0]));
    std::vector<std::string> args = {"smooth", in_ / c.input, out_ / c.output, "--sigma",
                                     "1vox",   "--device",    "cpu",           "-q"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const CliResult r = run_limited(8, args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err.rfind("ndconv: error: " + out_ / c.output, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(out_.list().empty()) << out_.list().front();
    // Without the limit the same command succeeds (the limit, not the command, failed it).
    const CliResult ok = run_ndconv(args);
    EXPECT_EQ(ok.code, 0) << ok.err;
    for (const auto& name : out_.list())
      fs::remove(out_ / name);
  }
}

TEST_F(CliOutput, PathsAreComparedByWhatTheyResolveTo) {
  const std::string in = in_ / "in2d.mha";
  fs::create_directory(out_ / "s");
  fs::create_symlink(out_.path(), out_ / "link");
  const std::string out = out_ / "o.png";
  for (const std::string& alias : {out_ / "s/../o.png", out_ / "link/o.png"}) {
    SCOPED_TRACE(alias);
    for (const bool force : {false, true}) {
      std::vector<std::string> args = {"smooth", in,      out,         "--sigma", "1vox",
                                       "--type", "uint8", "--preview", alias,     "-q"};
      if (force)
        args.push_back("--force");
      const CliResult r = run_ndconv(args);
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_NE(r.err.find("the preview and the output are the same file"), std::string::npos)
          << r.err;
      EXPECT_FALSE(fs::exists(out));
    }
  }
  // The input reached through `..` is the input.
  const std::string in_alias = in_ / "../" + fs::path(in_.path()).filename().string() + "/in3d.mha";
  const CliResult r = run_ndconv({"smooth", in_ / "in3d.mha", in_alias, "--sigma", "1vox", "-q"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
}

TEST_F(CliOutput, CompanionFilesAreNeverReplacedUnlessTheirTargetIs) {
  const std::string in = in_ / "in3d.mha";
  write_bytes(out_ / "scan.img", "the user's own file");
  write_bytes(out_ / "vol.zraw", "another file of the user");
  for (const std::string target : {"scan.hdr", "vol.mhd"}) {
    SCOPED_TRACE(target);
    for (const bool force : {false, true}) {
      std::vector<std::string> args = {"smooth", in, out_ / target, "--sigma", "1vox", "-q"};
      if (force)
        args.push_back("--force");
      const CliResult r = run_ndconv(args);
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_NE(r.err.find(force ? "is not part of" : "use --force"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(read_bytes(out_ / "scan.img"), "the user's own file");
  EXPECT_EQ(read_bytes(out_ / "vol.zraw"), "another file of the user");
  EXPECT_EQ(out_.list().size(), 2u);
  // A pair that exists is one image: --force replaces both.
  fs::remove(out_ / "scan.img");
  ASSERT_EQ(run_ndconv({"smooth", in, out_ / "scan.hdr", "--sigma", "1vox", "-q"}).code, 0);
  const CliResult again =
      run_ndconv({"smooth", in, out_ / "scan.hdr", "--sigma", "2vox", "-q", "--force"});
  EXPECT_EQ(again.code, 0) << again.err;
}

TEST_F(CliOutput, AwkwardButLegalNamesWork) {
  const std::string in = in_ / "in3d.mha";
  const io::Image input = io::read_image(in);
  std::vector<std::string> names = {"x.nii.nii", "x.nii.nii.gz", "a%d.nii.gz",
                                    "b%s.mha",   "c%n%s.nii",    "d.mhd.mha"};
  names.push_back(std::string(247 - 7, 'n') + ".nii.gz");  // 247 bytes in all
  for (const std::string& name : names) {
    SCOPED_TRACE(name.size() > 40 ? "247-byte name" : name);
    const CliResult r = run_ndconv({"smooth", in, out_ / name, "--sigma", "1vox", "-q"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(out_.list(), std::vector<std::string>{name});
    const io::Image back = io::read_image(out_ / name);
    EXPECT_EQ(back.info.geometry.extent, input.info.geometry.extent);
    fs::remove(out_ / name);
  }
  // A .mhd whose data file name would hold '%' is refused before any work, with the reason.
  const CliResult r = run_ndconv({"smooth", in, out_ / "e%s.mhd", "--sigma", "1vox", "-q"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("'%'"), std::string::npos) << r.err;
  EXPECT_TRUE(out_.list().empty());
}

// SIGINT or SIGTERM at any moment (reading, filtering, compressing, renaming) ends ndconv with
// 130 and leaves no temporary file; an output is either complete or absent.
namespace {

// Waits until process `pid` catches SIGINT and SIGTERM (its handler is installed, as /proc shows),
// so that a signal sent afterwards tests ndconv's handling, not the start-up before main().
void wait_for_signal_handlers(pid_t pid) {
  const uint64_t wanted = (uint64_t{1} << (SIGINT - 1)) | (uint64_t{1} << (SIGTERM - 1));
  for (int i = 0; i < 5000; ++i) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigCgt:", 0) == 0 &&
          (std::stoull(line.substr(7), nullptr, 16) & wanted) == wanted)
        return;
    }
    ::usleep(1000);
  }
}

}  // namespace

TEST_F(CliOutput, InterruptAtAnyStageLeavesNoTemporaryFile) {
  write_meta(in_ / "big.mha", volume(4, {64, 64, 48, 6}, fresh_seed()));
  const std::string out = out_ / "o.nii.gz";
  int interrupted = 0;
  for (const int delay_ms : {0, 300, 800}) {
    for (const int sig : {SIGINT, SIGTERM}) {
      SCOPED_TRACE("signal " + std::to_string(sig) + " after " + std::to_string(delay_ms) + " ms");
      const pid_t child = ::fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(null_fd, STDERR_FILENO);
        ::execl(NDCONV_CLI_PATH, "ndconv", "smooth", (in_ / "big.mha").c_str(), out.c_str(),
                "--sigma", "2vox", "--compression", "9", "--threads", "1", "--device", "cpu", "-q",
                static_cast<char*>(nullptr));
        ::_exit(127);
      }
      wait_for_signal_handlers(child);
      ::usleep(static_cast<useconds_t>(delay_ms) * 1000);
      ::kill(child, sig);
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
      const int code = WEXITSTATUS(status);
      const auto names = out_.list();
      EXPECT_TRUE(code == 0 || code == 130) << code;
      interrupted += code == 130;
      // Either nothing, or the complete output (a signal during the renames waits for them).
      if (code == 0 || !names.empty()) {
        EXPECT_EQ(names, std::vector<std::string>{"o.nii.gz"});
        EXPECT_EQ(io::read_image(out).info.geometry.extent, (Index{64, 64, 48, 6}));
      }
      for (const auto& n : names)
        fs::remove(out_ / n);
    }
  }
  EXPECT_GT(interrupted, 0);  // the run is long enough for the early signals to land
}

// `IN... -o DIR` and `--list`: every good input is written under its own name, a bad one is
// reported by name while the rest go on, the exit code says that one failed, and nothing
// half-written or temporary remains.
TEST_F(CliOutput, BatchesWriteEveryGoodInputAndNameTheBadOnes) {
  const uint64_t seed = fresh_seed();
  std::vector<std::string> inputs;
  for (int i = 0; i < 3; ++i) {
    inputs.push_back(in_ / ("v" + std::to_string(i) + ".nii.gz"));
    io::write_image(inputs.back(), io::read_image(in_ / "in3d.mha"), ComponentType::Float32, false);
  }
  write_bytes(in_ / "bad.nii.gz", "not an image");
  const std::vector<std::string> good_and_bad = {inputs[0], in_ / "bad.nii.gz", inputs[1],
                                                 inputs[2]};
  std::vector<std::string> args = {"smooth", "--sigma", "1vox", "-q", "-o", out_.path()};
  args.insert(args.end(), good_and_bad.begin(), good_and_bad.end());
  const CliResult r = run_ndconv(args);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(in_ / "bad.nii.gz"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 4 inputs failed"), std::string::npos) << r.err;
  EXPECT_EQ(out_.list(), (std::vector<std::string>{"v0.nii.gz", "v1.nii.gz", "v2.nii.gz"}));
  // Each output is what the single command writes.
  const CliResult single =
      run_ndconv({"smooth", inputs[1], in_ / "single.nii.gz", "--sigma", "1vox", "-q"});
  ASSERT_EQ(single.code, 0) << single.err;
  EXPECT_TRUE(io::read_image(out_ / "v1.nii.gz").planes ==
              io::read_image(in_ / "single.nii.gz").planes);

  // The same inputs from a list file; existing outputs need --force; convolve takes the kernel
  // last.
  write_bytes(in_ / "list.txt", inputs[0] + "\n# a comment\n" + inputs[2] + "\n");
  const CliResult exists = run_ndconv(
      {"smooth", "--sigma", "1vox", "-q", "-o", out_.path(), "--list", in_ / "list.txt"});
  EXPECT_EQ(exists.code, 1);
  // When every input failed the summary says so, and claims nothing was written.
  EXPECT_NE(exists.err.find("all 2 inputs failed (named above); nothing was written"),
            std::string::npos)
      << exists.err;
  EXPECT_EQ(exists.err.find("the others were written"), std::string::npos) << exists.err;
  RawImage kernel = volume(3, {3, 3, 3, 1}, seed);
  write_meta(in_ / "k.mha", kernel);
  const CliResult conv = run_ndconv(
      {"convolve", inputs[0], inputs[2], in_ / "k.mha", "-o", out_.path(), "-q", "--force"});
  EXPECT_EQ(conv.code, 0) << conv.err;
  for (const auto& n : out_.list())
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;

  // Two inputs with one file name would write one output: refused before any work.
  fs::create_directory(in_ / "sub");
  fs::copy_file(inputs[0], in_ / "sub/v0.nii.gz");
  const CliResult twice = run_ndconv(
      {"smooth", inputs[0], in_ / "sub/v0.nii.gz", "--sigma", "1vox", "-o", out_.path(), "-f"});
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_NE(twice.err.find("both write it"), std::string::npos) << twice.err;
}

TEST_F(CliOutput, AFolderAsTheOutputIsCalledAFolder) {
  fs::create_directory(out_ / "dir.nii.gz");
  for (const bool force : {false, true}) {
    std::vector<std::string> args = {"smooth",  in_ / "in3d.mha", out_ / "dir.nii.gz",
                                     "--sigma", "1vox",           "-q"};
    if (force)
      args.push_back("--force");
    const CliResult r = run_ndconv(args);
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("exists"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ndconv::test
