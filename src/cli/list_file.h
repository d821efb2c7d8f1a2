// The text of a --list file turned into the inputs it names, without the filesystem, so that the
// rules are tested and fuzzed on bytes alone (tests/fuzz/fuzz_list_file.cpp).
#pragma once

#include <string>
#include <vector>

namespace ndconv::cli {

/// The inputs `text` names, one a line of any length, in order: a line ends at LF (the last one
/// may lack it) and a CR just before the LF is dropped; empty lines and lines starting with '#'
/// are skipped; every other line is a path as it stands (spaces and any other CR kept). A line
/// holding a NUL byte, a comment included, is refused: UsageError naming `shown` and the line's
/// number (from 1).
std::vector<std::string> parse_list_text(const std::string& text, const std::string& shown);

}  // namespace ndconv::cli
