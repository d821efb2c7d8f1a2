// Safe output: checks on the output's location before any work, and a staging folder beside the
// target in which ITK writes the file(s) under their final names (so that the extension, and the
// data file a .mhd or .hdr header names, are right), renamed into place only once complete.
// A failure at any point leaves the target folder as it was. ITK-free.
#pragma once

#include <string>
#include <vector>

namespace ndconv::io {

/// Throws IoError when `path`'s folder is missing, is not a folder or is not writable, or when
/// `path` is a folder.
void check_output_location(const std::string& path);

/// True when both paths name the same existing file (same device and inode), or are equal after
/// lexical normalisation when they do not exist.
bool same_file(const std::string& a, const std::string& b);

/// A hidden folder `.NAME.tmpXXXXXX` beside the target; removed with everything in it on
/// destruction unless committed.
class StagingFolder {
 public:
  explicit StagingFolder(const std::string& target);
  ~StagingFolder();
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  /// Where to write: the staging folder plus the target's file name.
  const std::string& staged_path() const { return staged_; }

  /// Moves every file written into the staging folder beside the target, the target itself
  /// last. Without `overwrite`, fails (RequestError) before moving anything if any of them
  /// exists. Returns the final paths.
  std::vector<std::string> commit(bool overwrite);

 private:
  std::string target_, folder_, staged_, target_dir_;
  void remove_folder() noexcept;
};

}  // namespace ndconv::io
