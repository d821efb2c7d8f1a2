// `ndconv serve`: runs commands read from standard input one after the other in this one process,
// so that a caller with many small tasks (ndconv.dask's cohort workers) pays the process's start,
// the libraries' and CUDA's start-up once, not once per task.
//
// Protocol (binary-safe, for programs): a request is a line with its argument count N (the
// arguments after "ndconv", 1 to kMaxArguments), then N arguments, each a line with its length in
// bytes followed by the bytes and a newline. The answer, on standard output: a line
// "ndconv-serve CODE LENGTH", then LENGTH bytes: what the command printed (its standard output and
// standard error, in order). End of input ends the server with exit code 0; a malformed request
// ends it with exit code 2 and a one-line error. Each command runs as `ndconv ARGS...` would:
// the same checks, outputs and exit code.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ndconv/errors.h"

namespace ndconv::cli {

namespace {

constexpr size_t kMaxArguments = 1 << 16;
constexpr size_t kMaxArgumentBytes = size_t{1} << 20;
constexpr size_t kMaxNumberDigits = 20;

// A request line's number; false at the end of input before any byte.
bool read_number(std::FILE* in, size_t& value, size_t limit, const char* what) {
  std::string digits;
  for (int c = std::getc(in); c != '\n'; c = std::getc(in)) {
    if (c == EOF) {
      if (digits.empty())
        return false;
      throw Error(std::string("serve: the input ended inside a request (") + what + ")");
    }
    if (c < '0' || c > '9' || digits.size() >= kMaxNumberDigits)
      throw Error(std::string("serve: malformed request: ") + what + " is not a number");
    digits.push_back(static_cast<char>(c));
  }
  if (digits.empty())
    throw Error(std::string("serve: malformed request: ") + what + " is empty");
  value = std::stoull(digits);
  if (value > limit)
    throw Error(std::string("serve: malformed request: ") + what + " over " +
                std::to_string(limit));
  return true;
}

// The next request's arguments; false at the end of input.
bool read_request(std::FILE* in, std::vector<std::string>& args) {
  size_t count = 0;
  if (!read_number(in, count, kMaxArguments, "the argument count"))
    return false;
  if (count == 0)
    throw Error("serve: malformed request: no arguments");
  args.assign(count, std::string());
  for (std::string& arg : args) {
    size_t length = 0;
    if (!read_number(in, length, kMaxArgumentBytes, "an argument's length"))
      throw Error("serve: the input ended inside a request (an argument's length)");
    arg.resize(length);
    if (length > 0 && std::fread(arg.data(), 1, length, in) != length)
      throw Error("serve: the input ended inside a request (an argument)");
    if (std::getc(in) != '\n')
      throw Error("serve: malformed request: an argument is longer than its length");
  }
  return true;
}

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error(std::string("serve: writing an answer failed: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

void flush_console() {
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

// Runs one command with standard output and standard error sent to a temporary file (unlinked),
// and returns its exit code and what it printed.
int run_captured(const CommandRunner& run, std::vector<std::string>& args, std::string& printed) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> capture(std::tmpfile(), std::fclose);
  if (!capture) {
    printed = std::string("ndconv: error: serve: no temporary file for the command's messages: ") +
              std::strerror(errno) + "\n";
    return 1;
  }
  flush_console();
  // The answers' channel (and the server's own errors) kept aside while the command runs; a
  // failed redirection ends the server, since the command's words would reach the channel.
  const int saved_out = ::dup(STDOUT_FILENO), saved_err = ::dup(STDERR_FILENO);
  const int fd = ::fileno(capture.get());
  if (saved_out < 0 || saved_err < 0 || ::dup2(fd, STDOUT_FILENO) < 0 ||
      ::dup2(fd, STDERR_FILENO) < 0)
    throw Error(std::string("serve: redirecting the command's output: ") + std::strerror(errno));
  std::vector<char*> argv;
  static char program[] = "ndconv";
  argv.push_back(program);
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int code = run(static_cast<int>(args.size() + 1), argv.data());
  flush_console();
  const bool restored =
      ::dup2(saved_out, STDOUT_FILENO) >= 0 && ::dup2(saved_err, STDERR_FILENO) >= 0;
  ::close(saved_out);
  ::close(saved_err);
  if (!restored)
    throw Error(std::string("serve: restoring the answers' channel: ") + std::strerror(errno));
  // A full disk or a closed console in one command must not stop the next.
  std::clearerr(stdout);
  std::clearerr(stderr);
  std::cout.clear();
  std::rewind(capture.get());
  printed.clear();
  char buffer[1 << 14];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture.get())) > 0;)
    printed.append(buffer, n);
  return code;
}

}  // namespace

int serve(const CommandRunner& run) {
  std::vector<std::string> args;
  std::string printed;
  while (read_request(stdin, args)) {
    int code = 0;
    if (args[0] == "serve") {
      code = 2;
      printed = "ndconv: error: serve: a request cannot start another server\n";
    } else {
      code = run_captured(run, args, printed);
    }
    write_all(STDOUT_FILENO, "ndconv-serve " + std::to_string(code) + " " +
                                 std::to_string(printed.size()) + "\n" + printed);
  }
  return 0;
}

void add_serve_command(CLI::App& app) {
  app.add_subcommand("serve",
                     "Run commands read from standard input one after the other in this process "
                     "(CUDA started once): ndconv.dask's cohort workers use it; the protocol is "
                     "in docs/cli.md");
}

}  // namespace ndconv::cli
