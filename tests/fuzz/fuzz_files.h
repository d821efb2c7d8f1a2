// What the fuzz targets share: ndconv's parsers read files, so each input is written to a file in
// a private folder (made once per process, beside a small data file a header may name) and the
// parser run on its path. IoError and RequestError are the parsers' answers to bad input; any other
// exception, a crash, a sanitizer report, a hang or a leak is a finding.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "io/image.h"

namespace ndconv::fuzz {

/// The private folder, with "inside.raw" (4 KiB) and "s0.raw", "s1.raw" that headers may name.
inline const std::string& folder() {
  static const std::string dir = [] {
    char name[] = "/tmp/ndconv_fuzz_XXXXXX";
    const char* made = ::mkdtemp(name);
    const std::string d = made ? made : "/tmp";
    for (const char* data : {"inside.raw", "s0.raw", "s1.raw"}) {
      std::ofstream f(d + "/" + data, std::ios::binary);
      f << std::string(4096, '\x01');
    }
    return d;
  }();
  return dir;
}

/// Writes `size` bytes to `name` in the folder; returns its path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = folder() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

/// Runs `parse`; ndconv's own errors are expected answers.
template <class Parse>
void expect_answer(const Parse& parse) {
  try {
    parse();
  } catch (const io::IoError&) {
  } catch (const io::RequestError&) {
  }
}

}  // namespace ndconv::fuzz
