// Safe output: checks on the output's location before any work, and a staging folder beside the
// target in which ITK writes the file(s) under their final names (so that the extension, and the
// data file a .mhd or .hdr header names, are right), renamed into place only once complete.
// A failure at any point leaves the target folder as it was. ITK-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ndconv::io {

/// Throws IoError when `path`'s folder is missing, is not a folder or is not writable, or when
/// `path` is a folder.
void check_output_location(const std::string& path);

/// True when both paths name the same file: the same device and inode when both exist, else the
/// same resolved path (`..` and symlinked folders followed).
bool same_file(const std::string& a, const std::string& b);

/// The folder part of `path` ("." when it has none) and its last component.
std::string folder_of(const std::string& path);
std::string name_of(const std::string& path);
std::string join_path(const std::string& folder, const std::string& name);

/// What `path` resolves to: symlinks and `..` followed (realpath) for an existing file, else the
/// resolved folder joined with the name. Used to compare outputs with each other and the input.
std::string resolved_path(const std::string& path);

/// Bytes to write, without owning them.
struct ByteSpan {
  const void* data;
  size_t size;
};

/// A file created new (`path` must not exist) and written front to back with large writes. Every
/// few megabytes written are handed to the kernel's write-back at once (sync_file_range), so that
/// the disk works while the rest is produced and finish()'s fsync waits only for the last ones.
/// Every call is checked; on failure, and on destruction before finish(), the file is removed.
/// Failures throw IoError "`label`: cannot write: <reason>" (e.g. "No space left on device").
class NewFile {
 public:
  NewFile(const std::string& path, const std::string& label);
  ~NewFile();
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;

  /// Writes `size` bytes at the end of the file.
  void append(const void* data, size_t size);
  /// Rewrites bytes already written (a header field known only at the end).
  void overwrite(uint64_t offset, const void* data, size_t size);
  /// Bytes written so far.
  uint64_t size() const { return written_; }
  /// fsync and close: the file is complete and on disk.
  void finish();

 private:
  [[noreturn]] void fail(const std::string& reason);
  /// One write of up to `size` bytes at `offset` (at the end when negative), retried after
  /// EINTR; returns the bytes written, or fails the file when the disk takes none.
  size_t write_some(const char* p, size_t size, int64_t offset);
  std::string path_, label_;
  int fd_ = -1;
  uint64_t written_ = 0, handed_to_writeback_ = 0;
};

/// Creates `path` (which must not exist) and writes `pieces` one after the other (NewFile).
void write_new_file(const std::string& path, const std::vector<ByteSpan>& pieces,
                    const std::string& label);

/// fsync of an existing file (or folder), checked; IoError "`label`: cannot write: <reason>".
void sync_path(const std::string& path, const std::string& label);

/// A whole file mapped read-only (for encoding or checking it without copying it).
class MappedFile {
 public:
  /// Throws IoError "`label`: cannot reopen the written file: <reason>".
  MappedFile(const std::string& path, const std::string& label);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

/// Removes every staging folder that exists now, with what is in it. Async-signal-safe (only
/// system calls, no allocation): for a SIGINT/SIGTERM handler that ends the process at once.
void remove_staging_folders_now() noexcept;

/// A hidden folder `.NAME.tmpXXXXXX` beside the target; removed with everything in it on
/// destruction unless committed, and by remove_staging_folders_now() (it is registered while it
/// exists). The renames of commit() run with SIGINT and SIGTERM blocked, so that an interrupt
/// never leaves half of a header/data pair in place.
class StagingFolder {
 public:
  explicit StagingFolder(const std::string& target);
  ~StagingFolder();
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  /// Where to write: the staging folder plus the target's file name.
  const std::string& staged_path() const { return staged_; }

  /// The staging folder itself.
  const std::string& folder() const { return folder_; }

  /// Moves every file written into the staging folder beside the target, the target itself
  /// last, after each was flushed to disk (fsync); the target's folder is synced after the
  /// renames. Without `overwrite`, fails (RequestError) before moving anything if any of them
  /// exists. Returns the final paths.
  std::vector<std::string> commit(bool overwrite);

 private:
  std::string target_, folder_, staged_, target_dir_;
  int slot_ = -1;  ///< in the signal handler's registry
  void remove_folder() noexcept;
};

}  // namespace ndconv::io
