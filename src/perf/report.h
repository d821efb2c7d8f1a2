// Output of the sweep and the bench: a tiny JSON value (objects keep their keys in insertion
// order) and a CSV writer over flat objects, one row per object with a header line taken from the
// first. Non-finite numbers (a ceiling that could not be measured, a column that does not apply)
// are written as JSON null and as an empty CSV field, never as a made-up number.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace ndconv::perf {

class Json {
 public:
  enum class Kind { Null, Bool, Integer, Number, Text, Array, Object };

  Json() = default;
  Json(bool v) : kind_(Kind::Bool), bool_(v) {}
  Json(int v) : kind_(Kind::Integer), int_(v) {}
  Json(int64_t v) : kind_(Kind::Integer), int_(v) {}
  Json(double v) : kind_(Kind::Number), number_(v) {}
  Json(std::string v) : kind_(Kind::Text), text_(std::move(v)) {}
  Json(const char* v) : kind_(Kind::Text), text_(v) {}

  static Json array();
  static Json object();

  Kind kind() const { return kind_; }
  /// Adds or replaces `key` of an object; returns *this for chaining.
  Json& set(const std::string& key, Json value);
  /// Appends to an array; returns *this.
  Json& push(Json value);
  /// The member `key` of an object, or nullptr.
  const Json* find(const std::string& key) const;
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }
  const std::vector<Json>& items() const { return items_; }

  /// The value as one CSV field or JSON scalar text (objects and arrays: JSON).
  std::string scalar_text() const;
  void write(std::ostream& out, int indent = 0) const;
  std::string dump() const;

 private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t int_ = 0;
  double number_ = 0;
  std::string text_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& text);

/// Writes a header line (the keys of rows[0]) and one line per row. Every row must have the same
/// keys in the same order; throws std::invalid_argument otherwise.
void write_csv(std::ostream& out, const std::vector<Json>& rows);

/// Writes `text` to `path` through a temporary file renamed into place, so that a failed run
/// never leaves a half-written file; refuses to overwrite an existing file unless `overwrite`.
/// Throws ndconv::InvalidArgument with a one-line message.
void write_file(const std::string& path, const std::string& text, bool overwrite);

}  // namespace ndconv::perf
