#include "io/dicom_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "io/header_text.h"
#include "io/image.h"

namespace ndconv::io {

namespace {

// Set in the sandbox's child (which reads for real) and while a DicomSandboxPassed lives.
bool g_sandbox_passed = false;

// In the child, the pipe to the parent for report_dicom_progress.
int g_progress_fd = -1;

}  // namespace

DicomSandboxPassed::DicomSandboxPassed() : saved_(g_sandbox_passed) {
  g_sandbox_passed = true;
}

DicomSandboxPassed::~DicomSandboxPassed() {
  g_sandbox_passed = saved_;
}

void report_dicom_progress(const std::string& file) {
  if (g_progress_fd < 0)
    return;
  const std::string line = file + "\n";
  if (::write(g_progress_fd, line.data(), line.size()) < 0) {
    // The parent has gone; the child ends with it.
  }
}

bool is_dicom_file(const std::string& path) {
  return file_holds_at(path, 128, "DICM");
}

void check_dicom_survives(const std::string& input, double bytes,
                          const std::function<void()>& read) {
  if (g_sandbox_passed)
    return;
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0)
    return;  // cannot sandbox: read directly
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return;
  }
  if (child == 0) {
    // The child reads everything once and ends with _exit: it never returns into the caller.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0)
      ::dup2(null_fd, STDERR_FILENO);
    ::close(pipe_fds[0]);
    g_sandbox_passed = true;
    g_progress_fd = pipe_fds[1];
    int code = 0;
    try {
      report_dicom_progress(input);
      read();
    } catch (...) {
      code = 1;  // the parent reads again and reports the error itself
    }
    ::_exit(code);
  }
  ::close(pipe_fds[1]);
  // Even JPEG 2000 slices decode at a few MB of file per second; a reader that takes far longer
  // than 1 s per MB is looping.
  const double seconds = 60.0 + bytes / 1e6;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  std::string received, current = input;
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      ::kill(child, SIGKILL);
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000))) <= 0)
      continue;
    char chunk[4096];
    const ssize_t n = ::read(pipe_fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;  // the child has finished (or died)
    received.append(chunk, static_cast<size_t>(n));
    const auto end = received.rfind('\n');
    if (end != std::string::npos) {
      const auto start = received.rfind('\n', end - 1);
      current = received.substr(start == std::string::npos ? 0 : start + 1,
                                end - (start == std::string::npos ? 0 : start + 1));
      received.erase(0, end + 1);
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string where = current == input ? input : input + ": " + current;
  if (timed_out) {
    throw IoError(where + ": ITK's DICOM reader (GDCM) did not finish within " +
                  std::to_string(static_cast<int>(seconds)) + " s (corrupt DICOM file?)");
  }
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)
      throw Aborted();
    throw IoError(where + ": a corrupt DICOM file (ITK's DICOM reader, GDCM, failed on it: " +
                  strsignal(WTERMSIG(status)) + ")");
  }
}

}  // namespace ndconv::io
