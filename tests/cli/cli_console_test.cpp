// Signals and the console streams (issue 48, classes 4 and 9): a closed output pipe or a full
// device on stdout or stderr is a failed command (exit 1, not death by SIGPIPE) that leaves no
// output and no staging folder; a SIGTERM sent as the process starts, even before its handler
// could exist, is handled (exit 130, nothing written); 16 processes filtering at once each write
// the right output or fail cleanly.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "test_files.h"
#include "test_files.h"

namespace ndconv::test {
namespace {

using Clock = std::chrono::steady_clock;

struct Spawned {
  int code = -1;  ///< exit code; 128 + signal when killed by one
  bool timed_out = false;
};

struct SpawnSetup {
  int out_fd = -1, err_fd = -1;  ///< -1: /dev/null
  bool block_sigterm = false;    ///< start ndconv with SIGTERM blocked (pending until unblocked)
  double sigterm_after_ms = -1;  ///< < 0: no signal
};

// Runs ndconv with the given stdout and stderr, bounded by 20 s.
Spawned spawn_ndconv(const std::vector<std::string>& args, const SpawnSetup& s) {
  std::vector<std::string> store{NDCONV_CLI_PATH};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  sigset_t term, before;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  // The child is forked with SIGTERM blocked so that a signal sent at once waits for exec.
  pthread_sigmask(SIG_BLOCK, &term, &before);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(s.out_fd >= 0 ? s.out_fd : null, STDOUT_FILENO);
    ::dup2(s.err_fd >= 0 ? s.err_fd : null, STDERR_FILENO);
    if (!s.block_sigterm)
      pthread_sigmask(SIG_SETMASK, &before, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  Spawned r;
  const auto start = Clock::now();
  bool sent = false;
  int status = 0;
  while (true) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!sent && s.sigterm_after_ms >= 0 && ms >= s.sigterm_after_ms) {
      ::kill(pid, SIGTERM);
      sent = true;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid)
      break;
    if (ms > 20000) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// A pipe whose reading end is closed: every write to the other end fails with EPIPE.
struct ClosedPipe {
  int write_end = -1;
  ClosedPipe() {
    int fds[2];
    if (::pipe(fds) == 0) {
      ::close(fds[0]);
      write_end = fds[1];
    }
  }
  ~ClosedPipe() { ::close(write_end); }
};

class CliConsole : public ::testing::Test {
 protected:
  void SetUp() override {
    write_nifti(dir / "in.nii", random_volume({128, 120, 96, 1}, io::ComponentType::Int16, 7));
  }
  // The folder holds the input alone: no output, no hidden staging folder.
  void expect_nothing_written() const { EXPECT_EQ(dir.list(), std::vector<std::string>{"in.nii"}); }
  std::string err_path() const { return log / "stderr"; }
  int err_file() const { return ::open(err_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); }
  TempDir dir, outs, log;
};

TEST_F(CliConsole, StdoutToAFullDeviceIsAnError) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"info", dir / "in.nii"},
                                               {"info", dir / "in.nii", "--header-only"},
                                               {"--help"},
                                               {"smooth", "--help"},
                                               {"--version"}}) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args[1] : std::string()));
    const int full = ::open("/dev/full", O_WRONLY);
    ASSERT_GE(full, 0);
    const int err = err_file();
    const Spawned r = spawn_ndconv(args, {full, err});
    ::close(full);
    ::close(err);
    EXPECT_EQ(r.code, 1);
    // The reason where the last write still knew it (CLI11's help and version flush as they go).
    const std::string said = read_bytes(err_path());
    EXPECT_TRUE(said == "ndconv: error: standard output: No space left on device\n" ||
                said == "ndconv: error: standard output: a write failed\n")
        << said;
  }
}

TEST_F(CliConsole, StdoutToAClosedPipeIsAnErrorNotDeathBySigpipe) {
  const ClosedPipe pipe;
  const int err = err_file();
  const Spawned r = spawn_ndconv({"info", dir / "in.nii"}, {pipe.write_end, err});
  ::close(err);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(read_bytes(err_path()), "ndconv: error: standard output: Broken pipe\n");
}

