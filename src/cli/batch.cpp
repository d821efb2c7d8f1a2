#include "batch.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "io/regular_file.h"
#include "ndconv/plan.h"
#include "io/header_check.h"
#include "io/image.h"
#include "io/output_file.h"
#include "list_file.h"
#include "messages.h"

namespace ndconv::cli {

void add_batch_options(CLI::App& sub, BatchOptions& b) {
  sub.add_option("--list", b.list_file,
                 "batch: a text file of input paths, one a line (needs --output-dir)")
      ->group(kInputGroup);
  sub.add_option("-o,--output-dir", b.output_dir,
                 std::string("batch: every positional file is an input, each written to this "
                             "folder under its own file name, or to a name template such as "
                             "DIR/{stem}_smooth.nii.gz (another format, a suffix); ") +
                     kNameTemplateHelp)
      ->group(kOutputGroup);
}

namespace {

// The inputs a --list file names (parse_list_text: one a line of any length, blank lines and lines
// starting with # skipped, a CR before the LF dropped). Read by io's one rule for every path
// (io/regular_file.h): only a regular file, checked again on the descriptor opened without
// blocking, so that a FIFO or a device such as /dev/zero is refused instead of hanging; at most
// kMaxListBytes.
constexpr size_t kMaxListBytes = size_t{64} << 20;

std::vector<std::string> read_list_file(const std::string& path) {
  std::string text;
  try {
    text = io::read_regular_file(path, "--list", kMaxListBytes);
  } catch (const Error& e) {
    throw UsageError(std::string("--list: ") + e.what());
  }
  return parse_list_text(text, path);
}

}  // namespace

namespace {

// The extensions that {stem} drops, longest first where one ends another.
constexpr const char* kImageExtensions[] = {
    ".seq.nrrd", ".nii.gz", ".hdr.gz", ".img.gz", ".nii",  ".hdr", ".img",  ".mha", ".mhd",
    ".nrrd",     ".nhdr",   ".png",    ".jpg",    ".jpeg", ".tif", ".tiff", ".bmp", ".dcm"};

// A path without the slashes at its end ("bat/" is "bat"; "/" stays).
std::string without_trailing_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

// The input's file name (a folder's name for a DICOM series given as DIR/).
std::string input_name(const std::string& in) {
  return io::name_of(without_trailing_slash(in));
}

// The input's image extension ("" when none is known).
std::string image_extension(const std::string& name) {
  for (const char* e : kImageExtensions) {
    const std::string ext = e;
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return ext;
  }
  return {};
}

void check_folder(const std::string& dir, const std::string& shown) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError("--output-dir: " + shown + " is not a folder");
}

}  // namespace

bool is_name_template(const std::string& path) {
  return path.find('{') != std::string::npos || path.find('}') != std::string::npos;
}

void check_name_template(const std::string& path, const std::string& option) {
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && is_name_template(path.substr(0, slash)))
    throw UsageError(option + " " + path + ": placeholders go in the file name, not the folder");
  for (size_t open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
    const size_t close = path.find('}', open);
    const std::string field =
        close == std::string::npos ? path.substr(open) : path.substr(open, close - open + 1);
    if (field != "{name}" && field != "{stem}" && field != "{ext}")
      throw UsageError(option + " " + path + ": unknown placeholder '" + field + "'; use " +
                       kNameTemplateHelp);
  }
  std::string rest = path;
  for (const char* field : {"{name}", "{stem}", "{ext}"})
    for (size_t at = rest.find(field); at != std::string::npos; at = rest.find(field))
      rest.erase(at, std::string(field).size());
  if (rest.find_first_of("{}") != std::string::npos)
    throw UsageError(option + " " + path + ": a '{' or '}' outside a placeholder; use " +
                     kNameTemplateHelp);
}

