#include "perf/outcome.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "perf/sweep.h"

namespace ndconv::perf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string text(const Json& row, const char* key) {
  const Json* v = row.find(key);
  return v ? v->scalar_text() : std::string();
}

double number(const Json& row, const char* key) {
  const std::string t = text(row, key);
  return t.empty() ? kNaN : std::stod(t);
}

int integer(const Json& row, const char* key, int fallback) {
  const std::string t = text(row, key);
  return t.empty() ? fallback : std::stoi(t);
}

// The series of `key` in `o`, or nullptr.
const SeriesOutcome* series_of(const ProblemOutcome& o, const PointKey& key) {
  for (const SeriesOutcome& s : o.series)
    if (s.series.same_series(key))
      return &s;
  return nullptr;
}

Json key_json(const PointKey& k) {
  return Json::object()
      .set("kernel", k.kernel)
      .set("tx", k.tx)
      .set("ko", k.ko)
      .set("block", k.block);
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
  Json summary = Json::object().set("dims", dims).set("volume", volume).set("filter", k);
  ProblemOutcome o;
  bool ok = true;
  try {
    o = problem_outcome(points);
  } catch (const std::exception& e) {
    ok = false;
    summary.set("error", e.what());
  }
  for (std::size_t r = first; r < rows.size(); ++r) {
    const TimedPoint& p = points[r - first];
    const SeriesOutcome* s = ok ? series_of(o, p.key) : nullptr;
    rows[r]
        .set("load_factor_theory", theoretical_load_factor(k, std::max(1, p.key.ko)))
        .set("speedup_vs_ko1", s ? s->ko1_ms / p.ms : kNaN)
        .set("best_point", ok ? o.best.label() : "")
        .set("auto_point", ok ? o.automatic.key.label() : "")
        .set("auto_loss_pct", ok ? 100.0 * o.auto_loss : kNaN);
  }
  summary.set("points", static_cast<int>(points.size()))
      .set("not_implementable", not_implementable);
  if (!ok)
    return summary;
  const double flops = 2.0 * static_cast<double>(voxels) * std::pow(static_cast<double>(k), dims);
  Json series = Json::array();
  for (const SeriesOutcome& s : o.series) {
    series.push(key_json(s.series)
                    .set("ko1_ms", s.ko1_ms)
                    .set("best_ko", s.best_ko)
                    .set("best_ms", s.best_ms)
                    .set("speedup_best_vs_ko1", s.ko1_ms / s.best_ms)
                    .set("theoretical_load_factor_best", theoretical_load_factor(k, s.best_ko)));
  }
  return summary.set("best", key_json(o.best.key).set("auto", o.best.is_auto))
      .set("best_point", o.best.label())
      .set("best_ms", o.best.ms)
      .set("best_gflops", flops / (o.best.ms * 1e-3) * 1e-9)
      .set("best_pct_fma_peak", 100.0 * flops / (o.best.ms * 1e-3) / fma_flops)
      .set("auto", key_json(o.automatic.key))
      .set("auto_point", o.automatic.key.label())
      .set("auto_ms", o.automatic.ms)
      .set("auto_loss_pct", 100.0 * o.auto_loss)
      .set("auto_within_5pct", o.auto_loss <= 0.05)
      .set("series", series);
}

Json overall_outcome(const std::vector<Json>& problems, const std::vector<Json>& rows) {
  int within = 0, counted = 0, failures = 0, not_implementable = 0;
  for (const Json& p : problems) {
    if (const Json* w = p.find("auto_within_5pct")) {
      ++counted;
      within += w->scalar_text() == "true";
    }
  }
  for (const Json& r : rows) {
    failures += text(r, "status") == "invalid";
    not_implementable += text(r, "status") == "not_implementable";
  }
  return Json::object()
      .set("points", static_cast<int>(rows.size()))
      .set("validation_failures", failures)
      .set("not_implementable", not_implementable)
      .set("problems", counted)
      .set("auto_within_5pct_of_best", within);
}

}  // namespace ndconv::perf
