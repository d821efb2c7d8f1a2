// Replays the CUDA backend's KO rule (src/engine/ko_rule.h) on a recorded sweep: for every problem
// of a sweep CSV it feeds the rule the registers, spills and occupancy recorded for each KO, and
// scores the rule's choice against the measured times. This is how a change to the rule is judged
// on real numbers without a GPU (e.g. the study's H100 CSV in docs/study/).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "perf/report.h"

namespace ndconv::perf {

/// Rows of a CSV with a header line, each as (column, text) in header order. Handles RFC 4180
/// quoting. Throws InvalidArgument on a row with the wrong number of fields.
std::vector<Json> read_csv(std::istream& in);

/// One object per GPU problem of `rows` (an `ndconv sweep` CSV): recorded rule KO, the current
/// rule's KO and reason, the best KO, and the current rule's time lost.
Json rescore_sweep(const std::vector<Json>& rows);

void print_rescore_table(std::ostream& out, const Json& rescored);

}  // namespace ndconv::perf
