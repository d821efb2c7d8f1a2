#include "perf/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

#include "ndconv/errors.h"

namespace ndconv::perf {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string number_text(double v) {
  if (!std::isfinite(v))
    return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

Json Json::array() {
  Json j;
  j.kind_ = Kind::Array;
  return j;
}

Json Json::object() {
  Json j;
  j.kind_ = Kind::Object;
  return j;
}

Json& Json::set(const std::string& key, Json value) {
  if (kind_ != Kind::Object)
    throw std::logic_error("Json::set on a non-object");
  for (auto& m : members_) {
    if (m.first == key) {
      m.second = std::move(value);
      return *this;
    }
  }
  members_.emplace_back(key, std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  if (kind_ != Kind::Array)
    throw std::logic_error("Json::push on a non-array");
  items_.push_back(std::move(value));
  return *this;
}

const Json* Json::find(const std::string& key) const {
  for (const auto& m : members_) {
    if (m.first == key)
      return &m.second;
  }
  return nullptr;
}

std::string Json::scalar_text() const {
  switch (kind_) {
    case Kind::Null:
      return "";
    case Kind::Bool:
      return bool_ ? "true" : "false";
    case Kind::Integer:
      return std::to_string(int_);
    case Kind::Number:
      return number_text(number_);
    case Kind::Text:
      return text_;
    case Kind::Array:
    case Kind::Object:
      return dump();
  }
  return "";
}

void Json::write(std::ostream& out, int indent) const {
  const std::string pad(indent + 2, ' '), end_pad(indent, ' ');
  switch (kind_) {
    case Kind::Null:
      out << "null";
      return;
    case Kind::Number:
      out << (std::isfinite(number_) ? number_text(number_) : "null");
      return;
    case Kind::Text:
      out << json_string(text_);
      return;
    case Kind::Bool:
    case Kind::Integer:
      out << scalar_text();
      return;
    case Kind::Array: {
      if (items_.empty()) {
        out << "[]";
        return;
      }
      // Arrays of scalars stay on one line; arrays of objects get one line each.
      const bool flat = items_.front().kind_ != Kind::Object && items_.front().kind_ != Kind::Array;
      out << '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i)
          out << ',';
        if (!flat)
          out << '\n' << pad;
        items_[i].write(out, indent + 2);
      }
      if (!flat)
        out << '\n' << end_pad;
      out << ']';
      return;
    }
    case Kind::Object: {
      if (members_.empty()) {
        out << "{}";
        return;
      }
      out << '{';
      for (std::size_t i = 0; i < members_.size(); ++i) {
        out << (i ? ",\n" : "\n") << pad << json_string(members_[i].first) << ": ";
        members_[i].second.write(out, indent + 2);
      }
      out << '\n' << end_pad << '}';
      return;
    }
  }
}

std::string Json::dump() const {
  std::ostringstream s;
  write(s);
  return s.str();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos)
    return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

void write_csv(std::ostream& out, const std::vector<Json>& rows) {
  if (rows.empty())
    return;
  const auto& header = rows.front().members();
  for (std::size_t i = 0; i < header.size(); ++i)
    out << (i ? "," : "") << csv_field(header[i].first);
  out << '\n';
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& m = rows[r].members();
    if (m.size() != header.size())
      throw std::invalid_argument("CSV row " + std::to_string(r) + " has a different column count");
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (m[i].first != header[i].first) {
        throw std::invalid_argument("CSV row " + std::to_string(r) + " has column '" + m[i].first +
                                    "' where the header has '" + header[i].first + "'");
      }
      out << (i ? "," : "") << csv_field(m[i].second.scalar_text());
    }
    out << '\n';
  }
}

void write_file(const std::string& path, const std::string& text, bool overwrite) {
  struct stat st {};
  if (!overwrite && ::stat(path.c_str(), &st) == 0) {
    throw InvalidArgument("'" + path + "' exists; not overwriting it (use --force)");
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      throw InvalidArgument("cannot write '" + tmp + "'");
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw InvalidArgument("writing '" + tmp + "' failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InvalidArgument("cannot move '" + tmp + "' to '" + path + "'");
  }
}

}  // namespace ndconv::perf
