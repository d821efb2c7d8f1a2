// What every filtering subcommand shares: the common options (device, threads, output handling,
// verbosity), their translation into engine Options, the checks made before any work, and the
// errors that decide the exit code (UsageError: 2; anything else: 1).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "io/image.h"
#include "ndconv/errors.h"
#include "ndconv/plan.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace CLI {
class App;
}

namespace ndconv::cli {

class Progress;

/// The command line asks for something impossible (bad value, conflicting options); exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct CommonOptions {
  std::string device = "auto";
  std::string outputs_per_thread = "auto";
  int threads = 0;
  bool force = false;
  bool quiet = false;
  bool verbose = false;
};

/// Output options of the subcommands that write an image.
struct OutputOptions {
  std::string type;  ///< empty: float32 (or what the format holds); "same"; or a type name
  std::string preview;
  int compression = io::kDefaultCompressionLevel;  ///< deflate level of .nii.gz / .mha / .mhd
};

void add_common_options(CLI::App& sub, CommonOptions& common);
/// --threads alone (add_common_options includes it), for `convert`.
void add_threads_option(CLI::App& sub, CommonOptions& common);
/// --allow-external-data, on every subcommand that reads an image (io/data_file_policy.h).
void add_input_options(CLI::App& sub);

/// The help of an IN argument: what ndconv reads.
inline constexpr const char* kInputHelp =
    "input image: NIfTI, MetaImage, NRRD, a DICOM series (a folder, or @LIST of slices), PNG, "
    "JPEG, TIFF or BMP; 2D, 3D or 4D";
void add_output_options(CLI::App& sub, OutputOptions& output);
/// --compression alone (add_output_options includes it), for `convert`.
void add_compression_option(CLI::App& sub, OutputOptions& output);
/// The --type check: "" for a type the writers take ("same" included), else the message.
std::string output_type_error(const std::string& type);

/// Engine options from the common options (device, KO, threads).
Options engine_options(const CommonOptions& common);

/// Checks before reading anything: the output is not the input (unless --force), does not exist
/// (unless --force), and its folder is writable; the same for the preview. Then reads the
/// input's header and settles the output type. Returns the input's header.
struct Plan {
  io::ImageInfo input;
  io::ComponentType output_type = io::ComponentType::Float32;
};
Plan plan_output(const std::string& in, const std::string& out, const CommonOptions& common,
                 const OutputOptions& output, int output_dims_hint = 0);

/// Refuses, before the input's pixels are read, a command whose peak memory (reading the input,
/// filtering it with `filter_copies` float32 copies of the output besides the output itself,
/// writing `out`) exceeds what this process may use; --verbose prints the estimate.
void check_memory_plan(const std::string& in, const std::string& out, const Plan& plan,
                       const Index& out_extent, double filter_copies, const CommonOptions& common);

/// Batches: `IN... -o DIR/` (and `--list FILE`, one input path a line) filter many inputs in one
/// process, each written as DIR/<its file name>.
struct BatchOptions {
  std::string output_dir, list_file;
};
void add_batch_options(CLI::App& sub, BatchOptions& batch);

/// One input and its output.
struct Job {
  std::string in, out;
};

/// The jobs of a command: without -o, exactly `IN OUT` (`singles` names, e.g. {"IN", "OUT"});
/// with -o DIR, every name (and every line of --list) is an input. Throws UsageError on a
/// missing OUT, a DIR that is not a folder, or two inputs that would write the same output.
std::vector<Job> make_jobs(const std::vector<std::string>& names, const BatchOptions& batch);

/// Jobs of a batch that run at once: one reading, one filtering, one writing.
constexpr int kBatchJobsInFlight = 3;

/// Runs `one` for every job. Several jobs overlap, each on its own thread: job i+1 reads its input
/// while job i is filtered and job i-1 written (read_input / read_filter_input, the filtering and
/// the writing of filter_and_write each take one job at a time, in the jobs' order), at most
/// kBatchJobsInFlight jobs at once. A job that fails is reported by name on stderr
/// ("ndconv: error: ...") and the others go on; each job written is noted ("wrote OUT"). Throws
/// Error ("N of M inputs failed") at the end when any failed, so that the exit code says so;
/// Aborted when interrupted. A single job runs on the calling thread.
void run_jobs(const std::vector<Job>& jobs, const CommonOptions& common,
              const std::function<void(const Job&)>& one);

/// Jobs whose volumes may be in memory at once on this thread's behalf (kBatchJobsInFlight within
/// a batch, else 1): check_memory_plan multiplies its estimate by it.
int jobs_in_flight();

