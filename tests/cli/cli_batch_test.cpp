// Batches that overlap their jobs (`IN... -o DIR`, `--list`): job i+1 is read while job i is
// filtered and job i-1 written. The outputs are byte for byte those of the single commands, written
// in the inputs' order; failing inputs are named and the others written; the memory check counts
// the jobs in flight; an interrupt leaves no partial or temporary file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "io/image.h"
#include "ndconv/engine.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

namespace fs = std::filesystem;
using io::ComponentType;

// Inputs of several formats and types, with bad ones among them.
struct BatchInputs {
  TempDir dir;
  std::vector<std::string> good, all;
  BatchInputs() {
    const auto add = [&](const std::string& name, bool ok) {
      all.push_back(dir / name);
      if (ok)
        good.push_back(dir / name);
    };
    write_nifti(dir / "a.nii", random_volume({40, 36, 20, 1}, ComponentType::UInt8, 1));
    add("a.nii", true);
    write_meta(dir / "b.mha", random_volume({33, 30, 17, 3}, ComponentType::Int16, 2));
    add("b.mha", true);
    write_bytes(dir / "bad.nii.gz", "not an image");
    add("bad.nii.gz", false);
    write_nifti(dir / "c.nii", random_volume({24, 20, 18, 1}, ComponentType::Float32, 3), true, 0.5,
                2);
    add("c.nii", true);
    add("missing.nii", false);
    write_meta(dir / "d.mha", random_volume({30, 28, 26, 1}, ComponentType::UInt16, 4));
    add("d.mha", true);
    // A cut-off file: its header promises more pixels than it holds.
    write_nifti(dir / "e.nii", random_volume({32, 32, 32, 1}, ComponentType::Int16, 5));
    const std::string bytes = read_bytes(dir / "e.nii");
    write_bytes(dir / "cut.nii", bytes.substr(0, bytes.size() / 2));
    add("cut.nii", false);
    add("e.nii", true);
  }
};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CliBatch, OverlappedJobsWriteWhatSingleCommandsWriteInOrder) {
  const BatchInputs in;
  TempDir batch_out, single_out;
  const CliResult r = run_ndconv(with(
      {"smooth", "--sigma", "1.5vox", "--device", test_device(), "-o", batch_out.path()}, in.all));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("3 of 8 inputs failed"), std::string::npos) << r.err;
  size_t last_note = 0;
  for (const auto& input : in.all) {
    const std::string name = fs::path(input).filename().string();
    const CliResult single = run_ndconv(
        {"smooth", input, single_out / name, "--sigma", "1.5vox", "--device", test_device(), "-q"});
    const bool good = std::find(in.good.begin(), in.good.end(), input) != in.good.end();
    EXPECT_EQ(single.code == 0, good) << name << single.err;
    if (!good) {
      // Named in the batch's errors, nothing written for it.
      EXPECT_FALSE(fs::exists(batch_out / name)) << name;
      EXPECT_NE(r.err.find("error: " + input), std::string::npos) << name << "\n" << r.err;
      continue;
    }
    EXPECT_EQ(read_bytes(batch_out / name), read_bytes(single_out / name)) << name;
    // "wrote" notes in the inputs' order.
    const size_t at = r.err.find("wrote " + (batch_out / name));
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_GE(at, last_note) << r.err;
    last_note = at;
  }
  EXPECT_EQ(batch_out.list().size(), in.good.size());  // nothing temporary left
}

