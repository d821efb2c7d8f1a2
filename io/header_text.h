// Small text helpers for the headers, lists and file names ndconv handles itself (NRRD and
// MetaImage headers, DICOM slice lists and markers, output names). ITK-free.
#pragma once

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ndconv::io {

/// True when `s` ends with `tail`.
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// `s` in lower case (ASCII), for comparing extensions and header values without regard to case.
inline std::string to_lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// `s` without leading and trailing blanks (spaces, tabs, and the '\r' of a CRLF line).
inline std::string trim_blanks(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// The blank-separated words of `s`.
inline std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  std::string word;
  while (in >> word)
    words.push_back(word);
  return words;
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
