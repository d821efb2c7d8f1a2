// Runs the built `ndconv` binary (path from the build: NDCONV_CLI_PATH) and captures its exit
// code, stdout and stderr. NDCONV_TEST_DEVICE (auto, cpu, cuda, ...) picks --device for the
// filtering tests; without it they use auto (the CPU on a machine without a usable GPU).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_files.h"

namespace ndconv::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs ndconv with `args`; with `timeout_seconds` > 0 it is killed after that long (a hang then
/// fails the test instead of the suite: exit code 128 + SIGKILL).
inline CliResult run_ndconv(const std::vector<std::string>& args, int timeout_seconds = 0) {
  static TempDir logs;
  std::string cmd = timeout_seconds > 0 ? "timeout -s KILL " + std::to_string(timeout_seconds) + " "
                                        : std::string();
  cmd += shell_quote(NDCONV_CLI_PATH);
  for (const auto& a : args)
    cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(logs / "stdout") + " 2>" + shell_quote(logs / "stderr") + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_bytes(logs / "stdout");
  r.err = read_bytes(logs / "stderr");
  return r;
}

/// How many times `what` occurs in `text`.
inline int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

inline std::string test_device() {
  const char* d = std::getenv("NDCONV_TEST_DEVICE");
  return d && *d ? d : "auto";
}

}  // namespace ndconv::test