TEST_F(CliConsole, AFilterWhoseStderrPipeClosesFailsAndLeavesNothing) {
  // Its notes go to stderr: the first failed write fails the command.
  write_nifti(log / "in2.nii", random_volume({64, 60, 50, 1}, io::ComponentType::UInt8, 8));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"smooth", dir / "in.nii", dir / "out.nii.gz", "--sigma", "1"},
        {"median", dir / "in.nii", dir / "out.nii", "--radius", "1"},
        {"smooth", dir / "in.nii", log / "in2.nii", "-o", outs.path(), "--sigma", "1"}}) {
    SCOPED_TRACE(args[0] + " " + args[2]);
    const ClosedPipe pipe;
    const Spawned r = spawn_ndconv(args, {-1, pipe.write_end});
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.code, 1);
    // An output finished before the first failed write (the one line on success) is complete;
    // nothing else, no staging folder, remains.
    for (const std::string& name : dir.list())
      EXPECT_TRUE(name == "in.nii" || name == "out.nii.gz" || name == "out.nii") << name;
    // A batch's jobs are quiet: an output finished before the first failed note is complete; no
    // staging folder remains.
    for (const std::string& name : outs.list())
      EXPECT_TRUE(name == "in.nii" || name == "in2.nii") << name;
  }
}

TEST_F(CliConsole, ASigtermSentBeforeTheHandlerCouldExistIsHandled) {
  // ndconv starts with SIGTERM blocked and the signal already pending: it must install its handler
  // and unblock the signal before any work, and then end as on any SIGTERM.
  const int err = err_file();
  SpawnSetup s{-1, err, true, 0};
  const Spawned r = spawn_ndconv({"smooth", dir / "in.nii", dir / "out.nii", "--sigma", "2"}, s);
  ::close(err);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.code, 130);
  EXPECT_EQ(read_bytes(err_path()),
            "ndconv: error: interrupted; unfinished outputs were removed\n");
  expect_nothing_written();
}

TEST_F(CliConsole, ASigtermInTheFirstMillisecondsEndsTheRunWithNothingWritten) {
  // Before the dynamic loader hands over, the default action ends the process (nothing has begun);
  // from then on the handler does, with exit 130. The volume takes far longer than 20 ms.
  TempDir big;
  write_nifti(big / "in.nii", random_volume({256, 256, 160, 1}, io::ComponentType::Int16, 9));
  for (const double ms : {0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0}) {
    SCOPED_TRACE(std::to_string(ms) + " ms");
    SpawnSetup s;
    s.sigterm_after_ms = ms;
    const Spawned r =
        spawn_ndconv({"smooth", big / "in.nii", big / "out.nii", "--sigma", "3", "-q"}, s);
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.code == 130 || r.code == 128 + SIGTERM) << r.code;
    EXPECT_EQ(big.list(), std::vector<std::string>{"in.nii"});
  }
}

TEST_F(CliConsole, SixteenProcessesAtOnceEachWriteTheRightOutputOrFailCleanly) {
  // Issue 48, faults under load: 16 commands filter on the CPU at the same time, each into its own
  // output; every one succeeds with the single run's bytes or fails with one error line and
  // leaves nothing (no staging folder).
  TempDir runs;
  write_nifti(runs / "in.nii", random_volume({64, 60, 40, 1}, io::ComponentType::Int16, 10));
  const CliResult reference = run_ndconv({"smooth", runs / "in.nii", runs / "reference.nii.gz",
                                          "--sigma", "1.5vox", "--device", "cpu", "-q"});
  ASSERT_EQ(reference.code, 0) << reference.err;
  const std::string expected = read_bytes(runs / "reference.nii.gz");
  constexpr int kProcesses = 16;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    const std::string out = runs / ("out" + std::to_string(i) + ".nii.gz");
    const std::string err = runs / ("err" + std::to_string(i));
    std::vector<std::string> store{NDCONV_CLI_PATH, "smooth", runs / "in.nii", out,
                                   "--sigma",       "1.5vox", "--device",      "cpu"};
    std::vector<char*> argv;
    for (auto& a : store)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
  }
  const auto start = Clock::now();
  for (int i = 0; i < kProcesses; ++i) {
    int status = 0;
    while (::waitpid(pids[i], &status, WNOHANG) == 0) {
      if (std::chrono::duration<double>(Clock::now() - start).count() > 60) {
        ::kill(pids[i], SIGKILL);
        ::waitpid(pids[i], &status, 0);
        ADD_FAILURE() << "process " << i << " hung";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string out = runs / ("out" + std::to_string(i) + ".nii.gz");
    const std::string err = read_bytes(runs / ("err" + std::to_string(i)));
    SCOPED_TRACE("process " + std::to_string(i) + ": " + err);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) {
      EXPECT_EQ(read_bytes(out), expected);
    } else {
      EXPECT_EQ(WEXITSTATUS(status), 1);
      EXPECT_EQ(err.rfind("ndconv: error: ", 0), 0u);
      EXPECT_NE(::access(out.c_str(), F_OK), 0);
    }
  }
  for (const std::string& name : runs.list())
    EXPECT_NE(name[0], '.') << "a staging folder was left: " << name;
}

}  // namespace
}  // namespace ndconv::test
