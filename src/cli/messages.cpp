#include "messages.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "io/image.h"
#include "progress.h"

namespace ndconv::cli {

namespace {
std::atomic<bool> g_quiet{false};
}  // namespace

void set_quiet(bool quiet) {
  g_quiet = quiet;
}

void print_line(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(static_cast<size_t>(std::max(length, 0)) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, again);
  va_end(again);
  text.pop_back();
  end_progress_line();
  io::print_stderr_line(text);
}

void note(const CommonOptions& c, const std::string& text) {
  if (c.quiet)
    return;
  end_progress_line();
  io::print_stderr_line("ndconv: " + text);
}

void explain(const CommonOptions& c, const std::string& text) {
  if (c.verbose)
    note(c, text);
}

void warn(const std::string& text) {
  if (g_quiet)
    return;
  end_progress_line();
  io::print_stderr_line("ndconv: warning: " + text);
}

namespace {
const std::chrono::steady_clock::time_point g_program_start = std::chrono::steady_clock::now();
}  // namespace

double seconds_since_start() {
  return seconds_since(g_program_start);
}

}  // namespace ndconv::cli
