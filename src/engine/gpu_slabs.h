// One volume over several GPUs (Options::cuda_devices): the output cut into slabs along its last
// axis, one per GPU, all run at once, each on its own thread. A slab is a problem of its own whose
// input is only the rows it reads (detail::input_rows_read: the boundary resolves in them as in
// the whole input; the whole input only where it does not, e.g. a periodic wrap), so each GPU
// uploads its share of the volume and no more. Every output voxel is computed as one GPU computes
// it, so the result is the same bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/problem.h"
#include "core/view_copy.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// Input rows along the last axis that one output row reads beyond its own (filter extent - 1).
inline int64_t last_axis_halo(const CorrelationProblem& p) {
  return p.filter_extent[p.input.dims - 1] - 1;
}
inline int64_t last_axis_halo(const SeparableProblem& p) {
  const std::vector<float>& taps = p.taps[static_cast<size_t>(p.input.dims - 1)];
  return taps.empty() ? 0 : static_cast<int64_t>(taps.size()) - 1;
}

/// `p` restricted to the output rows [first, first + rows) of its last axis, its input to the rows
/// those read (`in_rows`, set here), the offset moved to match.
template <typename Problem>
Problem output_rows(const Problem& p, int64_t first, int64_t rows, RowRange& in_rows) {
  const int last = p.output.dims - 1;
  in_rows = input_rows_read(first, rows, p.offset[last], last_axis_halo(p), p.input.extent[last],
                            p.boundary);
  Problem q = p;
  q.output = last_axis_rows(p.output, first, rows);
  q.input = last_axis_rows(p.input, in_rows.first, in_rows.rows);
  q.offset[last] += first - in_rows.first;
  return q;
}

/// The stored values of rows [first, first + rows) along the last axis.
inline StoredVolumeView last_axis_rows(const StoredVolumeView& v, const RowRange& rows) {
  StoredVolumeView s = v;
  const int last = v.dims - 1;
  s.data = v.data + rows.first * v.stride[last] * static_cast<int64_t>(scalar_size(v.type));
  s.extent[last] = rows.rows;
  return s;
}

/// Throws InvalidArgument when an index of `devices` names no usable GPU; the engine checks before
/// run_in_gpu_slabs.
void check_gpus_there(const std::vector<int>& devices);

/// Runs `run(slab problem, its input rows, options, report)` for slab g of `devices.size()` on
/// devices[g] (fewer slabs where the output has fewer rows), all at once; `report` gets the first
/// slab's report with the slabs added up, the slowest slab's times and a note. Only the first slab
/// reports progress (its share is the whole's). The first slab's failure, else any other's, is
/// rethrown after all have ended.
template <typename Problem, typename Run>
void run_in_gpu_slabs(const Problem& p, const std::vector<int>& devices, const Options& options,
                      RunReport& report, Run run) {
  const int64_t rows = p.output.extent[p.output.dims - 1];
  const int64_t slabs = std::min<int64_t>(static_cast<int64_t>(devices.size()), rows);
  std::vector<RunReport> reports(static_cast<size_t>(slabs), report);
  std::vector<std::exception_ptr> failures(static_cast<size_t>(slabs));
  int64_t rows_uploaded = 0;
  std::vector<int64_t> slab_input_rows(static_cast<size_t>(slabs));
  auto slab = [&](int64_t g) {
    try {
      Options o = options;
      o.cuda_device = devices[static_cast<size_t>(g)];
      o.cuda_devices.clear();
      if (g > 0)
        o.progress = nullptr;
      const int64_t first = rows * g / slabs, last = rows * (g + 1) / slabs;
      RowRange in_rows;
      const Problem q = output_rows(p, first, last - first, in_rows);
      slab_input_rows[static_cast<size_t>(g)] = in_rows.rows;
      run(q, in_rows, o, reports[static_cast<size_t>(g)]);
    } catch (...) {
      failures[static_cast<size_t>(g)] = std::current_exception();
    }
  };
  std::vector<std::thread> others;
  for (int64_t g = 1; g < slabs; ++g)
    others.emplace_back(slab, g);
  slab(0);
  for (std::thread& t : others)
    t.join();
  for (const std::exception_ptr& f : failures)
    if (f)
      std::rethrow_exception(f);
  report = reports[0];
  std::string gpus;
  for (int64_t g = 0; g < slabs; ++g) {
    const RunReport& r = reports[static_cast<size_t>(g)];
    if (g > 0) {
      report.slabs += r.slabs;
      report.seconds_upload = std::max(report.seconds_upload, r.seconds_upload);
      report.seconds_compute = std::max(report.seconds_compute, r.seconds_compute);
      report.seconds_download = std::max(report.seconds_download, r.seconds_download);
    }
    rows_uploaded += slab_input_rows[static_cast<size_t>(g)];
    gpus += (g ? ", " : "") + std::to_string(devices[static_cast<size_t>(g)]);
  }
  report.notes.push_back("output in " + std::to_string(slabs) +
                         " slabs along the last axis on GPUs " + gpus + " at once (" +
                         std::to_string(rows_uploaded) + " input rows uploaded of " +
                         std::to_string(p.input.extent[p.input.dims - 1]) + ")");
}

}  // namespace ndconv::detail
