// Small helpers for the headers and lists ndconv parses itself before ITK sees a file (NRRD
// headers, DICOM slice lists and markers). ITK-free.
#pragma once

#include <cstring>
#include <fstream>
#include <string>

namespace ndconv::io {

/// `s` without leading and trailing blanks (spaces, tabs, and the '\r' of a CRLF line).
inline std::string trim_blanks(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// True when the file `path` holds `marker` at byte `offset` (a format's magic number).
inline bool file_holds_at(const std::string& path, size_t offset, const std::string& marker) {
  std::ifstream in(path, std::ios::binary);
  std::string head(offset + marker.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  return in.gcount() == static_cast<std::streamsize>(head.size()) &&
         head.compare(offset, marker.size(), marker) == 0;
}

}  // namespace ndconv::io