/// run_jobs over make_jobs(names, args.batch): each job runs `run` on a copy of `args` whose `in`
/// and `out` are the job's. In a batch the jobs show no progress bar or per-job notes (they
/// overlap); run_jobs notes each output written.
template <class Args, class Run>
void run_jobs_of(const std::vector<std::string>& names, const Args& args, const Run& run) {
  const std::vector<Job> jobs = make_jobs(names, args.batch);
  const bool batch = jobs.size() > 1;
  run_jobs(jobs, args.common, [&](const Job& job) {
    Args one = args;
    one.in = job.in;
    one.out = job.out;
    if (batch && !one.common.verbose)
      one.common.quiet = true;
    run(one);
  });
}

/// Messages on stderr: notes (suppressed by --quiet) and warnings (always).
void note(const CommonOptions& common, const std::string& text);
void warn(const std::string& text);
/// One line on stderr, printf-formatted (without its newline), through io::print_stderr_line: a
/// batch's other threads silence stderr while ITK reads or writes, and a plain fprintf would be
/// lost then.
void print_line(const char* format, ...) __attribute__((format(printf, 1, 2)));

/// Shares of the progress bar: reading up to kReadShare, filtering up to kFilterShare, writing
/// the rest (the shares of a compressed 4D output's typical timings).
constexpr double kReadShare = 0.1, kFilterShare = 0.6;

/// Reads the input, the first share of `progress`.
io::Image read_input(const std::string& path, Progress& progress, double& seconds_read);

/// Whether a GPU may filter: --device cuda or cuda:N, or auto in a build with CUDA.
bool gpu_may_filter(const CommonOptions& common);

/// The input of a filtering run: float32 planes, or, for a run that may go to the GPU, the values
/// as the file stores them in pinned memory (uploaded as they are and converted on the device).
struct FilterInput {
  io::Image image;  ///< the header always; no planes when `stored` holds the pixels
  io::StoredImage stored;
  bool is_stored = false;
};

/// The host memory a filtering run reads its input into: pinned once CUDA has started (a batch's
/// later inputs), else ordinary, since a pinned allocation waits for CUDA's start-up (about
/// 0.3 s), which the read would otherwise hide; the GPU then uploads it through pinned staging.
HostMemory input_memory(const CommonOptions& c);

/// The engine's request for a filtering run of the input `plan` describes, with the command's
/// device, threads and expert options; the command fills in the filter.
FilterRequest filter_request(const Plan& plan, const CommonOptions& common);

/// Whether the GPU may filter this run, and for --device auto the decision: CUDA is started in the
/// background (warm_up_cuda_async) only where the engine's plan (ndconv::plan, its start-up costed
/// as hidden behind the read) gives the filter to the GPU; otherwise the run goes the CPU's way
/// from the read on (as with --device cpu) and never pays CUDA's start-up or its teardown at exit.
/// `model_knows`: false where the plan's cost model cannot tell (CUDA then starts, as for other
/// commands). Called by smooth and convolve once the header and the filter are known (main starts
/// CUDA earlier for --device cuda and for the other filtering commands).
bool gpu_may_win(const FilterRequest& request, bool model_knows, const CommonOptions& common);

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

/// "zero", "replicate", "mirror", "periodic" (already checked by CLI11).
Boundary parse_boundary(const std::string& name);

/// --verbose: the timings of read, filter and write.
void print_timings(const CommonOptions& common, double seconds_read, const RunReport& report,
                   double seconds_write);

/// One line describing the engine run, for --verbose.
void print_run_report(const RunReport& report, const CommonOptions& common);

/// Filters one component plane; convolve and smooth pass their engine call.
using PlaneFilter =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;
/// The same filter on a plane in its stored type (filter_dense_stored, filter_separable_stored).
using StoredPlaneFilter =
    std::function<RunReport(const StoredVolumeView&, const VolumeView&, const Options&)>;

/// The end of every filtering subcommand: runs `filter` on every component plane of `input` (the
/// filtering share of `progress`; the result has the extents of `g` and the input's geometry
/// moved by g.start voxels, the `valid` region), prints the --verbose run report, writes the
/// result as planned (the writing share) and prints the --verbose timings.
void filter_and_write(Progress& progress, const io::Image& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read);

/// filter_and_write on a FilterInput: a stored input goes through `stored_filter`.
void filter_and_write(Progress& progress, const FilterInput& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter,
                      const StoredPlaneFilter& stored_filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read);

/// Seconds since `t0`.
double seconds_since(std::chrono::steady_clock::time_point t0);

/// Seconds since the program's static initialisation (just before main; the dynamic loading
/// before it is not counted): the "in all" of the --verbose timings, so that what a command
/// spends outside its stages shows.
double seconds_since_start();

}  // namespace ndconv::cli
