// Issue 48, class 7: the memory check under an address-space limit (ulimit -v, RLIMIT_AS) set in
// the child that runs `ndconv`. At every limit of a sweep, a command either succeeds or is refused
// by the check before any work, with its message; it never passes the check and then fails with
// "out of memory" (the check once ignored what the process had already mapped: its libraries,
// thread stacks and heaps).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.h"
#include "io/image.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

// Runs `ndconv ARGS` with RLIMIT_AS lowered to `mib` MiB; returns the exit code, stderr in `err`.
int run_limited(int mib, const std::vector<std::string>& args, const TempDir& dir,
                std::string& err) {
  std::string cmd =
      "ulimit -v " + std::to_string(mib * 1024) + "; exec " + shell_quote(NDCONV_CLI_PATH);
  for (const auto& a : args)
    cmd += " " + shell_quote(a);
  cmd += " >/dev/null 2>" + shell_quote(dir / "err") + " </dev/null";
  const int status = std::system(("bash -c " + shell_quote(cmd)).c_str());
  err = read_bytes(dir / "err");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(CliMemoryLimit, UnderAnAddressSpaceLimitTheCheckRefusesOrTheWorkSucceeds) {
  TempDir dir;
  write_meta(dir / "in.mha", random_volume({256, 256, 128, 1}, io::ComponentType::UInt8, 3));
  const std::vector<std::vector<std::string>> commands = {{"smooth", "--sigma", "1"},
                                                          {"mean", "--box", "3vox"}};
  int refused = 0, done = 0;
  for (const auto& command : commands) {
    for (int mib = 160; mib <= 400; mib += 20) {
      SCOPED_TRACE(command[0] + " under " + std::to_string(mib) + " MiB");
      const std::string out = dir / "out.nii.gz";
      std::remove(out.c_str());
      std::vector<std::string> args = {command[0], dir / "in.mha", out};
      args.insert(args.end(), command.begin() + 1, command.end());
      args.insert(args.end(), {"--device", "cpu"});
      std::string err;
      const int code = run_limited(mib, args, dir, err);
      if (code == 0) {
        ++done;
        continue;
      }
      ++refused;
      EXPECT_EQ(code, 1) << err;
      EXPECT_NE(err.find("here (the least of physical memory, ulimit and cgroup limits)"),
                std::string::npos)
          << err;
      EXPECT_EQ(err.find("out of memory"), std::string::npos) << err;
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
  // The sweep spans both outcomes, so that it tests the boundary.
  EXPECT_GT(refused, 0);
  EXPECT_GT(done, 0);
}

// Issue 47, item 1: adaptive filtering checks the memory of its whole working set before any work
// (true 4D keeps the tensor's ten components of the whole series, one of them in the output's
// buffer, and a slab's buffers) and names what would fit: --frames or the GPU. Frame by frame the
// same series fits where true 4D does not.
TEST(CliMemoryLimit, AdaptiveIsCheckedBeforeWorkWithAHint) {
  TempDir dir;
  write_meta(dir / "seq.mha", random_volume({96, 96, 64, 8}, io::ComponentType::UInt8, 4));
  const std::string out = dir / "out.mha";
  std::string err;
  // 4.7M voxels: true 4D needs about 16 float volumes (9 tensor components, 140 MiB of slab
  // buffers: 310 MiB) besides input and output.
  const int code = run_limited(
      320, {"adaptive", dir / "seq.mha", out, "--device", "cpu", "--threads", "2"}, dir, err);
  EXPECT_EQ(code, 1) << err;
  EXPECT_NE(err.find("of memory to read, filter and write"), std::string::npos) << err;
  EXPECT_NE(err.find("try --frames"), std::string::npos) << err;
  EXPECT_NE(err.find("--device cuda"), std::string::npos) << err;
  EXPECT_EQ(err.find("out of memory"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Frame by frame it fits and runs.
  const int frames = run_limited(
      320, {"adaptive", dir / "seq.mha", out, "--device", "cpu", "--threads", "2", "--frames"}, dir,
      err);
  EXPECT_EQ(frames, 0) << err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace ndconv::test