std::string fill_name_template(const std::string& path, const std::string& in) {
  const std::string name = input_name(in);
  const std::string ext = image_extension(name);
  const std::string stem = name.substr(0, name.size() - ext.size());
  std::string out;
  for (size_t i = 0; i < path.size();) {
    bool filled = false;
    for (const auto& [field, value] :
         {std::pair<std::string, std::string>{"{name}", name}, {"{stem}", stem}, {"{ext}", ext}}) {
      if (path.compare(i, field.size(), field) == 0) {
        out += value;
        i += field.size();
        filled = true;
        break;
      }
    }
    if (!filled)
      out += path[i++];
  }
  return out;
}

std::vector<Job> make_jobs(const std::vector<std::string>& names, const BatchOptions& b) {
  if (b.output_dir.empty()) {
    if (!b.list_file.empty())
      throw UsageError("--list: needs --output-dir (-o DIR) for the outputs");
    if (names.size() < 2)
      throw UsageError(std::string(names.empty() ? "IN and OUT are" : "OUT is") +
                       " required: give IN OUT, or IN... -o DIR for a batch");
    if (names.size() > 2)
      throw UsageError("too many files: give IN OUT, or IN... -o DIR for a batch");
    return {{names[0], names[1]}};
  }
  std::vector<std::string> inputs = names;
  if (!b.list_file.empty()) {
    const std::vector<std::string> listed = read_list_file(b.list_file);
    inputs.insert(inputs.end(), listed.begin(), listed.end());
  }
  if (inputs.empty())
    throw UsageError("no input files for the batch");
  const bool name_template = is_name_template(b.output_dir);
  if (name_template) {
    check_name_template(b.output_dir, "--output-dir");
    check_folder(io::folder_of(b.output_dir), io::folder_of(b.output_dir));
  } else {
    check_folder(b.output_dir, b.output_dir);
  }
  const std::string dir = without_trailing_slash(b.output_dir);
  std::vector<Job> jobs;
  std::set<std::string> outputs;
  for (const auto& in : inputs) {
    const std::string out =
        name_template ? fill_name_template(b.output_dir, in) : io::join_path(dir, input_name(in));
    if (!outputs.insert(io::resolved_path(out)).second)
      throw UsageError(out + ": two inputs of the batch would both write it");
    jobs.push_back({in, out});
  }
  return jobs;
}

std::vector<int> batch_gpus(const std::string& device) {
  const DeviceWish wish = parse_device(device);
  if (wish.cuda_devices.empty() && !wish.all_cuda_devices)
    return {};
  try {
    return cuda_devices_of(wish);
  } catch (const InvalidArgument& e) {
    throw Error(std::string("--device ") + device + ": " + e.what());
  }
}

std::vector<Job> spread_over_gpus(std::vector<Job> jobs, const std::vector<int>& gpus) {
  if (gpus.size() > 1) {
    for (size_t i = 0; i < jobs.size(); ++i)
      jobs[i].gpu = gpus[i % gpus.size()];
  }
  return jobs;
}

// The stages' turns. Reading and writing take the jobs one at a time in order; filtering has one
// lane per GPU (job i in lane i % lanes), each taking its jobs in order.
class BatchPipeline {
 public:
  explicit BatchPipeline(size_t lanes) : lanes_(lanes) {
    for (size_t lane = 0; lane < lanes; ++lane)
      next_filter_.push_back(lane);
  }
  size_t lanes() const { return lanes_; }
  // Waits until every earlier job of its lane has passed `stage`.
  void enter(size_t job, Stage stage) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return next(job, stage) == job; });
  }
  // Job `job` is done with `stage` (or will never run it): the next job may enter.
  void leave(size_t job, Stage stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (next(job, stage) == job)
      next(job, stage) = job + step(stage);
    ready_.notify_all();
  }
  // At the end of a job, failed or not: the stages it did not run are passed in turn.
  void finish(size_t job) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (int s = 0; s < kStages; ++s) {
      const auto stage = static_cast<Stage>(s);
      ready_.wait(lock, [&] { return next(job, stage) >= job; });
      if (next(job, stage) == job)
        next(job, stage) = job + step(stage);
      ready_.notify_all();
    }
  }

 private:
  size_t& next(size_t job, Stage stage) {
    return stage == kFilter ? next_filter_[job % lanes_] : next_[stage];
  }
  size_t step(Stage stage) const { return stage == kFilter ? lanes_ : 1; }

  size_t lanes_;
  std::mutex mutex_;
  std::condition_variable ready_;
  size_t next_[kStages] = {0, 0, 0};
  std::vector<size_t> next_filter_;
};

