#include "io/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "io/image.h"
#include "io/regular_file.h"

namespace ndconv::io {

namespace {

// A hidden name built from the target's name, short enough that a legal target name (up to
// NAME_MAX bytes) still gives a legal hidden name with its suffix.
std::string hidden_name(const std::string& target_name, const char* suffix) {
  const size_t room = NAME_MAX - 1 - std::strlen(suffix);
  return "." + target_name.substr(0, std::min(target_name.size(), room)) + suffix;
}

std::string errno_text() {
  return std::strerror(errno);
}

// The staging folders that exist, for the signal handler: fixed slots (no allocation in the
// handler), each a path and a flag saying it is in use.
constexpr int kStagingSlots = 16;
struct StagingSlot {
  std::atomic<bool> claimed{false};  ///< taken by a StagingFolder
  std::atomic<bool> ready{false};    ///< `path` is complete: the handler may use it
  char path[PATH_MAX];
};
StagingSlot g_staging[kStagingSlots];

int register_staging(const std::string& folder) {
  if (folder.size() >= PATH_MAX)
    return -1;
  for (int i = 0; i < kStagingSlots; ++i) {
    bool expected = false;
    if (!g_staging[i].claimed.compare_exchange_strong(expected, true))
      continue;
    std::memcpy(g_staging[i].path, folder.c_str(), folder.size() + 1);
    g_staging[i].ready = true;
    return i;
  }
  return -1;
}

void unregister_staging(int slot) {
  if (slot < 0)
    return;
  g_staging[slot].ready = false;
  g_staging[slot].claimed = false;
}

// A thread making a staging folder (registered, not yet made) or moving a staged output into
// place counts in g_busy for those few system calls, with the interrupts blocked in it; the
// handler waits for none to be busy before it removes the registered folders, so that no folder
// appears after that and no output is left half-moved. Once the process is ending (g_closing), no
// new folder is made.
std::atomic<int> g_busy{0};
std::atomic<bool> g_closing{false};

class BusyWithStaging {
 public:
  BusyWithStaging() {
    sigset_t interrupts;
    sigemptyset(&interrupts);
    sigaddset(&interrupts, SIGINT);
    sigaddset(&interrupts, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &interrupts, &before_);
    ++g_busy;
  }
  ~BusyWithStaging() {
    --g_busy;
    pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  }
  BusyWithStaging(const BusyWithStaging&) = delete;
  BusyWithStaging& operator=(const BusyWithStaging&) = delete;

