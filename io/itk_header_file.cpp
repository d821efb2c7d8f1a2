#include "io/itk_header_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/image.h"

namespace ndconv::io {

namespace {

std::string fd_name(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

bool holds_control_character(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
  });
}

ItkHeaderFile::ItkHeaderFile(const RewrittenHeader& header, const std::string& label) {
  auto fail = [&](const std::string& why) {
    for (int fd : fds_)
      ::close(fd);
    fds_.clear();
    throw IoError(label + ": " + why);
  };
  text_ = header.before;
  if (!header.data_file.empty()) {
    const int data = ::open(header.data_file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (data < 0)
      fail("cannot open its data file " + header.data_file + ": " + std::strerror(errno));
    fds_.push_back(data);
    struct stat st;
    if (::fstat(data, &st) != 0 || !S_ISREG(st.st_mode))
      fail("its data file " + header.data_file + " is not a regular file");
    text_ += fd_name(data);
  }
  text_ += header.after;
  const int fd = ::memfd_create("ndconv-header", MFD_CLOEXEC);
  if (fd < 0)
    fail(std::string("cannot create the header ITK reads: ") + std::strerror(errno));
  fds_.push_back(fd);
  size_t done = 0;
  while (done < text_.size()) {
    const ssize_t n = ::write(fd, text_.data() + done, text_.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      fail(std::string("cannot write the header ITK reads: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  path_ = fd_name(fd);
}

ItkHeaderFile::~ItkHeaderFile() {
  for (int fd : fds_)
    ::close(fd);
}

}  // namespace ndconv::io