TEST(CliBatch, ConvolveAndListFilesOverlapToo) {
  const BatchInputs in;
  TempDir out, single;
  std::string list;
  for (const auto& p : in.all)
    list += p + "\n";
  write_bytes(in.dir / "list.txt", list);
  const CliResult r = run_ndconv({"convolve", "--kernel", "box:3", "--device", test_device(), "-q",
                                  "-o", out.path(), "--list", in.dir / "list.txt"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("3 of 8 inputs failed"), std::string::npos) << r.err;
  for (const auto& p : in.good) {
    const std::string name = fs::path(p).filename().string();
    const CliResult s = run_ndconv(
        {"convolve", p, single / name, "--kernel", "box:3", "--device", test_device(), "-q"});
    ASSERT_EQ(s.code, 0) << s.err;
    EXPECT_EQ(read_bytes(out / name), read_bytes(single / name)) << name;
  }
}

double peak_estimate(const std::string& err) {
  const size_t at = err.find("plan: memory: about ");
  if (at == std::string::npos)
    return -1;
  const double value = std::stod(err.substr(at + 20));
  const std::string unit = err.substr(err.find(' ', at + 20) + 1, 3);
  return value * (unit == "GiB" ? 1024.0 * 1024 : unit == "MiB" ? 1024.0 : 1.0);
}

TEST(CliBatch, TheMemoryCheckCountsTheJobsInFlight) {
  TempDir dir, out;
  write_nifti(dir / "a.nii", random_volume({128, 128, 96, 1}, ComponentType::Float32, 8));
  write_nifti(dir / "b.nii", random_volume({128, 128, 96, 1}, ComponentType::Float32, 9));
  const CliResult one = run_ndconv(
      {"smooth", dir / "a.nii", out / "one.nii", "--sigma", "1vox", "--device", "cpu", "-v"});
  ASSERT_EQ(one.code, 0) << one.err;
  const CliResult batch = run_ndconv({"smooth", dir / "a.nii", dir / "b.nii", "-o", out.path(),
                                      "--sigma", "1vox", "--device", "cpu", "-v"});
  ASSERT_EQ(batch.code, 0) << batch.err;
  const double single_kib = peak_estimate(one.err), batch_kib = peak_estimate(batch.err);
  ASSERT_GT(single_kib, 0) << one.err;
  // Three jobs' volumes (6 MiB in, 6 MiB out, filter copies) instead of one's.
  EXPECT_GT(batch_kib, single_kib + 2 * 12 * 1024) << one.err << batch.err;
}

// Starts the batch as a child process; returns its pid.
pid_t start_batch(const std::vector<std::string>& inputs, const std::string& out) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> args = {NDCONV_CLI_PATH, "smooth", "--sigma", "2vox", "-q",
                                     "--device",      "cpu",    "-o",      out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// SIGINT at any moment of a batch: exit code 130 or a finished batch; every output present is
// complete, and no temporary file or folder remains.
TEST(CliBatch, AnInterruptLeavesNoPartialOrTemporaryFile) {
  TempDir dir;
  std::vector<std::string> inputs;
  const Index extent{128, 128, 64, 1};
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(dir / ("v" + std::to_string(i) + ".nii.gz"));
    write_nifti(dir / "v.nii", random_volume(extent, ComponentType::UInt8, 20 + i));
    io::write_image(inputs.back(), io::read_image(dir / "v.nii"), ComponentType::UInt8, false);
  }
  // The whole batch's time, then signals at fractions of it.
  double seconds = 0;
  {
    TempDir out;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = start_batch(inputs, out.path());
    ASSERT_GT(pid, 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(out.list().size(), inputs.size());
  }
  int interrupted = 0;
  for (const double fraction : {0.2, 0.4, 0.6, 0.8}) {
    TempDir out;
    const pid_t pid = start_batch(inputs, out.path());
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds * fraction));
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // A signal before main() installed its handler ends the process as SIGINT does.
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), SIGINT);
      EXPECT_TRUE(out.list().empty());
      continue;
    }
    const int code = WEXITSTATUS(status);
    EXPECT_TRUE(code == 0 || code == 130) << code;
    interrupted += code == 130 ? 1 : 0;
    for (const auto& name : out.list()) {
      EXPECT_NE(name[0], '.') << name;  // no staging folder or probe left
      if (name[0] != '.') {
        EXPECT_EQ(io::read_image(out / name).info.geometry.extent, extent) << name;
      }
    }
  }
  EXPECT_GT(interrupted, 0);
}

