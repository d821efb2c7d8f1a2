// Small text helpers for the headers and lists ndconv parses itself before ITK sees a file (NRRD
// headers, DICOM slice lists). ITK-free.
#pragma once

#include <string>

namespace ndconv::io {

/// `s` without leading and trailing blanks (spaces, tabs, and the '\r' of a CRLF line).
inline std::string trim_blanks(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace ndconv::io
