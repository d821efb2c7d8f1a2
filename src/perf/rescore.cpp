#include "perf/rescore.h"

#include <cmath>
#include <cstdio>
#include <istream>
#include <limits>
#include <map>
#include <ostream>

#include "cuda/ko_rule.h"
#include "ndconv/errors.h"
#include "perf/outcome.h"
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

namespace {

// The blocked row with `ko` among `g` (forced, launched), or nullptr.
const Json* blocked_row(const std::vector<const Json*>& g, int ko) {
  for (const Json* r : g)
    if (text(*r, "kernel") == "blocked" && number(*r, "ko") == ko)
      return r;
  return nullptr;
}

double ms_of(const Json& row) {
  return text(row, "status") == "valid" ? number(row, "median_ms")
                                        : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Json rescore_sweep(const std::vector<Json>& rows) {
  if (!rows.empty() && rows[0].find("kernel") == nullptr) {
    throw InvalidArgument(
        "the sweep CSV has no column 'kernel': it was recorded before the sweep keyed its points "
        "on the kernel that ran; re-run the sweep");
  }
  // Problems in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Json*>> groups;
  for (const Json& r : rows) {
    if (text(r, "mode") != "gpu")
      continue;
    const std::string key = text(r, "volume") + "/" + text(r, "filter");
    if (!groups.count(key))
      order.push_back(key);
    groups[key].push_back(&r);
  }
  if (order.empty())
    throw InvalidArgument("the CSV holds no GPU sweep rows");
  Json problems = Json::array();
  int within5 = 0, within10 = 0, scored = 0, blocked_within5 = 0, blocked_scored = 0;
  for (const std::string& key : order) {
    const auto& g = groups[key];
    const Shape vol = parse_shape(text(*g[0], "volume"), "volume");
    const Shape filt = parse_shape(text(*g[0], "filter"), "filter");
    const int last = vol.dims - 1;
    // Everything timed, for the best point; the blocked kernel's forced points for its KO rule.
    std::vector<TimedPoint> points;
    std::vector<cuda_backend::KoCandidate> candidates;
    std::vector<std::pair<int, double>> blocked_timed;
    std::string recorded_auto;
    for (const Json* r : g) {
      const TimedPoint p = timed_point(*r);
      points.push_back(p);
      if (p.is_auto)
        recorded_auto = p.key.label();
      if (p.is_auto || p.key.kernel != "blocked" || text(*r, "registers").empty())
        continue;
      cuda_backend::KoCandidate c;
      c.outputs_per_thread = p.key.ko;
      c.registers_per_thread = static_cast<int>(number(*r, "registers"));
      c.local_bytes = static_cast<std::size_t>(number(*r, "spill_bytes"));
      c.blocks_per_sm = static_cast<int>(number(*r, "blocks_per_sm"));
      c.occupancy = number(*r, "occupancy");
      c.block_threads = static_cast<int>(parse_shape(p.key.block, "block").count());
      candidates.push_back(c);
      blocked_timed.emplace_back(p.key.ko, p.ms);
    }
    Json pj = Json::object()
                  .set("dims", vol.dims)
                  .set("volume", format_shape(vol))
                  .set("filter", format_shape(filt))
                  .set("recorded_auto", recorded_auto);
    // The automatic plan replayed: the tiled kernel's default shape where its point was
    // implementable, else the blocked kernel's KO rule (launch.cu; the environment variables
    // that change the plan are not replayed).
    // As launch_auto_dense: the wide shape first where prefer_wide_x picks it (2D filters from 9
    // taps wide), then the default shape only when the wide one was recorded as not
    // implementable (a sweep without --block-shapes has no wide point: reported as not swept).
    const int64_t tiled_last = vol.dims == 2 ? 1 : vol.extent[last];
    cuda_backend::TiledChoice tc;
    const Json* tiled = nullptr;
    const bool wide_first = cuda_backend::prefer_wide_x(vol.dims, filt.extent[0]);
    for (const bool wide_x : {wide_first, false}) {
      tc = cuda_backend::choose_tiled_shape(vol.extent[1], tiled_last, 0, wide_x);
      bool unfit = false;
      for (const Json* r : g) {
        const TimedPoint p = timed_point(*r);
        if (p.is_auto || p.key.kernel != "tiled" || p.key.tx != tc.outputs_along_x ||
            p.key.ko != tc.outputs_per_thread)
          continue;
        if (text(*r, "status") == "not_implementable")
          unfit = true;
        else if (!p.key.block.empty() &&
                 parse_shape(p.key.block, "block").extent[1] == tc.block_rows)
          tiled = r;
      }
      if (tiled != nullptr || !unfit)
        break;
    }
    bool tiled_swept = false;
    for (const Json* r : g) {
      tiled_swept |= text(*r, "kernel") == "tiled" && text(*r, "point") == "forced" &&
                     number(*r, "tx") == tc.outputs_along_x &&
                     number(*r, "ko") == tc.outputs_per_thread;
    }
    const cuda_backend::KoChoice choice =
        cuda_backend::choose_outputs_per_thread(candidates, vol.extent[last], filt.extent[last]);
    const Json* rule = tiled ? tiled : blocked_row(g, choice.outputs_per_thread);
    if (!tiled && !tiled_swept) {
      pj.set("error", "the automatic plan's tiled point (TX=" + std::to_string(tc.outputs_along_x) +
                          " KO=" + std::to_string(tc.outputs_per_thread) + ") was not swept");
    } else if (rule == nullptr) {
      pj.set("error", "the KO rule's blocked point (KO " +
                          std::to_string(choice.outputs_per_thread) + ") was not swept");
    } else {
      pj.set("rule_point", timed_point(*rule).key.label())
          .set("rule_reason", tiled ? tc.reason : choice.reason);
      try {
        const ProblemOutcome o = problem_outcome(points);
        const double loss = ms_of(*rule) / o.best.ms - 1.0;
        if (!std::isfinite(loss))
          throw std::invalid_argument("the rule's point has no valid time");
        ++scored;
        within5 += loss <= 0.05;
        within10 += loss <= 0.10;
        pj.set("best_point", o.best.label())
            .set("best_ms", o.best.ms)
            .set("rule_loss_pct", 100.0 * loss);
      } catch (const std::exception& e) {
        pj.set("error", e.what());
      }
    }
    // The blocked kernel's KO rule against the best blocked KO (the rule's own quality).
    try {
      const KoOutcome b = ko_outcome(blocked_timed, choice.outputs_per_thread);
      ++blocked_scored;
      blocked_within5 += b.auto_loss <= 0.05;
      pj.set("blocked_rule_ko", choice.outputs_per_thread)
          .set("blocked_best_ko", b.best_ko)
          .set("blocked_rule_loss_pct", 100.0 * b.auto_loss);
    } catch (const std::exception&) {
      // No valid blocked point at the rule's KO: nothing to score.
    }
    problems.push(pj);
  }
  return Json::object()
      .set("problems", problems)
      .set("scored", scored)
      .set("rule_within_5pct", within5)
      .set("rule_within_10pct", within10)
      .set("blocked_scored", blocked_scored)
      .set("blocked_rule_within_5pct", blocked_within5);
}

void print_rescore_table(std::ostream& out, const Json& rescored) {
  char line[320];
  std::snprintf(line, sizeof line, "%-4s %-15s %-9s %-24s %-24s %-24s %9s %12s\n", "dim", "volume",
                "filter", "recorded auto", "rule (replayed)", "best", "rule_loss", "blocked_loss");
  out << line;
  for (const Json& p : rescored.find("problems")->items()) {
    auto s = [&](const char* k) {
      const Json* v = p.find(k);
      return v ? v->scalar_text() : std::string("-");
    };
    auto pct = [&](const char* k) {
      const Json* v = p.find(k);
      if (!v)
        return std::string("-");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f%%", std::stod(v->scalar_text()));
      return std::string(buf);
    };
    std::snprintf(line, sizeof line, "%-4s %-15s %-9s %-24s %-24s %-24s %9s %12s",
                  s("dims").c_str(), s("volume").c_str(), s("filter").c_str(),
                  s("recorded_auto").c_str(), s("rule_point").c_str(), s("best_point").c_str(),
                  pct("rule_loss_pct").c_str(), pct("blocked_rule_loss_pct").c_str());
    out << line << (p.find("error") ? "  " + s("error") : "") << "\n";
  }
  out << "replayed automatic plan within 5% of the best point: "
      << rescored.find("rule_within_5pct")->scalar_text() << " of "
      << rescored.find("scored")->scalar_text()
      << " problems; within 10%: " << rescored.find("rule_within_10pct")->scalar_text()
      << "; blocked KO rule within 5% of the best blocked KO: "
      << rescored.find("blocked_rule_within_5pct")->scalar_text() << " of "
      << rescored.find("blocked_scored")->scalar_text() << "\n";
}

}  // namespace ndconv::perf
