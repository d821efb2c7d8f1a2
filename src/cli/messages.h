// Messages on stderr (notes, warnings, formatted lines) and the clocks of the --verbose timings.
#pragma once

#include <chrono>
#include <string>

#include "core/seconds_since.h"
#include "options.h"

namespace ndconv::cli {

/// Messages on stderr: notes (suppressed by --quiet), explanations (only with --verbose: what
/// was chosen and why) and warnings (suppressed by --quiet only: set_quiet). Each starts on its
/// own line (an open progress bar's line is ended first).
void note(const CommonOptions& common, const std::string& text);
void explain(const CommonOptions& common, const std::string& text);
void warn(const std::string& text);
/// -q: no warnings either (set once the command line is parsed; errors are always printed).
void set_quiet(bool quiet);
/// One line on stderr, printf-formatted (without its newline), through io::print_stderr_line: a
/// batch's other threads silence stderr while ITK reads or writes, and a plain fprintf would be
/// lost then.
void print_line(const char* format, ...) __attribute__((format(printf, 1, 2)));

using detail::seconds_since;  // core/seconds_since.h

/// Seconds since the program's static initialisation (just before main; the dynamic loading
/// before it is not counted): the "in all" of the --verbose timings, so that what a command
/// spends outside its stages shows.
double seconds_since_start();

}  // namespace ndconv::cli