// A device list spreads a batch over GPUs, one filtering per GPU; the outputs are those of one GPU
// byte for byte. Without GPUs (or with one), the list is refused or runs as one GPU.
TEST(CliBatch, ADeviceListSpreadsTheInputsOverItsGpus) {
  BatchInputs inputs;
  TempDir one, spread;
  const CliResult twice = run_ndconv(
      with({"smooth"},
           with(inputs.good, {"-o", spread.path(), "--sigma", "1vox", "--device", "cuda:0,0"})));
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_NE(twice.err.find("twice"), std::string::npos) << twice.err;
  const CudaStatus status = cuda_status();
  const CliResult all = run_ndconv(
      with({"smooth"},
           with(inputs.good, {"-o", spread.path(), "--sigma", "1vox", "--device", "cuda:all"})));
  if (!status.usable) {
    EXPECT_EQ(all.code, 1) << all.err;
    EXPECT_NE(all.err.find("cuda:all: no usable GPU"), std::string::npos) << all.err;
    EXPECT_TRUE(spread.list().empty());
    return;
  }
  ASSERT_EQ(all.code, 0) << all.err;
  const CliResult single = run_ndconv(with(
      {"smooth"}, with(inputs.good, {"-o", one.path(), "--sigma", "1vox", "--device", "cuda:0"})));
  ASSERT_EQ(single.code, 0) << single.err;
  for (const std::string& in : inputs.good) {
    const std::string name = fs::path(in).filename();
    EXPECT_EQ(read_bytes(one / name), read_bytes(spread / name)) << name;
  }
  if (status.devices.size() > 1) {
    EXPECT_NE(all.err.find("on " + std::to_string(status.devices.size()) + " GPUs"),
              std::string::npos)
        << all.err;
  }
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// Every subcommand that takes IN OUT takes a batch too; each output is the single command's.
TEST(CliBatch, EveryFilterSubcommandRunsABatchAsItsSingleCommands) {
  TempDir in, batch_out, single_out;
  write_nifti(in / "a.nii", random_volume({20, 18, 12, 1}, ComponentType::UInt8, 31));
  write_meta(in / "b.mha", random_volume({16, 14, 10, 1}, ComponentType::Int16, 32));
  const std::vector<std::vector<std::string>> commands{
      {"smooth", "--sigma", "1vox"},
      {"mean", "--box", "3vox"},
      {"median", "--radius", "1"},
      {"gradient", "--sigma", "1vox"},
      {"laplacian", "--sigma", "1vox"},
      {"derivative", "--sigma", "1vox", "--order", "1x0x0"},
      {"unsharp", "--sigma", "1vox"},
      {"adaptive", "--quadrature-size", "5", "--reconstruction-size", "5"},
      {"convolve", "--kernel", "box:3"},
      {"convert", "--threads", "2"}};
  for (const auto& command : commands) {
    SCOPED_TRACE(command[0]);
    // A folder given with its slash: the outputs' paths have none doubled.
    const std::string dir = batch_out / command[0];
    fs::create_directory(dir);
    const CliResult r = run_ndconv(with(command, {in / "a.nii", in / "b.mha", "-o", dir + "/"}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("//"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("wrote " + dir + "/a.nii\n"), std::string::npos) << r.err;
    for (const std::string& name : std::vector<std::string>{"a.nii", "b.mha"}) {
      const std::string single = single_out / (command[0] + "_" + name);
      const CliResult s = run_ndconv(with(command, {in / name, single, "-q"}));
      ASSERT_EQ(s.code, 0) << s.err;
      EXPECT_EQ(read_bytes(dir + "/" + name), read_bytes(single)) << name;
    }
  }
}

TEST(CliBatch, NameTemplatesGiveASuffixAnotherFormatAndAPreviewPerInput) {
  TempDir in, out;
  write_nifti(in / "a.nii.gz", random_volume({20, 18, 12, 1}, ComponentType::UInt8, 41));
  write_meta(in / "b.mha", random_volume({16, 14, 10, 1}, ComponentType::Int16, 42));
  const CliResult r =
      run_ndconv({"median", in / "a.nii.gz", in / "b.mha", "-o", out / "{stem}_med.nrrd",
                  "--preview", out / "{stem}_preview.png", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> names = out.list();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a_med.nrrd", "a_preview.png", "b_med.nrrd",
                                             "b_preview.png"}));
  EXPECT_EQ(io::read_info(out / "a_med.nrrd").format, "NrrdImageIO");
  // {name} and {ext}.
  const CliResult named =
      run_ndconv({"convert", in / "a.nii.gz", in / "b.mha", "-o", out / "copy_{name}", "-q"});
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_TRUE(fs::exists(out / "copy_a.nii.gz"));
  EXPECT_TRUE(fs::exists(out / "copy_b.mha"));
  const CliResult ext =
      run_ndconv({"convert", in / "b.mha", in / "a.nii.gz", "-o", out / "x_{stem}{ext}", "-q"});
  ASSERT_EQ(ext.code, 0) << ext.err;
  EXPECT_TRUE(fs::exists(out / "x_a.nii.gz"));
  // Two inputs with one stem would write one file: refused before any work.
  write_meta(in / "a.mha", random_volume({8, 8, 8, 1}, ComponentType::UInt8, 43));
  const CliResult clash =
      run_ndconv({"median", in / "a.nii.gz", in / "a.mha", "-o", out / "{stem}.nii"});
  EXPECT_EQ(clash.code, 2) << clash.err;
  EXPECT_NE(clash.err.find("two inputs of the batch would both write it"), std::string::npos);
  // Unknown placeholders, placeholders in the folder, stray braces: exit 2, nothing written.
  for (const std::string& bad :
       std::vector<std::string>{out / "{base}.nii", out / "{stem}/x.nii", out / "{stem.nii"}) {
    SCOPED_TRACE(bad);
    const CliResult e = run_ndconv({"median", in / "a.nii.gz", in / "b.mha", "-o", bad});
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_EQ(e.err.find('\n'), e.err.size() - 1) << e.err;
  }
  EXPECT_EQ(out.list().size(), 8u);
}

TEST(CliBatch, WhenEveryInputFailsTheSummarySaysNothingWasWritten) {
  TempDir in, out;
  write_bytes(in / "bad.nii", "not an image");
  const CliResult r = run_ndconv({"median", in / "bad.nii", in / "missing.nii", "-o", out.path()});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("ndconv: error: all 2 inputs failed (named above); nothing was written"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("the others were written"), std::string::npos) << r.err;
  EXPECT_TRUE(out.list().empty());
}

}  // namespace
}  // namespace ndconv::test
