// Replays the CUDA backend's automatic plan on a recorded sweep: for every problem of a sweep CSV
// it takes the tiled kernel's default shape (ko_rule.h: choose_tiled_shape) where that point was
// implementable, else feeds the blocked kernel's KO rule the registers, spills and occupancy
// recorded for each blocked KO, and scores the choice against the best point measured. It also
// scores the blocked KO rule alone against the best blocked KO. This is how a change to the rules
// is judged on real numbers without a GPU (e.g. the study's H100 CSV in docs/study/).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "perf/report.h"

namespace ndconv::perf {

/// Rows of a CSV with a header line, each as (column, text) in header order. Handles RFC 4180
/// quoting. Throws InvalidArgument on a row with the wrong number of fields.
std::vector<Json> read_csv(std::istream& in);

/// One object per GPU problem of `rows` (an `ndconv sweep` CSV with the kernel columns): the
/// recorded auto point, the replayed plan's point and reason, the best point, the time lost, and
/// the blocked KO rule's own loss. Throws InvalidArgument for a CSV without the kernel columns.
Json rescore_sweep(const std::vector<Json>& rows);

void print_rescore_table(std::ostream& out, const Json& rescored);

}  // namespace ndconv::perf
