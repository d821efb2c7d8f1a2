// Batches: `IN... -o DIR/` and `--list FILE` run one subcommand over many inputs in one process,
// their reading, filtering and writing overlapped (one job per stage at a time, in order; with
// several GPUs, one job filtering per GPU).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "messages.h"
#include "options.h"

namespace CLI {
class App;
}

namespace ndconv::cli {

/// Batches: `IN... -o DIR/` (and `--list FILE`, one input path a line) filter many inputs in one
/// process, each written as DIR/<its file name>, or under a name template such as
/// `-o DIR/{stem}_smooth.nii.gz` (kNameTemplateHelp).
struct BatchOptions {
  std::string output_dir, list_file;
};
void add_batch_options(CLI::App& sub, BatchOptions& batch);

/// One input and its output, and the GPU that filters it in a batch spread over several (-1: the
/// command's --device as it is).
struct Job {
  std::string in, out;
  int gpu = -1;
};

/// The placeholders of an output name template.
inline constexpr const char* kNameTemplateHelp =
    "{name}: the input's file name; {stem}: its name without the image extension (.nii.gz, "
    ".nii, .mha, .mhd, .nrrd, .seq.nrrd, .png, ...); {ext}: that extension";

/// Whether `path` is a name template (holds a placeholder).
bool is_name_template(const std::string& path);
/// Throws UsageError when the template `path` (of `option`) holds an unknown placeholder, or one
/// in its folder part.
void check_name_template(const std::string& path, const std::string& option);
/// The template `path` filled in for the input `in`.
std::string fill_name_template(const std::string& path, const std::string& in);

/// The jobs of a command: without -o, exactly `IN OUT`; with -o DIR (or a name template), every
/// name (and every line of --list) is an input. Throws UsageError on a missing OUT, a DIR that is
/// not a folder, a bad template, or two inputs that would write the same output.
std::vector<Job> make_jobs(const std::vector<std::string>& names, const BatchOptions& batch);

/// `jobs` with job i on gpus[i % G] (unchanged for fewer than two GPUs).
std::vector<Job> spread_over_gpus(std::vector<Job> jobs, const std::vector<int>& gpus);

/// The refusal of one --preview for a batch of `inputs` inputs (before any work).
std::string preview_in_batch_error(size_t inputs);

/// Jobs of a batch that run at once on one GPU or the CPU: one reading, one filtering, one writing;
/// each further GPU adds one filtering.
constexpr int kBatchJobsInFlight = 3;

/// The GPUs a batch spreads its jobs over: those of a device list ("cuda:0,1", "cuda:all"; throws
/// Error when one is not there), else none (the jobs run as --device says).
std::vector<int> batch_gpus(const std::string& device);

/// Runs `one` for every job. Several jobs overlap, each on its own thread: job i+1 reads its input
/// while job i is filtered and job i-1 written (read_input / read_filter_input, the filtering and
/// the writing of filter_and_write each take one job at a time, in the jobs' order; with jobs on
/// G GPUs, G jobs filter at once, each GPU's in order), at most kBatchJobsInFlight + G - 1 jobs at
/// once. A job that fails is reported by name on stderr ("ndconv: error: ...") and the others go
/// on; each job written is noted ("wrote OUT"). Throws Error ("N of M inputs failed") at the end
/// when any failed, so that the exit code says so; Aborted when interrupted. A single job runs on
/// the calling thread.
void run_jobs(const std::vector<Job>& jobs, const CommonOptions& common,
              const std::function<void(const Job&)>& one);

/// Jobs whose volumes may be in memory at once on this thread's behalf (the jobs in flight within
/// a batch, else 1): check_memory_plan multiplies its estimate by it.
int jobs_in_flight();

/// run_jobs over make_jobs(names, args.batch): each job runs `run` on a copy of `args` whose `in`
/// and `out` are the job's (and its --preview, when that is a name template, filled in for it; one
/// plain --preview for several inputs is refused). In a batch the jobs show no progress bar or
/// per-job notes (they overlap); run_jobs notes each output written.
template <class Args, class Run>
void run_jobs_of(const std::vector<std::string>& names, const Args& args, const Run& run) {
  set_quiet(args.common.quiet);
  const std::vector<Job> jobs = make_jobs(names, args.batch);
  const bool batch = jobs.size() > 1;
  const std::string& preview = args.output.preview;
  if (is_name_template(preview))
    check_name_template(preview, "--preview");
  else if (batch && !preview.empty())
    throw UsageError(preview_in_batch_error(jobs.size()));
  run_jobs(spread_over_gpus(jobs, batch ? batch_gpus(args.common.device) : std::vector<int>{}),
           args.common, [&](const Job& job) {
             Args one = args;
             one.in = job.in;
             one.out = job.out;
             if (job.gpu >= 0)
               one.common.device = "cuda:" + std::to_string(job.gpu);
             if (is_name_template(preview))
               one.output.preview = fill_name_template(preview, job.in);
             if (batch && !one.common.verbose)
               one.common.quiet = true;
             run(one);
           });
}

/// The stages of a job that a batch overlaps: job i+1 reads while job i filters and job i-1
/// writes. Each stage runs for one job at a time, in the jobs' order, so that outputs are written
/// in order and one filter runs at a time (one CUDA context, the engine's threads to itself).
enum Stage { kRead, kFilter, kWrite, kStages };

class BatchPipeline;

/// Holds `stage` for this thread's job while it exists (waiting for the earlier jobs to pass it);
/// nothing outside a batch.
class StageTurn {
 public:
  explicit StageTurn(Stage stage);
  ~StageTurn();
  StageTurn(const StageTurn&) = delete;
  StageTurn& operator=(const StageTurn&) = delete;

 private:
  Stage stage_;
  BatchPipeline* pipeline_;
};

}  // namespace ndconv::cli
