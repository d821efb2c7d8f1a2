#include "signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "io/output_file.h"
#include "ndconv/errors.h"

namespace ndconv::cli {

namespace {

volatile sig_atomic_t g_interrupted = 0;
// The process that installed the handler: a forked child (the sandboxed DICOM decoder) must not
// remove its parent's staging folders.
volatile pid_t g_main_pid = 0;
// A copy of the original stderr: while ITK reads, fd 2 points at /dev/null (io/itk_image_io.cpp).
volatile int g_stderr_copy = STDERR_FILENO;

// Ends the process at once, in whatever stage (reading, filtering, writing): the staging folders
// of unfinished writes are removed first, so nothing half-written remains (an output whose
// renames had begun is complete: they run with the signals blocked); a sandboxed decoder child
// dies with the process (PR_SET_PDEATHSIG). Only async-signal-safe calls.
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  if (::getpid() == g_main_pid)
    io::remove_staging_folders_now();
  static const char message[] = "ndconv: error: interrupted; unfinished outputs were removed\n";
  [[maybe_unused]] const ssize_t n = ::write(g_stderr_copy, message, sizeof message - 1);
  ::_exit(130);
}

// The earliest point a program can act: before the initialisers of ITK and the other libraries.
extern "C" void install_at_preinit(int, char**, char**) {
  install_signal_handling();
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const g_preinit)(int, char**,
                                                                      char**) = install_at_preinit;

}  // namespace

void install_signal_handling() {
  if (g_main_pid == 0) {
    g_main_pid = ::getpid();
    const int copy = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (copy >= 0)
      g_stderr_copy = copy;
  }
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
  sigaction(SIGXFSZ, &ignore, nullptr);
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &handled, nullptr);
}

bool interrupted() {
  return g_interrupted != 0;
}

bool console_failed() {
  return std::ferror(stdout) != 0 || std::ferror(stderr) != 0 || std::cout.bad();
}

bool stop_requested() {
  return interrupted() || console_failed();
}

void check_stopped() {
  if (stop_requested())
    throw Aborted();
}

int finish_console(int code) {
  errno = 0;
  std::cout.flush();
  const bool out_failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || std::cout.bad();
  const int reason = errno;
  if (out_failed) {
    const std::string why = reason != 0 ? std::strerror(reason) : "a write failed";
    std::fprintf(stderr, "ndconv: error: standard output: %s\n", why.c_str());
  }
  const bool err_failed = std::fflush(stderr) != 0 || std::ferror(stderr) != 0;
  return code == 0 && (out_failed || err_failed) ? 1 : code;
}

}  // namespace ndconv::cli
