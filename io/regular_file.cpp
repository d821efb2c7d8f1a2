#include "io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/image.h"

namespace ndconv::io {

namespace {

[[noreturn]] void refuse(const std::string& path, mode_t mode, const std::string& what) {
  throw IoError(path + ": is " + special_file_kind(mode) + "; ndconv reads " + what +
                " only from regular files");
}

}  // namespace

std::string special_file_kind(mode_t mode) {
  return S_ISDIR(mode)                    ? "a folder"
         : S_ISFIFO(mode)                 ? "a FIFO (named pipe)"
         : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
         : S_ISSOCK(mode)                 ? "a socket"
                                          : "not a regular file";
}

void check_regular_file(const std::string& path, const std::string& what) {
  struct stat st;
  if (path.empty())
    throw IoError("the " + what + " path is empty");
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    refuse(path, st.st_mode, what);
}

int open_regular_file(const std::string& path, const std::string& what) {
  check_regular_file(path, what);
  // O_NONBLOCK: a FIFO put in place after the check is opened without waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    throw IoError(path + ": cannot read: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    refuse(path, mode, what);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(const std::string& path, const std::string& what, size_t max_bytes) {
  const int fd = open_regular_file(path, what);
  std::string text;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw IoError(path + ": cannot read: " + std::strerror(e));
    }
    if (n == 0)
      break;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw IoError(path + ": the " + what + " is longer than " + std::to_string(max_bytes) +
                    " bytes");
    }
  }
  ::close(fd);
  return text;
}

void check_replaceable(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
    return;
  throw RequestError(path + ": is " + special_file_kind(st.st_mode) +
                     ", not a regular file; ndconv replaces only regular files, even with --force");
}

}  // namespace ndconv::io
