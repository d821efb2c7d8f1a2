// The run of a filtering subcommand after its checks: read the input (as float planes or in its
// stored type), filter every component plane, write the result and the preview, with progress
// and the --verbose report and timings.
#pragma once

#include <functional>
#include <string>

#include "io/image.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"
#include "options.h"
#include "preflight.h"

namespace ndconv::cli {

class Progress;

/// Reads the input, the reading stage of `progress`.
io::Image read_input(const std::string& path, Progress& progress, double& seconds_read);

/// The input of a filtering run: float32 planes, or, for a run that may go to the GPU, the values
/// as the file stores them in pinned memory (uploaded as they are and converted on the device).
struct FilterInput {
  io::Image image;  ///< the header always; no planes when `stored` holds the pixels
  io::StoredImage stored;
  bool is_stored = false;
};

/// Reads the input as read_input does; in its stored type when `stored_wanted` and the file is a
/// scalar image of a type the stored API takes (io::read_stored_image, into input_memory(c)),
/// else as float planes.
FilterInput read_filter_input(const std::string& path, Progress& progress, double& seconds_read,
                              bool stored_wanted, const CommonOptions& c);

/// Writes `image` as planned and reports clamping; then the preview if asked for. `progress`
/// (may be empty) follows the write from 0 to 1.
void write_result(const std::string& out, const io::Image& input, const io::Image& result,
                  const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                  double& seconds_write,
                  const std::function<bool(double)>& progress = std::function<bool(double)>());

/// --verbose: the timings of read, filter and write.
void print_timings(const CommonOptions& common, double seconds_read, const RunReport& report,
                   double seconds_write);

/// The engine's plan of `request` (ndconv::plan, the decision the filter call makes): with
/// --verbose, its backend and why (the cost model's reasoning), printed before any work. Returns
/// the plan's estimated seconds on the backend it chose (0: no estimate).
double print_plan_before_work(const FilterRequest& request, const CommonOptions& common);

/// What the engine run found (backend, KO, threads, slabs, notes), with --verbose only; printed
/// after the filter and before the write. The backend's reason only where no plan was printed
/// before the work (`backend_planned` false).
void print_run_report(const RunReport& report, const CommonOptions& common, bool backend_planned);

/// Filters one component plane; convolve and smooth pass their engine call.
using PlaneFilter =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;
/// The same filter on a plane in its stored type (filter_dense_stored, filter_separable_stored).
using StoredPlaneFilter =
    std::function<RunReport(const StoredVolumeView&, const VolumeView&, const Options&)>;

/// The end of every filtering subcommand: runs `filter` on every component plane of `input` (the
/// filtering share of `progress`; the result has the extents of `g` and the input's geometry
/// moved by g.start voxels, the `valid` region), prints the --verbose run report, writes the
/// result as planned (the writing share) and prints the --verbose timings. `backend_planned`: the
/// backend's reason was printed before the work (print_plan_before_work).
void filter_and_write(Progress& progress, const io::Image& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read, bool backend_planned);

/// filter_and_write on a FilterInput: a stored input goes through `stored_filter`; the backend was
/// planned before the work (print_plan_before_work).
void filter_and_write(Progress& progress, const FilterInput& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter,
                      const StoredPlaneFilter& stored_filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read);

}  // namespace ndconv::cli
