#include "io/output_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/image.h"

namespace ndconv::io {

namespace {

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

std::vector<std::string> list_files(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..")
        names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

}  // namespace

void check_output_location(const std::string& path) {
  if (path.empty())
    throw IoError("the output path is empty");
  if (path.back() == '/')
    throw IoError(path + ": is a folder, not an output file name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw IoError(path + ": is a folder, not an output file name");
  const std::string dir = folder_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    throw IoError(path + ": cannot write: the folder " + dir + " does not exist");
  if (!S_ISDIR(st.st_mode))
    throw IoError(path + ": cannot write: " + dir + " is not a folder");
  // Root passes access(W_OK) even on read-only places (/sys, read-only mounts): try for real,
  // with the same kind of hidden folder the write itself will use.
  std::string probe = join(dir, "." + name_of(path) + ".probeXXXXXX");
  std::vector<char> buf(probe.begin(), probe.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw IoError(path + ": cannot write to the folder " + dir + ": " + std::strerror(errno));
  ::rmdir(buf.data());
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  auto normal = [](const std::string& p) { return p.rfind("./", 0) == 0 ? p.substr(2) : p; };
  return normal(a) == normal(b);
}

StagingFolder::StagingFolder(const std::string& target) : target_(target) {
  check_output_location(target);
  target_dir_ = folder_of(target);
  std::string templ = join(target_dir_, "." + name_of(target) + ".tmpXXXXXX");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw IoError(target + ": cannot create a temporary folder in " + target_dir_ + ": " +
                  std::strerror(errno));
  }
  folder_ = buf.data();
  staged_ = join(folder_, name_of(target));
}

StagingFolder::~StagingFolder() {
  remove_folder();
}

void StagingFolder::remove_folder() noexcept {
  if (folder_.empty())
    return;
  for (const auto& n : list_files(folder_))
    ::unlink(join(folder_, n).c_str());
  ::rmdir(folder_.c_str());
}

std::vector<std::string> StagingFolder::commit(bool overwrite) {
  const std::string main_name = name_of(target_);
  std::vector<std::string> names = list_files(folder_);
  if (names.empty() || !exists(staged_))
    throw IoError(target_ + ": the image writer produced no file");
  if (!overwrite) {
    for (const auto& n : names) {
      const std::string final_path = join(target_dir_, n);
      if (exists(final_path)) {
        throw RequestError(final_path + ": exists; use --force to overwrite it");
      }
    }
  }
  // Companion files (e.g. the .raw of a .mhd) first, so that the header never names missing data.
  std::vector<std::string> ordered;
  for (const auto& n : names)
    if (n != main_name)
      ordered.push_back(n);
  ordered.push_back(main_name);
  std::vector<std::string> moved;
  for (const auto& n : ordered) {
    const std::string final_path = join(target_dir_, n);
    if (::rename(join(folder_, n).c_str(), final_path.c_str()) != 0) {
      throw IoError(final_path +
                    ": cannot move the written file into place: " + std::strerror(errno));
    }
    moved.push_back(final_path);
  }
  return moved;
}

}  // namespace ndconv::io
