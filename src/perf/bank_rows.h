// The filter bank's and the adaptive filter's bench rows (issue 31, docs/adaptive.md):
//  bank_3d, bank_4d  the quadrature filter banks (12 real 7^3 filters on 256^3; 24 real 7^4
//                    filters on 128^3 x 32) on data already on the device, against the measured
//                    FP32 FMA peak and against the same filters as separate single-filter dense
//                    launches; also the whole filter_bank call on host buffers;
//  bank_sum_3d       the reconstruction's weighted sum (7 real 11^3 filters on 256^3 with
//                    per-voxel weights) fused into the bank's pass, against the bank writing the
//                    7 responses plus the memory floor of a separate summing pass;
//  adaptive_4d       the whole adaptive filter (ndconv::adaptive_filter, true 4D, default
//                    parameters) on a 160^3 x 20 echo-like sequence in memory: time per stage and
//                    the bank stages' share of the FMA peak.
// Each is validated against the CPU backend (the CPU bank on windows of the output; the adaptive
// filter on a small sequence) before it is timed.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "perf/bench.h"
#include "perf/check.h"
#include "perf/gpu.h"

namespace ndconv::perf {

/// The rows above (Workload::Kind::Bank), in order.
std::vector<Workload> bank_workloads();

/// Runs one of them on `device` (its ceilings measured, `timer` on it); counts validation
/// failures into `failures`.
Json bank_row(const Workload& w, const BenchConfig& config, int device,
              const gpu::Ceilings& ceilings, gpu::Timer& timer, uint64_t seed, int& failures);

/// The CPU bank's values on windows of the output, chosen as for a dense filter of
/// count x filter.count() taps (check.h: choose_windows): one plan per filter or, with `weights`
/// (count contiguous volumes), one plan of the weighted sum. `taps`: the count filters
/// contiguous; correlation, zero boundary, `same` region. Exposed for the tests.
std::vector<CheckPlan> cpu_bank_check(const Shape& volume, const Shape& filter, int count,
                                      const std::vector<float>& taps,
                                      const std::vector<float>& input, const float* weights,
                                      double budget_fmas);

/// The rows' comparisons (bank against separate launches, fused against separate, stages), after
/// the kernel table; nothing when `rows` holds none of them.
void print_bank_rows(std::ostream& out, const Json& rows);

}  // namespace ndconv::perf
