#include "perf/outcome.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int integer(const Json& row, const char* key, int fallback) {
  const double v = number(row, key);
  return std::isfinite(v) ? static_cast<int>(v) : fallback;
}

// The series of `key` in `o`, or nullptr.
const SeriesOutcome* series_of(const ProblemOutcome& o, const PointKey& key) {
  for (const SeriesOutcome& s : o.series)
    if (s.series.same_series(key))
      return &s;
  return nullptr;
}

Json key_json(const PointKey& k) {
  return {{"kernel", k.kernel}, {"tx", k.tx}, {"ko", k.ko}, {"block", k.block}};
}

}  // namespace

std::string PointKey::label() const {
  std::string s = kernel;
  if (kernel == "tiled")
    s += " TX=" + std::to_string(tx);
  s += " KO=" + std::to_string(ko);
  if (!block.empty())
    s += " " + block;
  return s;
}

ProblemOutcome problem_outcome(const std::vector<TimedPoint>& points) {
  ProblemOutcome o;
  bool have_best = false, have_auto = false;
  for (const TimedPoint& p : points) {
    if (p.is_auto) {
      o.automatic = p;
      have_auto = std::isfinite(p.ms);
    }
    if (!std::isfinite(p.ms))
      continue;
    if (!have_best || p.ms < o.best.ms) {
      o.best = p;
      have_best = true;
    }
    if (p.is_auto)
      continue;
    SeriesOutcome* s = nullptr;
    for (SeriesOutcome& c : o.series)
      if (c.series.same_series(p.key))
        s = &c;
    if (s == nullptr) {
      o.series.push_back(SeriesOutcome{p.key, kNaN, p.key.ko, p.ms});
      o.series.back().series.ko = 0;
      s = &o.series.back();
    }
    if (p.key.ko == 1)
      s->ko1_ms = p.ms;
    if (p.ms < s->best_ms) {
      s->best_ko = p.key.ko;
      s->best_ms = p.ms;
    }
  }
  if (!have_best)
    throw std::invalid_argument("no valid timed point");
  if (!have_auto)
    throw std::invalid_argument("the automatic plan's point was not validated and timed");
  o.auto_loss = o.automatic.ms / o.best.ms - 1.0;
  return o;
}

TimedPoint timed_point(const Json& row) {
  TimedPoint p;
  p.key.kernel = text(row, "kernel");
  p.key.tx = integer(row, "tx", 1);
  p.key.ko = integer(row, "ko", 0);
  p.key.block = text(row, "block");
  p.is_auto = text(row, "point") == "auto";
  if (text(row, "status") == "valid")
    p.ms = number(row, "median_ms");
  return p;
}

Json summarize_problem(std::vector<Json>& rows, std::size_t first, int dims,
                       const std::string& volume, int64_t voxels, int64_t k, double fma_flops) {
  std::vector<TimedPoint> points;
  int not_implementable = 0;
  for (std::size_t r = first; r < rows.size(); ++r) {
    points.push_back(timed_point(rows[r]));
    not_implementable += text(rows[r], "status") == "not_implementable";
  }
  Json summary = {{"dims", dims}, {"volume", volume}, {"filter", k}};
  ProblemOutcome o;
  bool ok = true;
  try {
    o = problem_outcome(points);
  } catch (const std::exception& e) {
    ok = false;
    summary["error"] = e.what();
  }
  for (std::size_t r = first; r < rows.size(); ++r) {
    const TimedPoint& p = points[r - first];
    const SeriesOutcome* s = ok ? series_of(o, p.key) : nullptr;
    Json& row = rows[r];
    row["load_factor_theory"] = theoretical_load_factor(k, std::max(1, p.key.ko));
    row["speedup_vs_ko1"] = s ? s->ko1_ms / p.ms : kNaN;
    row["best_point"] = ok ? o.best.label() : "";
    row["auto_point"] = ok ? o.automatic.key.label() : "";
    row["auto_loss_pct"] = ok ? 100.0 * o.auto_loss : kNaN;
  }
  summary["points"] = points.size();
  summary["not_implementable"] = not_implementable;
  if (!ok)
    return summary;
  const double flops = 2.0 * static_cast<double>(voxels) * std::pow(static_cast<double>(k), dims);
  Json series = Json::array();
  for (const SeriesOutcome& s : o.series) {
    Json curve = key_json(s.series);
    curve["ko1_ms"] = s.ko1_ms;
    curve["best_ko"] = s.best_ko;
    curve["best_ms"] = s.best_ms;
    curve["speedup_best_vs_ko1"] = s.ko1_ms / s.best_ms;
    curve["theoretical_load_factor_best"] = theoretical_load_factor(k, s.best_ko);
    series.push_back(curve);
  }
  Json best = key_json(o.best.key);
  best["auto"] = o.best.is_auto;
  summary.update({{"best", best},
                  {"best_point", o.best.label()},
                  {"best_ms", o.best.ms},
                  {"best_gflops", flops / (o.best.ms * 1e-3) * 1e-9},
                  {"best_pct_fma_peak", 100.0 * flops / (o.best.ms * 1e-3) / fma_flops},
                  {"auto", key_json(o.automatic.key)},
                  {"auto_point", o.automatic.key.label()},
                  {"auto_ms", o.automatic.ms},
                  {"auto_loss_pct", 100.0 * o.auto_loss},
                  {"auto_within_5pct", o.auto_loss <= 0.05},
                  {"series", series}});
  return summary;
}

Json overall_outcome(const std::vector<Json>& problems, const std::vector<Json>& rows) {
  int within = 0, counted = 0, failures = 0, not_implementable = 0;
  for (const Json& p : problems) {
    if (p.contains("auto_within_5pct")) {
      ++counted;
      within += p["auto_within_5pct"].get<bool>();
    }
  }
  for (const Json& r : rows) {
    failures += text(r, "status") == "invalid";
    not_implementable += text(r, "status") == "not_implementable";
  }
  return {{"points", rows.size()},
          {"validation_failures", failures},
          {"not_implementable", not_implementable},
          {"problems", counted},
          {"auto_within_5pct_of_best", within}};
}

}  // namespace ndconv::perf
