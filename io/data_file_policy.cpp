#include "io/data_file_policy.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include "io/image.h"

namespace ndconv::io {

namespace {

std::atomic<bool> g_external_allowed{false};

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// realpath(3) as a string; empty when the path cannot be resolved.
std::string resolved(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(path.c_str(), nullptr), &std::free);
  return r ? std::string(r.get()) : std::string();
}

}  // namespace

void set_external_data_allowed(bool allowed) {
  g_external_allowed = allowed;
}

bool external_data_allowed() {
  return g_external_allowed;
}

std::string check_data_file(const std::string& header, const std::string& named) {
  const std::string folder = folder_of(header);
  const std::string path = !named.empty() && named.front() == '/' ? named : folder + "/" + named;
  const std::string what = header + ": its data file " + named;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(what + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw IoError(what + " is not a regular file; ndconv reads image data only from regular files");
  if (external_data_allowed())
    return path;
  const std::string real_folder = resolved(folder);
  const std::string real_file = resolved(path);
  const bool inside = !real_folder.empty() && !real_file.empty() &&
                      real_file.size() > real_folder.size() &&
                      real_file.compare(0, real_folder.size(), real_folder) == 0 &&
                      (real_folder == "/" || real_file[real_folder.size()] == '/');
  if (!inside) {
    const std::string shown = real_file.empty() ? path : real_file;
    throw IoError(what + (shown == named ? std::string() : " (" + shown + ")") +
                  " lies outside the header's folder; ndconv reads data files only from the "
                  "header's own folder (after resolving .. and symbolic links) unless "
                  "--allow-external-data is given");
  }
  return path;
}

}  // namespace ndconv::io
