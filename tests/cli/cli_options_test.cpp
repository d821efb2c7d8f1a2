// The command line's own rules (issue 48, class 6): every numeric option of every subcommand
// refuses NaN, infinities and values beyond its range (1e39 overflows float32) with exit code 2,
// one error line naming the option, and no output.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_run.h"
#include "test_files.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using io::ComponentType;

class CliOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    write_nifti(in, random_volume({12, 10, 8, 1}, ComponentType::Int16, 11));
    write_nifti(in4, random_volume({8, 8, 6, 3}, ComponentType::UInt8, 12));
    RawImage mask = random_volume({12, 10, 8, 1}, ComponentType::UInt8, 13);
    write_nifti(mask_path, mask);
  }
  TempDir dir;
  const std::string in = dir / "in.nii", in4 = dir / "in4.nii", mask_path = dir / "mask.nii",
                    out = dir / "out.nii";
};

// A command and one numeric argument of it, "{}" standing for the value tried.
struct NumericArgument {
  std::vector<std::string> command;
  std::string argument;
  std::string option;  ///< what the error must name
};

std::string with_value(const std::string& argument, const std::string& value) {
  const size_t at = argument.find("{}");
  return argument.substr(0, at) + value + argument.substr(at + 2);
}

TEST_F(CliOptions, EveryNumericOptionRefusesNanInfinitiesAndOverflowBeforeAnyWork) {
  const std::vector<std::string> smooth{"smooth", in, out, "--sigma", "1"};
  const std::vector<std::string> unsharp{"unsharp", in, out, "--sigma", "1"};
  const std::vector<NumericArgument> arguments{
      {{"smooth", in, out}, "--sigma={}", "--sigma"},
      {{"smooth", in, out}, "--fwhm={}", "--fwhm"},
      {{"smooth", in, out}, "--sigma=1x{}x1", "--sigma"},
      {{"smooth", in4, out, "--sigma", "1"}, "--time-sigma={}", "--time-sigma"},
      {smooth, "--truncate={}", "--truncate"},
      {{"smooth", in, out, "--sigma", "1", "--mask", mask_path}, "--outside={}", "--outside"},
      {smooth, "--threads={}", "--threads"},
      {smooth, "--compression={}", "--compression"},
      {smooth, "--outputs-per-thread={}", "--outputs-per-thread"},
      {{"mean", in, out}, "--box={}", "--box"},
      {{"mean", in, out}, "--sphere={}", "--sphere"},
      {{"mean", in, out, "--box", "3vox", "--mask", mask_path}, "--outside={}", "--outside"},
      {{"median", in, out}, "--radius={}", "--radius"},
      {{"gradient", in, out}, "--sigma={}", "--sigma"},
      {{"gradient", in, out, "--sigma", "1"}, "--truncate={}", "--truncate"},
      {{"laplacian", in, out}, "--sigma={}", "--sigma"},
      {{"laplacian", in, out, "--sigma", "1"}, "--truncate={}", "--truncate"},
      {{"derivative", in, out, "--order", "1x0x0"}, "--sigma={}", "--sigma"},
      {{"derivative", in, out, "--order", "1x0x0", "--sigma", "1"}, "--truncate={}", "--truncate"},
      {{"unsharp", in, out}, "--sigma={}", "--sigma"},
      {unsharp, "--amount={}", "--amount"},
      {unsharp, "--threshold={}", "--threshold"},
      {unsharp, "--truncate={}", "--truncate"},
      {{"adaptive", in, out}, "--smoothing={}", "--smoothing"},
      {{"adaptive", in, out}, "--relaxation={}", "--relaxation"},
      {{"adaptive", in, out}, "--threshold={}", "--threshold"},
      {{"adaptive", in, out}, "--anisotropy={}", "--anisotropy"},
      {{"adaptive", in, out}, "--blend={}", "--blend"},
      {{"adaptive", in, out}, "--quadrature-size={}", "--quadrature-size"},
      {{"adaptive", in, out}, "--reconstruction-size={}", "--reconstruction-size"},
      {{"convolve", in, out}, "--kernel=gauss:{}", "--kernel"},
      {{"convolve", in, out}, "--kernel=box:3x{}x3", "--kernel"},
      {{"convert", in, out}, "--compression={}", "--compression"},
      {{"convert", in, out}, "--threads={}", "--threads"},
      {{"kernel", "gauss:1", out}, "--dims={}", "--dims"},
  };
  for (const NumericArgument& a : arguments) {
    for (const std::string value : {"nan", "inf", "-inf", "1e39", "-1e39", "NaN"}) {
      std::vector<std::string> args = a.command;
      args.push_back(with_value(a.argument, value));
      SCOPED_TRACE(a.command[0] + " " + args.back());
      const CliResult r = run_ndconv(args);
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_EQ(r.err.rfind("ndconv: error: ", 0), 0u) << r.err;
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
      EXPECT_NE(r.err.find(a.option), std::string::npos) << r.err;
      EXPECT_NE(::access(out.c_str(), F_OK), 0) << "an output was written";
      std::remove(out.c_str());
    }
  }
}

