// Output of the sweep and the bench: JSON documents (nlohmann::ordered_json, so that keys keep
// the order they were written in; a non-finite number, such as a ceiling that could not be
// measured or a column that does not apply, is written as null, never as a made-up number), the
// sweep's points as CSV for scripts/plot_study.py, and files written whole or not at all.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ndconv::perf {

using Json = nlohmann::ordered_json;

/// The document as written to a file: indented, one line at the end; bytes that are not UTF-8
/// (a path or a CPU name as the system gave it) replaced rather than failing after a long run.
std::string json_text(const Json& document);

/// The member `key` of `object` as one field of text: a string as it is, a number or a boolean as
/// JSON writes it, and "" where the member is missing, null or not a finite number.
std::string text(const Json& object, const char* key);

/// The member `key` of `object` as a number; NaN where it is missing, null or not a number.
double number(const Json& object, const char* key);

/// A header line (the keys of rows[0]) and one line per row with the fields in the header's order
/// (text() of each; quoted where a field holds a comma, a quote or a line break).
void write_csv(std::ostream& out, const std::vector<Json>& rows);

/// Writes `contents` to `path` through a temporary file renamed into place, so that a failed run
/// never leaves a half-written file; refuses to overwrite an existing file unless `overwrite`.
/// Throws ndconv::InvalidArgument with a one-line message.
void write_file(const std::string& path, const std::string& contents, bool overwrite);

}  // namespace ndconv::perf
