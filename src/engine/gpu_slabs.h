// One volume over several GPUs (Options::cuda_devices): the output cut into slabs along its last
// axis, one per GPU, each a problem of its own that reads the whole input (the backends stage the
// rows a slab needs and apply the boundary at the volume's true edges), all run at once, each on
// its own thread. Every output voxel is computed as one GPU computes it, so the result is the
// same bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/view_copy.h"
#include "ndconv/types.h"

namespace ndconv::detail {

/// `p` with only the output rows [first, first + rows) of its last axis.
template <typename Problem>
Problem output_rows(const Problem& p, int64_t first, int64_t rows) {
  Problem q = p;
  const int last = p.output.dims - 1;
  q.output = last_axis_rows(p.output, first, rows);
  q.offset[last] += first;
  return q;
}

/// Throws InvalidArgument when an index of `devices` names no usable GPU; the engine checks before
/// run_in_gpu_slabs.
void check_gpus_there(const std::vector<int>& devices);

/// Runs `run(slab problem, options, report)` for slab g of `devices.size()` on devices[g] (fewer
/// slabs where the output has fewer rows), all at once; `report` gets the first slab's report with
/// the slabs added up, the slowest slab's times and a note. Only the first slab reports progress
/// (its share is the whole's). The first slab's failure, else any other's, is rethrown after all
/// have ended.
template <typename Problem, typename Run>
void run_in_gpu_slabs(const Problem& p, const std::vector<int>& devices, const Options& options,
                      RunReport& report, Run run) {
  const int64_t rows = p.output.extent[p.output.dims - 1];
  const int64_t slabs = std::min<int64_t>(static_cast<int64_t>(devices.size()), rows);
  std::vector<RunReport> reports(static_cast<size_t>(slabs), report);
  std::vector<std::exception_ptr> failures(static_cast<size_t>(slabs));
  auto slab = [&](int64_t g) {
    try {
      Options o = options;
      o.cuda_device = devices[static_cast<size_t>(g)];
      o.cuda_devices.clear();
      if (g > 0)
        o.progress = nullptr;
      const int64_t first = rows * g / slabs, last = rows * (g + 1) / slabs;
      run(output_rows(p, first, last - first), o, reports[static_cast<size_t>(g)]);
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
    gpus += (g ? ", " : "") + std::to_string(devices[static_cast<size_t>(g)]);
  }
  report.notes.push_back("output in " + std::to_string(slabs) +
                         " slabs along the last axis on GPUs " + gpus + " at once");
}

}  // namespace ndconv::detail