namespace {

// The job this thread runs within a batch (none outside a batch).
thread_local BatchPipeline* current_pipeline = nullptr;
thread_local size_t current_job = 0;

// The error line of a failed job: errors name their file; those about an option name the input.
std::string job_error(const Job& job, const std::string& what) {
  const bool named =
      what.find(job.in) != std::string::npos || what.find(job.out) != std::string::npos;
  return "ndconv: error: " + (named ? "" : job.in + ": ") + what;
}

}  // namespace

std::string preview_in_batch_error(size_t inputs) {
  return "--preview: one PNG cannot show the " + std::to_string(inputs) +
         " inputs of a batch; preview one input at a time (IN OUT --preview PNG)";
}

StageTurn::StageTurn(Stage stage) : stage_(stage), pipeline_(current_pipeline) {
  if (pipeline_ != nullptr)
    pipeline_->enter(current_job, stage_);
}

StageTurn::~StageTurn() {
  if (pipeline_ != nullptr)
    pipeline_->leave(current_job, stage_);
}

int jobs_in_flight() {
  return current_pipeline != nullptr
             ? kBatchJobsInFlight + static_cast<int>(current_pipeline->lanes()) - 1
             : 1;
}

void run_jobs(const std::vector<Job>& jobs, const CommonOptions& c,
              const std::function<void(const Job&)>& one) {
  if (jobs.size() == 1)
    return one(jobs[0]);
  std::set<int> gpus;
  for (const Job& job : jobs)
    gpus.insert(job.gpu);
  // Jobs alternate over the GPUs in order, so job i's lane is i % (number of GPUs).
  BatchPipeline pipeline(gpus.size());
  const size_t in_flight = kBatchJobsInFlight + gpus.size() - 1;
  struct Outcome {
    std::string error;
    bool aborted = false;
  };
  std::vector<Outcome> outcomes(jobs.size());
  auto run_one = [&](size_t i) {
    current_pipeline = &pipeline;
    current_job = i;
    try {
      one(jobs[i]);
    } catch (const Aborted&) {
      outcomes[i].aborted = true;
    } catch (const std::exception& e) {
      outcomes[i].error = job_error(jobs[i], e.what());
    }
    pipeline.finish(i);
    current_pipeline = nullptr;
  };
  // At most `in_flight` jobs at once: job i starts when job i - in_flight ended.
  std::vector<std::thread> threads(jobs.size());
  int failed = 0;
  bool aborted = false;
  auto join = [&](size_t i) {
    threads[i].join();
    aborted = aborted || outcomes[i].aborted;
    if (!outcomes[i].error.empty()) {
      ++failed;
      io::print_stderr_line(outcomes[i].error);
    } else if (!outcomes[i].aborted && !c.verbose) {
      note(c, "wrote " + jobs[i].out);  // --verbose: the job noted it
    }
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i >= in_flight)
      join(i - in_flight);
    threads[i] = std::thread(run_one, i);
  }
  for (size_t i = jobs.size() > in_flight ? jobs.size() - in_flight : 0; i < jobs.size(); ++i)
    join(i);
  if (aborted)
    throw Aborted();
  if (failed > 0 && static_cast<size_t>(failed) == jobs.size())
    throw Error("all " + std::to_string(failed) +
                " inputs failed (named above); nothing was written");
  if (failed > 0) {
    throw Error(std::to_string(failed) + " of " + std::to_string(jobs.size()) +
                " inputs failed (named above); the others were written");
  }
  note(c, "batch: " + std::to_string(jobs.size()) + " inputs written" +
              (gpus.size() > 1 ? " on " + std::to_string(gpus.size()) + " GPUs" : ""));
}

}  // namespace ndconv::cli
