#include "perf/rescore.h"

#include <cstdio>
#include <istream>
#include <limits>
#include <map>
#include <ostream>

#include "engine/ko_rule.h"
#include "ndconv/errors.h"
#include "perf/params.h"
#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::string text(const Json& row, const char* key) {
  const Json* v = row.find(key);
  if (!v)
    throw InvalidArgument(std::string("the sweep CSV has no column '") + key + "'");
  return v->scalar_text();
}

double number(const Json& row, const char* key) {
  const std::string t = text(row, key);
  return t.empty() ? std::numeric_limits<double>::quiet_NaN() : std::stod(t);
}

}  // namespace

std::vector<Json> read_csv(std::istream& in) {
  std::string line;
  if (!std::getline(in, line))
    return {};
  const std::vector<std::string> header = csv_fields(line);
  std::vector<Json> rows;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != header.size()) {
      throw InvalidArgument("CSV line " + std::to_string(rows.size() + 2) + " has " +
                            std::to_string(f.size()) + " fields, the header " +
                            std::to_string(header.size()));
    }
    Json row = Json::object();
    for (std::size_t i = 0; i < f.size(); ++i)
      row.set(header[i], f[i]);
    rows.push_back(row);
  }
  return rows;
}

Json rescore_sweep(const std::vector<Json>& rows) {
  // Problems in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Json*>> groups;
  for (const Json& r : rows) {
    if (text(r, "mode") != "gpu" || text(r, "registers").empty())
      continue;
    const std::string key = text(r, "volume") + "/" + text(r, "filter");
    if (!groups.count(key))
      order.push_back(key);
    groups[key].push_back(&r);
  }
  if (order.empty())
    throw InvalidArgument("the CSV holds no GPU sweep rows (registers recorded)");
  Json problems = Json::array();
  int within5 = 0, within10 = 0, scored = 0;
  for (const std::string& key : order) {
    const auto& g = groups[key];
    const Shape vol = parse_shape(text(*g[0], "volume"), "volume");
    const Shape filt = parse_shape(text(*g[0], "filter"), "filter");
    std::vector<cuda_backend::KoCandidate> candidates;
    std::vector<std::pair<int, double>> timed;
    for (const Json* r : g) {
      cuda_backend::KoCandidate c;
      c.outputs_per_thread = static_cast<int>(number(*r, "ko"));
      c.registers_per_thread = static_cast<int>(number(*r, "registers"));
      c.local_bytes = static_cast<std::size_t>(number(*r, "spill_bytes"));
      c.blocks_per_sm = static_cast<int>(number(*r, "blocks_per_sm"));
      c.occupancy = number(*r, "occupancy");
      const Shape block = parse_shape(text(*r, "block"), "block");
      c.block_threads = static_cast<int>(block.count());
      candidates.push_back(c);
      if (text(*r, "valid") == "true")
        timed.emplace_back(c.outputs_per_thread, number(*r, "median_ms"));
    }
    const int last = vol.dims - 1;
    const cuda_backend::KoChoice choice =
        cuda_backend::choose_outputs_per_thread(candidates, vol.extent[last], filt.extent[last]);
    Json p = Json::object()
                 .set("dims", vol.dims)
                 .set("volume", format_shape(vol))
                 .set("filter", format_shape(filt))
                 .set("recorded_rule_ko", static_cast<int>(number(*g[0], "auto_ko")))
                 .set("rule_ko", choice.outputs_per_thread)
                 .set("rule_reason", choice.reason);
    try {
      const KoOutcome o = ko_outcome(timed, choice.outputs_per_thread);
      ++scored;
      within5 += o.auto_loss <= 0.05;
      within10 += o.auto_loss <= 0.10;
      p.set("best_ko", o.best_ko)
          .set("best_ms", o.best_ms)
          .set("rule_loss_pct", 100.0 * o.auto_loss);
    } catch (const std::exception& e) {
      p.set("error", e.what());
    }
    problems.push(p);
  }
  return Json::object()
      .set("problems", problems)
      .set("scored", scored)
      .set("rule_within_5pct", within5)
      .set("rule_within_10pct", within10);
}

void print_rescore_table(std::ostream& out, const Json& rescored) {
  char line[200];
  std::snprintf(line, sizeof line, "%-4s %-18s %-10s %9s %8s %8s %10s\n", "dim", "volume", "filter",
                "recorded", "rule_ko", "best_ko", "rule_loss");
  out << line;
  for (const Json& p : rescored.find("problems")->items()) {
    const Json* loss = p.find("rule_loss_pct");
    std::snprintf(line, sizeof line, "%-4s %-18s %-10s %9s %8s %8s %9s%%\n",
                  p.find("dims")->scalar_text().c_str(), p.find("volume")->scalar_text().c_str(),
                  p.find("filter")->scalar_text().c_str(),
                  p.find("recorded_rule_ko")->scalar_text().c_str(),
                  p.find("rule_ko")->scalar_text().c_str(),
                  p.find("best_ko") ? p.find("best_ko")->scalar_text().c_str() : "-",
                  loss ? loss->scalar_text().c_str() : "-");
    out << line;
  }
  out << "current rule within 5% of the best KO: "
      << rescored.find("rule_within_5pct")->scalar_text() << " of "
      << rescored.find("scored")->scalar_text()
      << " problems; within 10%: " << rescored.find("rule_within_10pct")->scalar_text() << "\n";
}

}  // namespace ndconv::perf