 private:
  sigset_t before_;
};

// Creates the folder `templ` (ending in XXXXXX, as for mkdtemp) registered for the signal handler
// before it exists, so that an interrupt at any moment leaves none behind. Returns its path, or
// "" with errno set.
std::string create_registered_folder(const std::string& templ, int& slot) {
  const BusyWithStaging busy;
  if (g_closing.load()) {
    errno = EINTR;
    return {};
  }
  static std::atomic<uint64_t> counter{static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
                                       static_cast<uint64_t>(::time(nullptr))};
  static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const size_t x = templ.size() - 6;
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t bits = (counter += 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    std::string path = templ;
    for (size_t i = x; i < path.size(); ++i, bits /= 62)
      path[i] = digits[bits % 62];
    slot = register_staging(path);
    if (::mkdir(path.c_str(), 0700) == 0)
      return path;
    const int error = errno;
    unregister_staging(slot);
    slot = -1;
    errno = error;
    if (error != EEXIST)
      return {};
  }
  return {};
}

// Removes the files in `folder` and the folder, with system calls only (getdents64, unlinkat).
void remove_folder_raw(const char* folder) noexcept {
  const int fd = ::open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    long n;
    while ((n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* e = reinterpret_cast<const Entry*>(buf + at);
        const bool dots =
            e->name[0] == '.' && (e->name[1] == '\0' || (e->name[1] == '.' && e->name[2] == '\0'));
        if (!dots)
          ::unlinkat(fd, e->name, 0);
        at += e->reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(folder);
}

// remove_folder_raw until the folder is gone: a file that another thread created in it while it
// was being emptied is removed in the next round.
void remove_folder_until_gone(const char* folder) noexcept {
  for (int round = 0; round < 8; ++round) {
    remove_folder_raw(folder);
    if (::access(folder, F_OK) != 0)
      return;
  }
}

}  // namespace

void remove_staging_folders_now() noexcept {
  g_closing = true;
  while (g_busy.load() > 0) {
  }
  for (auto& slot : g_staging)
    if (slot.ready.load())
      remove_folder_until_gone(slot.path);
}

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

std::string join_path(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string resolved_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr)
    return buf;
  const std::string dir = folder_of(path);
  if (::realpath(dir.c_str(), buf) != nullptr)
    return join_path(buf, name_of(path));
  return path;
}

namespace {
// Dirty bytes a NewFile lets gather before it starts their write-back: large enough for the disk
// to take big requests, small enough that write-back starts while the file is being written.
constexpr uint64_t kWritebackBytes = uint64_t(8) << 20;
}  // namespace

NewFile::NewFile(const std::string& path, const std::string& label) : path_(path), label_(label) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw IoError(label + ": cannot write: " + errno_text());
}

NewFile::~NewFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

void NewFile::fail(const std::string& reason) {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
  throw IoError(label_ + ": cannot write: " + reason);
}

size_t NewFile::write_some(const char* p, size_t size, int64_t offset) {
  for (;;) {
    const ssize_t n =
        offset < 0 ? ::write(fd_, p, size) : ::pwrite(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      fail(n < 0 ? errno_text() : "the disk accepted no more bytes");
    return static_cast<size_t>(n);
  }
}

void NewFile::append(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // Slices of the write-back unit, so that the write-back of a large piece starts while the
    // rest of it is being written.
    const uint64_t room = kWritebackBytes - (written_ - handed_to_writeback_);
    const size_t n = write_some(p, static_cast<size_t>(std::min<uint64_t>(size, room)), -1);
    p += n;
    size -= n;
    written_ += n;
    if (written_ - handed_to_writeback_ >= kWritebackBytes) {
#ifdef SYNC_FILE_RANGE_WRITE
      // Only starts the write-back (errors surface in finish()'s fsync); a file system without
      // it (EINVAL, ENOSYS) is simply flushed at the end.
      ::sync_file_range(fd_, static_cast<off_t>(handed_to_writeback_),
                        static_cast<off_t>(written_ - handed_to_writeback_), SYNC_FILE_RANGE_WRITE);
#endif
      handed_to_writeback_ = written_;
    }
  }
}

void NewFile::overwrite(uint64_t offset, const void* data, size_t size) {
  if (offset + size > written_)
    fail("a rewrite past the end of the file");
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const size_t n = write_some(p, size, static_cast<int64_t>(offset));
    p += n;
    size -= n;
    offset += n;
  }
}

void NewFile::finish() {
  if (::fsync(fd_) != 0)
    fail(errno_text());
  const int fd = fd_;
  fd_ = -1;  // closed even when close fails: fail() must not close it again
  if (::close(fd) != 0)
    fail(errno_text());
}

void write_new_file(const std::string& path, const std::vector<ByteSpan>& pieces,
                    const std::string& label) {
  NewFile file(path, label);
  for (const ByteSpan& piece : pieces)
    file.append(piece.data, piece.size);
  file.finish();
}

void sync_path(const std::string& path, const std::string& label) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(label + ": cannot write: " + errno_text());
  // Folders of some file systems refuse fsync (EINVAL); their entries are then as durable as
  // the file system makes them.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const std::string reason = errno_text();
    ::close(fd);
    throw IoError(label + ": cannot write: " + reason);
  }
  if (::close(fd) != 0)
    throw IoError(label + ": cannot write: " + errno_text());
}

MappedFile::MappedFile(const std::string& path, const std::string& label) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    const std::string why = errno_text();
    if (fd_ >= 0)
      ::close(fd_);
    throw IoError(label + ": cannot reopen the written file: " + why);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      const std::string why = errno_text();
      ::close(fd_);
      throw IoError(label + ": cannot reopen the written file: " + why);
    }
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const unsigned char*>(p);
  }
}

MappedFile::~MappedFile() {
  if (data_ != nullptr)
    ::munmap(const_cast<unsigned char*>(data_), size_);
  if (fd_ >= 0)
    ::close(fd_);
}

