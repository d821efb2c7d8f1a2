#include "perf/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <ostream>
#include <sys/stat.h>

#include "ndconv/errors.h"

namespace ndconv::perf {

std::string json_text(const Json& document) {
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string text(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return "";
  if (it->is_string())
    return it->get<std::string>();
  if (it->is_number_float() && !std::isfinite(it->get<double>()))
    return "";
  return it->dump();
}

double number(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>()
                                               : std::numeric_limits<double>::quiet_NaN();
}

namespace {

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos)
    return field;
  std::string quoted = "\"";
  for (const char c : field)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

void write_csv(std::ostream& out, const std::vector<Json>& rows) {
  if (rows.empty())
    return;
  std::vector<std::string> header;
  for (const auto& member : rows.front().items())
    header.push_back(member.key());
  for (std::size_t i = 0; i < header.size(); ++i)
    out << (i ? "," : "") << csv_field(header[i]);
  out << '\n';
  for (const Json& row : rows) {
    for (std::size_t i = 0; i < header.size(); ++i)
      out << (i ? "," : "") << csv_field(text(row, header[i].c_str()));
    out << '\n';
  }
}

void write_file(const std::string& path, const std::string& contents, bool overwrite) {
  struct stat st {};
  if (!overwrite && ::stat(path.c_str(), &st) == 0)
    throw InvalidArgument("'" + path + "' exists; not overwriting it (use --force)");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      throw InvalidArgument("cannot write '" + tmp + "'");
    f << contents;
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
