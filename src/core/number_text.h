// Numbers in text that users write (kernel specifications here, option values in the command
// line): one reading for both, so that a value the CLI accepts is read the same way by the engine.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ndconv::detail {

/// Parses the whole of `text` as a finite double (no leading blank, nothing after the number);
/// false otherwise.
inline bool parse_number(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())))
    return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

}  // namespace ndconv::detail
