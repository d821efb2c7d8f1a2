#include "list_file.h"

#include "options.h"

namespace ndconv::cli {

std::vector<std::string> parse_list_text(const std::string& text, const std::string& shown) {
  std::vector<std::string> inputs;
  size_t start = 0, number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    ++number;
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find('\0') != std::string::npos)
      throw UsageError("--list: " + shown + ": line " + std::to_string(number) +
                       " holds a NUL byte; a path cannot");
    if (!line.empty() && line[0] != '#')
      inputs.push_back(std::move(line));
  }
  return inputs;
}

}  // namespace ndconv::cli
