// The header ITK reads in place of a NRRD or MetaImage file's own. ndconv parses those headers
// itself (nrrd_header.*, header_check.*) and writes what it checked into a new header: each field
// once, on a line of its own, the data file opened by ndconv and named /proc/self/fd/N. ITK's
// reader then parses text with one meaning only and opens only the file ndconv checked, so the
// two parsers cannot disagree about which file is read. The header lives in a memory file
// (memfd): nothing is written to disk. ITK-free.
#pragma once

#include <string>
#include <vector>

namespace ndconv::io {

/// A rewritten header: `before` + the name of the opened `data_file` + `after`. An empty
/// `data_file` means the text names its files itself (a MetaImage LIST of resolved paths).
struct RewrittenHeader {
  std::string before, data_file, after;
  bool empty() const { return before.empty(); }
};

/// The rewritten header as a file ITK can open, with its data file held open; both are closed
/// on destruction (after ITK has read).
class ItkHeaderFile {
 public:
  /// Throws IoError naming `label` when the data file cannot be opened or is no longer the
  /// regular file that was checked.
  ItkHeaderFile(const RewrittenHeader& header, const std::string& label);
  ~ItkHeaderFile();
  ItkHeaderFile(const ItkHeaderFile&) = delete;
  ItkHeaderFile& operator=(const ItkHeaderFile&) = delete;

  /// The name to hand ITK ("/proc/self/fd/N").
  const std::string& path() const { return path_; }
  /// The text ITK reads (for tests and --verbose).
  const std::string& text() const { return text_; }

 private:
  std::vector<int> fds_;
  std::string path_, text_;
};

/// True when `s` holds a control character (tab included) or DEL: such a value is refused in a
/// header, since readers split lines and words at different ones.
bool holds_control_character(const std::string& s);

}  // namespace ndconv::io
