// libFuzzer target: the --list file's rules (parse_list_text in src/cli/list_file.h) on any bytes,
// checked against an independent reading of the same rules (std::getline, one line at a time):
// the same paths in the same order, none empty, none holding a NUL or an LF, none a comment; a
// refusal only by UsageError, only where a line holds a NUL, naming the first such line.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli/list_file.h"
#include "cli/options.h"

namespace {

void require(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "fuzz_list_file: invariant broken: %s\n", what);
    std::abort();
  }
}

struct Expected {
  std::vector<std::string> paths;
  size_t first_nul_line = 0;  ///< 0: no line holds a NUL
};

Expected expected_reading(const std::string& text) {
  Expected e;
  std::istringstream in(text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r')
      line.erase(line.size() - 1);
    if (line.find('\0') != std::string::npos) {
      e.first_nul_line = number;
      return e;
    }
    if (!line.empty() && line.front() != '#')
      e.paths.push_back(line);
  }
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndconv;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string shown = "list.txt";
  const Expected expected = expected_reading(text);
  std::vector<std::string> paths;
  try {
    paths = cli::parse_list_text(text, shown);
  } catch (const cli::UsageError& e) {
    require(expected.first_nul_line != 0, "refused a list without a NUL byte");
    const std::string message = "--list: " + shown + ": line " +
                                std::to_string(expected.first_nul_line) + " holds a NUL byte";
    require(std::string(e.what()).rfind(message, 0) == 0, "the refusal names another line");
    return 0;
  }
  require(expected.first_nul_line == 0, "accepted a line holding a NUL byte");
  require(paths == expected.paths, "the paths differ from the lines");
  size_t bytes = 0;
  for (const std::string& path : paths) {
    require(!path.empty(), "an empty path");
    require(path.front() != '#', "a comment taken as a path");
    require(path.find('\0') == std::string::npos, "a path holding a NUL byte");
    require(path.find('\n') == std::string::npos, "a path holding an LF");
    bytes += path.size();
  }
  require(bytes <= text.size(), "more bytes out than in");
  return 0;
}