namespace {

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
  check_replaceable(path);
  const std::string dir = folder_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    throw IoError(path + ": cannot write: the folder " + dir + " does not exist");
  if (!S_ISDIR(st.st_mode))
    throw IoError(path + ": cannot write: " + dir + " is not a folder");
  // Root passes access(W_OK) even on read-only places (/sys, read-only mounts): try for real,
  // with the same kind of hidden folder the write itself will use.
  int slot = -1;
  const std::string probe =
      create_registered_folder(join_path(dir, hidden_name(name_of(path), ".probeXXXXXX")), slot);
  if (probe.empty())
    throw IoError(path + ": cannot write to the folder " + dir + ": " + std::strerror(errno));
  ::rmdir(probe.c_str());
  unregister_staging(slot);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return resolved_path(a) == resolved_path(b);
}

StagingFolder::StagingFolder(const std::string& target) : target_(target) {
  check_output_location(target);
  target_dir_ = folder_of(target);
  folder_ = create_registered_folder(
      join_path(target_dir_, hidden_name(name_of(target), ".tmpXXXXXX")), slot_);
  if (folder_.empty()) {
    throw IoError(target + ": cannot create a temporary folder in " + target_dir_ + ": " +
                  std::strerror(errno));
  }
  staged_ = join_path(folder_, name_of(target));
}

StagingFolder::~StagingFolder() {
  remove_folder();
}

void StagingFolder::remove_folder() noexcept {
  if (folder_.empty())
    return;
  unregister_staging(slot_);
  slot_ = -1;
  for (const auto& n : list_files(folder_))
    ::unlink(join_path(folder_, n).c_str());
  ::rmdir(folder_.c_str());
}

namespace {

// Moves the staged `from` to `to`. Without `overwrite`, never replaces a file: renameat2 with
// RENAME_NOREPLACE, or link and unlink where the file system refuses that flag, so that of two
// writers that both found `to` absent exactly one succeeds. With `overwrite`, rename(2) replaces
// `to` whole, and only when it is a regular file (or a symbolic link, itself replaced).
void move_into_place(const std::string& from, const std::string& to, bool overwrite) {
  if (overwrite) {
    check_replaceable(to);
    if (::rename(from.c_str(), to.c_str()) != 0)
      throw IoError(to + ": cannot move the written file into place: " + errno_text());
    return;
  }
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
    return;
  if (errno == EINVAL || errno == ENOSYS || errno == EPERM) {
    if (::link(from.c_str(), to.c_str()) == 0) {
      ::unlink(from.c_str());
      return;
    }
  }
  if (errno == EEXIST)
    throw RequestError(to +
                       ": was created by another program while ndconv wrote it; that file is "
                       "kept and this output discarded (use --force to replace it)");
  throw IoError(to + ": cannot move the written file into place: " + errno_text());
}

}  // namespace

std::vector<std::string> StagingFolder::commit(bool overwrite) {
  const std::string main_name = name_of(target_);
  std::vector<std::string> names = list_files(folder_);
  if (names.empty() || !exists(staged_))
    throw IoError(target_ + ": the image writer produced no file");
  if (!overwrite) {
    for (const auto& n : names) {
      const std::string final_path = join_path(target_dir_, n);
      if (exists(final_path)) {
        throw RequestError(final_path + ": exists; use --force to overwrite it");
      }
    }
  }
  for (const auto& n : names)
    sync_path(join_path(folder_, n), join_path(target_dir_, n));
  // Companion files (e.g. the .raw of a .mhd) first, so that the header never names missing data.
  std::vector<std::string> ordered;
  for (const auto& n : names)
    if (n != main_name)
      ordered.push_back(n);
  ordered.push_back(main_name);
  std::vector<std::string> moved;
  std::vector<std::string> from, to;
  for (const auto& n : ordered) {
    from.push_back(join_path(folder_, n));
    to.push_back(join_path(target_dir_, n));
  }
  {
    // The renames run uninterrupted, and an interrupt handled by another thread waits for them:
    // an output is either all in place or not at all.
    const BusyWithStaging busy;
    for (size_t i = 0; i < to.size(); ++i) {
      try {
        move_into_place(from[i], to[i], overwrite);
      } catch (...) {
        // The files this commit already placed are its own (they did not exist, or --force):
        // taken back, so that no half of a header/data pair stays.
        for (const std::string& placed : moved)
          ::unlink(placed.c_str());
        throw;
      }
      moved.push_back(to[i]);
    }
  }
  sync_path(target_dir_, target_);
  return moved;
}

}  // namespace ndconv::io