TEST_F(CliOptions, TheRangesAcceptTheirEnds) {
  // The documented ends are values, not errors.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"unsharp", in, out, "--sigma", "1vox", "--amount", "100"},
        {"unsharp", in, out, "--sigma", "1vox", "--amount=-100"},
        {"smooth", in, out, "--sigma", "1vox", "--truncate", "100"},
        {"smooth", in, out, "--sigma", "1vox", "--mask", mask_path, "--outside", "3.4e38"},
        {"adaptive", in, out, "--blend", "1", "--anisotropy", "0.99"}}) {
    SCOPED_TRACE(args[0] + " " + args.back());
    const CliResult r = run_ndconv(args);
    EXPECT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(std::remove(out.c_str()), 0);
  }
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

class CliLists : public ::testing::Test {
 protected:
  void SetUp() override {
    write_nifti(dir / "a.nii", random_volume({10, 9, 8, 1}, ComponentType::UInt8, 21));
    write_nifti(dir / "b.nii", random_volume({10, 9, 8, 1}, ComponentType::UInt8, 22));
  }
  TempDir dir, out;
};

TEST_F(CliLists, ALineLongerThan4095CharactersIsOneInput) {
  // Read in 4,095-byte pieces, this line was two inputs, the second a real file then written.
  const std::string line = std::string(4095, 'x') + dir / "a.nii";
  write_bytes(dir / "list.txt", line + "\n");
  const CliResult r =
      run_ndconv({"smooth", "--sigma", "1vox", "-o", out.path(), "--list", dir / "list.txt", "-q"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(out.list().empty());
  // Long lines that name real files are read whole: a path of 4,200 characters through "./".
  std::string long_path = dir.path();
  while (long_path.size() < 4200)
    long_path += "/.";
  write_bytes(dir / "list.txt", long_path + "/b.nii\r\n# a comment\n\n" + dir / "a.nii");
  const CliResult both =
      run_ndconv({"smooth", "--sigma", "1vox", "-o", out.path(), "--list", dir / "list.txt", "-q"});
  // The long path is too long for the system (ENAMETOOLONG) or read: either way one input.
  EXPECT_TRUE(both.code == 0 || both.code == 1) << both.err;
  EXPECT_EQ(both.err.find("xxxx"), std::string::npos);
  for (const std::string& name : out.list())
    EXPECT_TRUE(name == "a.nii" || name == "b.nii") << name;
}

TEST_F(CliLists, AListThatIsNotARegularFileIsRefusedBeforeItIsRead) {
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  ::mkdir((dir / "folder").c_str(), 0700);
  for (const std::string& list : std::vector<std::string>{"/dev/zero", dir / "fifo", dir / "folder",
                                                          "/dev/null", dir / "missing.txt"}) {
    SCOPED_TRACE(list);
    const CliResult r = run_ndconv(
        {"smooth", dir / "a.nii", "--sigma", "1vox", "-o", out.path(), "--list", list}, 10);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("ndconv: error: --list: " + list, 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(out.list().empty());
  }
}

TEST_F(CliLists, ANulByteInAListLineIsRefused) {
  // A C string would end at the NUL and name another file.
  write_bytes(dir / "list.txt", dir / "a.nii" + std::string("\0.other", 7) + "\n");
  const CliResult r =
      run_ndconv({"smooth", "--sigma", "1vox", "-o", out.path(), "--list", dir / "list.txt"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("line 1 holds a NUL byte"), std::string::npos) << r.err;
  EXPECT_TRUE(out.list().empty());
}

TEST_F(CliLists, OnePreviewForSeveralInputsIsRefusedBeforeAnyWork) {
  const CliResult r = run_ndconv({"smooth", dir / "a.nii", dir / "b.nii", "--sigma", "1vox", "-o",
                                  out.path(), "--preview", dir / "p.png"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--preview: one PNG cannot show the 2 inputs of a batch"), std::string::npos)
      << r.err;
  EXPECT_TRUE(out.list().empty());
  EXPECT_NE(::access((dir / "p.png").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// Quiet by default, honest when asked (issue 47 item 5).
class CliMessages : public ::testing::Test {
 protected:
  void SetUp() override {
    write_nifti(in, random_volume({16, 14, 10, 1}, ComponentType::Int16, 51));
    patch_field<unsigned char>(in, 123, 0);  // xyzt_units: spatial units unknown
  }
  TempDir dir;
  const std::string in = dir / "in.nii";
};

TEST_F(CliMessages, ASuccessfulRunSaysOneLine) {
  const std::vector<std::vector<std::string>> commands{
      {"smooth", "--sigma", "1vox"},
      {"median", "--radius", "1"},
      {"mean", "--box", "3vox"},
      {"gradient", "--sigma", "1vox"},
      {"convolve", "--kernel", "box:3"},
      {"unsharp", "--sigma", "1vox"},
      {"adaptive", "--quadrature-size", "5", "--reconstruction-size", "5"},
      {"mean", "--sphere", "2vox"}};
  int k = 0;
  for (const auto& command : commands) {
    SCOPED_TRACE(command[0]);
    const std::string out = dir / ("out" + std::to_string(k++) + ".nii");
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {in, out});
    const CliResult r = run_ndconv(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "ndconv: wrote " + out + " (float32)\n");
  }
}

TEST_F(CliMessages, QuietSaysNothingWarningsIncluded) {
  // Lengths in mm on a file without spatial units warn, except under -q.
  const CliResult loud = run_ndconv({"smooth", in, dir / "a.nii", "--sigma", "1"});
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(count_of(loud.err, "spatial units unknown"), 1) << loud.err;
  const CliResult quiet = run_ndconv({"smooth", in, dir / "b.nii", "--sigma", "1", "-q"});
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const CliResult batch =
      run_ndconv({"median", in, dir / "a.nii", "-o", dir / "{stem}_m.nii", "-q"});
  ASSERT_EQ(batch.code, 0) << batch.err;
  EXPECT_EQ(batch.err, "");
  // Errors are never silenced.
  const CliResult error =
      run_ndconv({"smooth", dir / "missing.nii", dir / "c.nii", "--sigma", "1", "-q"});
  EXPECT_EQ(error.code, 1);
  EXPECT_EQ(error.err.rfind("ndconv: error: ", 0), 0u) << error.err;
}

TEST_F(CliMessages, NoUnitWarningWhenTheUserGaveTheUnit) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"smooth", in, dir / "a.nii", "--sigma", "1mm"},
        {"smooth", in, dir / "b.nii", "--fwhm", "2x2x3mm"},
        {"mean", in, dir / "c.nii", "--box", "3mm"},
        {"gradient", in, dir / "d.nii", "--sigma", "1mm"}}) {
    SCOPED_TRACE(args[0] + " " + args[4]);
    const CliResult r = run_ndconv(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  }
}

TEST_F(CliMessages, VerboseExplainsThePlanBeforeTheWork) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"smooth", in, dir / "a.nii", "--sigma", "1vox", "-f", "-v"},
        {"convolve", in, dir / "b.nii", "--kernel", "box:3", "-f", "-v"},
        {"median", in, dir / "c.nii", "--radius", "1", "-f", "-v"}}) {
    SCOPED_TRACE(args[0]);
    const CliResult r = run_ndconv(args);
    ASSERT_EQ(r.code, 0) << r.err;
    // The cost model's reasoning before the first progress line (stderr is not a terminal:
    // plain lines with -v), the run's findings after the filter, then "wrote", then timings.
    const size_t plan = r.err.find("plan: backend");
    // The first quarter shown may be a later one where a stage's share jumps past 25%.
    const size_t first_progress = r.err.find(args[0] + ": ");
    const size_t run = r.err.find("run: backend");
    const size_t wrote = r.err.find("ndconv: wrote");
    ASSERT_NE(plan, std::string::npos) << r.err;
    ASSERT_NE(first_progress, std::string::npos) << r.err;
    ASSERT_NE(run, std::string::npos) << r.err;
    ASSERT_NE(wrote, std::string::npos) << r.err;
    EXPECT_LT(plan, first_progress) << r.err;
    EXPECT_LT(plan, run) << r.err;
    EXPECT_LT(run, wrote) << r.err;
    EXPECT_EQ(r.err.find("plan: backend", plan + 1), std::string::npos) << r.err;
    EXPECT_GT(r.err.find("timings:"), wrote) << r.err;
    EXPECT_NE(r.err.find("timings:"), std::string::npos) << r.err;
    // Without -v: no reasoning at all, one line.
    const CliResult quiet = run_ndconv({args.begin(), args.end() - 1});
    ASSERT_EQ(quiet.code, 0) << quiet.err;
    EXPECT_EQ(quiet.err.find("estimated"), std::string::npos) << quiet.err;
    EXPECT_EQ(quiet.err.find("plan:"), std::string::npos) << quiet.err;
  }
}

TEST_F(CliMessages, TheProgressBarOnATerminalEndsItsLine) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no script(1) to give ndconv a terminal";
  write_nifti(dir / "big.nii", random_volume({96, 96, 64, 1}, ComponentType::Int16, 52));
  const std::string log = dir / "tty.log";
  const std::string command = shell_quote(NDCONV_CLI_PATH) + " smooth " +
                              shell_quote(dir / "big.nii") + " " + shell_quote(dir / "o.nii") +
                              " --sigma 2vox";
  const std::string cmd = "script -qec " + shell_quote(command) + " /dev/null >" +
                          shell_quote(log) + " 2>&1 </dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string text = read_bytes(log);
  // Each redraw starts with \r; the percentages never go back.
  int last = -1, draws = 0;
  for (size_t at = text.find("] "); at != std::string::npos; at = text.find("] ", at + 1)) {
    const int percent = std::atoi(text.c_str() + at + 2);
    EXPECT_GE(percent, last) << text;
    last = percent;
    ++draws;
  }
  EXPECT_EQ(last, 100) << text;
  EXPECT_GT(draws, 2) << text;
  // The terminal shows \n as \r\n; the bar's last state, then its own line's end, then the note.
  const size_t bar = text.rfind("100%");
  ASSERT_NE(bar, std::string::npos) << text;
  EXPECT_EQ(text.substr(bar, 6), "100%\r\n") << text;
  EXPECT_EQ(text.substr(bar + 6, 14), "ndconv: wrote ") << text;
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// Help and info that match the program (issue 47 items 7 and 8).
TEST(CliHelp, EachSubcommandShowsItsOwnOptionsFirstAndTheExpertOnesLast) {
  const std::vector<std::pair<std::string, std::string>> own{
      {"smooth", "--sigma"},     {"convolve", "--kernel"}, {"mean", "--box"},
      {"median", "--radius"},    {"gradient", "--sigma"},  {"laplacian", "--sigma"},
      {"derivative", "--order"}, {"unsharp", "--amount"},  {"adaptive", "--preset"}};
  for (const auto& [command, option] : own) {
    SCOPED_TRACE(command);
    const CliResult r = run_ndconv({command, "--help"});
    ASSERT_EQ(r.code, 0) << r.err;
    const size_t mine = r.out.find("  " + option + " ");
    const size_t shared = r.out.find("Output options:");
    const size_t expert = r.out.find("Expert options:");
    ASSERT_NE(mine, std::string::npos) << r.out;
    ASSERT_NE(shared, std::string::npos) << r.out;
    ASSERT_NE(expert, std::string::npos) << r.out;
    EXPECT_LT(mine, shared) << r.out;
    EXPECT_GT(r.out.find("--outputs-per-thread"), expert) << r.out;
    EXPECT_EQ(r.out.find("options:", expert + 15), std::string::npos) << "expert options last";
    // --device's help describes the cost model that decides auto.
    EXPECT_NE(r.out.find("cost model"), std::string::npos) << r.out;
  }
}

TEST(CliInfo, AMetaImageTimeStepHasNoUnitAndIsNotTakenAsSeconds) {
  TempDir dir;
  write_meta(dir / "cine.mha", random_volume({8, 8, 6, 4}, ComponentType::UInt8, 61));
  const CliResult info = run_ndconv({"info", dir / "cine.mha", "--header-only"});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(info.out.find("NIfTI"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("time step:   0.5 (spacing of axis t; unit unknown: a MetaImage header "
                          "states no time unit)"),
            std::string::npos)
      << info.out;
  const CliResult seconds = run_ndconv(
      {"smooth", dir / "cine.mha", dir / "out.mha", "--sigma", "1vox", "--time-sigma", "1s"});
  EXPECT_EQ(seconds.code, 1) << seconds.err;
  EXPECT_NE(seconds.err.find("the time unit is unknown (a MetaImage header states no time unit"),
            std::string::npos)
      << seconds.err;
  EXPECT_NE(seconds.err.find("give --time-sigma in frames"), std::string::npos) << seconds.err;
  const CliResult frames = run_ndconv(
      {"smooth", dir / "cine.mha", dir / "out.mha", "--sigma", "1vox", "--time-sigma", "2"});
  EXPECT_EQ(frames.code, 0) << frames.err;
}

}  // namespace
}  // namespace ndconv::test
