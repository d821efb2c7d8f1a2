#include "cli_common.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "cpu/parallel_for.h"
#include "engine/backend_cost.h"
#include "engine/first_touch.h"
#include "io/data_file_policy.h"
#include "io/memory_check.h"
#include "io/output_encode.h"
#include "io/output_file.h"
#include "io/parallel_deflate.h"
#include "io/parallel_for.h"
#include "ndconv/device.h"
#include "ndconv/engine.h"
#include "preview.h"
#include "progress.h"
#include "signals.h"

namespace ndconv::cli {

void add_threads_option(CLI::App& sub, CommonOptions& c) {
  sub.add_option("--threads", c.threads, "CPU threads (0: all hardware threads)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
}

void add_common_options(CLI::App& sub, CommonOptions& c) {
  sub.add_option("--device", c.device,
                 "auto (the GPU when usable, else the CPU), cpu, cuda, cuda:N")
      ->capture_default_str()
      ->check([](const std::string& s) -> std::string {
        if (s == "auto" || s == "cpu" || s == "cuda")
          return {};
        if (s.rfind("cuda:", 0) == 0 && s.size() > 5 &&
            s.find_first_not_of("0123456789", 5) == std::string::npos && s.size() < 9)
          return {};
        return "expected auto, cpu, cuda or cuda:N, got '" + s + "'";
      });
  sub.add_option("--outputs-per-thread", c.outputs_per_thread,
                 "outputs per GPU thread along the last axis (KO): auto or 1..64")
      ->capture_default_str()
      ->check([](const std::string& s) -> std::string {
        if (s == "auto")
          return {};
        if (!s.empty() && s.size() <= 2 && s.find_first_not_of("0123456789") == std::string::npos) {
          const int v = std::stoi(s);
          if (v >= 1 && v <= 64)
            return {};
        }
        return "expected auto or a number from 1 to 64, got '" + s + "'";
      });
  add_threads_option(sub, c);
  sub.add_flag("-f,--force", c.force, "overwrite an existing output (also when it is the input)");
  auto* quiet = sub.add_flag("-q,--quiet", c.quiet, "no progress and no notes (warnings still)");
  auto* verbose =
      sub.add_flag("-v,--verbose", c.verbose, "print the plan (backend, KO and why) and timings");
  quiet->excludes(verbose);
}

std::string output_type_error(const std::string& s) {
  io::ComponentType t;
  if (s == "same" || (s != "uint64" && s != "int64" && io::parse_component_type(s, t)))
    return {};
  return "unknown type '" + s +
         "'; use same, uint8, int8, uint16, int16, uint32, int32, float or double";
}

void add_input_options(CLI::App& sub) {
  sub.add_flag_callback(
      "--allow-external-data", [] { io::set_external_data_allowed(true); },
      "let an image header (MetaImage ElementDataFile or LIST, NIfTI .hdr/.img) name data "
      "files outside its own folder; by default only regular files in the header's folder are "
      "read");
}

void add_compression_option(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--compression", o.compression,
                 "deflate level of .nii.gz, .mha and .mhd outputs: 0 (none) to 9 (smallest, "
                 "slowest); compressed on all cores")
      ->capture_default_str()
      ->check(CLI::Range(0, io::kMaxCompressionLevel));
}

void add_output_options(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--type", o.type,
                 "output pixel type: float (default), same, uint8, int8, uint16, int16, uint32, "
                 "int32, double; integers are rounded and clamped")
      ->check(output_type_error);
  add_compression_option(sub, o);
  sub.add_option("--preview", o.preview,
                 "also write a PNG with the middle slices of input and output side by side");
}

Options engine_options(const CommonOptions& c) {
  Options o;
  if (c.device == "cpu") {
    o.backend = Backend::Cpu;
  } else if (c.device == "auto") {
    o.backend = Backend::Auto;
  } else {
    o.backend = Backend::Cuda;
    o.cuda_device = c.device.size() > 5 ? std::stoi(c.device.substr(5)) : 0;
  }
  o.expert.outputs_per_thread =
      c.outputs_per_thread == "auto" ? 0 : std::stoi(c.outputs_per_thread);
  o.threads = c.threads;
  return o;
}

void add_batch_options(CLI::App& sub, BatchOptions& b) {
  sub.add_option("-o,--output-dir", b.output_dir,
                 "batch: every positional file is an input, each written to this folder under "
                 "its own file name");
  sub.add_option("--list", b.list_file,
                 "batch: a text file of input paths, one a line (needs --output-dir)");
}

std::vector<Job> make_jobs(const std::vector<std::string>& names, const BatchOptions& b) {
  if (b.output_dir.empty()) {
    if (!b.list_file.empty())
      throw UsageError("--list: needs --output-dir (-o DIR) for the outputs");
    if (names.size() < 2)
      throw UsageError("OUT is required: give IN OUT, or IN... -o DIR for a batch");
    if (names.size() > 2)
      throw UsageError("too many files: give IN OUT, or IN... -o DIR for a batch");
    return {{names[0], names[1]}};
  }
  std::vector<std::string> inputs = names;
  if (!b.list_file.empty()) {
    std::FILE* f = std::fopen(b.list_file.c_str(), "r");
    if (f == nullptr)
      throw UsageError("--list: " + b.list_file + ": " + std::strerror(errno));
    char line[4096];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      std::string s = line;
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
      if (!s.empty() && s[0] != '#')
        inputs.push_back(s);
    }
    std::fclose(f);
  }
  if (inputs.empty())
    throw UsageError("no input files for the batch");
  struct stat st;
  if (::stat(b.output_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError("--output-dir: " + b.output_dir + " is not a folder");
  std::vector<Job> jobs;
  std::set<std::string> outputs;
  for (const auto& in : inputs) {
    const std::string out = io::join_path(b.output_dir, io::name_of(in));
    if (!outputs.insert(io::resolved_path(out)).second)
      throw UsageError(out + ": two inputs of the batch would both write it");
    jobs.push_back({in, out});
  }
  return jobs;
}

namespace {

// The stages of a job that a batch overlaps: job i+1 reads while job i filters and job i-1
// writes. Each stage runs for one job at a time, in the jobs' order, so that outputs are written
// in order and one filter runs at a time (one CUDA context, the engine's threads to itself).
enum Stage { kRead, kFilter, kWrite, kStages };

class BatchPipeline {
 public:
  // Waits until every earlier job has passed `stage`.
  void enter(size_t job, Stage stage) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return next_[stage] == job; });
  }
  // Job `job` is done with `stage` (or will never run it): the next job may enter.
  void leave(size_t job, Stage stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (next_[stage] == job)
      next_[stage] = job + 1;
    ready_.notify_all();
  }
  // At the end of a job, failed or not: the stages it did not run are passed in turn.
  void finish(size_t job) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (size_t& next : next_) {
      ready_.wait(lock, [&] { return next >= job; });
      if (next == job)
        next = job + 1;
      ready_.notify_all();
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  size_t next_[kStages] = {0, 0, 0};
};

// The job this thread runs within a batch (none outside a batch).
thread_local BatchPipeline* current_pipeline = nullptr;
thread_local size_t current_job = 0;

// Holds the stage for this thread's job while it exists; nothing outside a batch.
class StageTurn {
 public:
  explicit StageTurn(Stage stage) : stage_(stage), pipeline_(current_pipeline) {
    if (pipeline_ != nullptr)
      pipeline_->enter(current_job, stage_);
  }
  ~StageTurn() {
    if (pipeline_ != nullptr)
      pipeline_->leave(current_job, stage_);
  }
  StageTurn(const StageTurn&) = delete;
  StageTurn& operator=(const StageTurn&) = delete;

 private:
  Stage stage_;
  BatchPipeline* pipeline_;
};

// The error line of a failed job: errors name their file; those about an option name the input.
std::string job_error(const Job& job, const std::string& what) {
  const bool named =
      what.find(job.in) != std::string::npos || what.find(job.out) != std::string::npos;
  return "ndconv: error: " + (named ? "" : job.in + ": ") + what;
}

}  // namespace

int jobs_in_flight() {
  return current_pipeline != nullptr ? kBatchJobsInFlight : 1;
}

void run_jobs(const std::vector<Job>& jobs, const CommonOptions& c,
              const std::function<void(const Job&)>& one) {
  if (jobs.size() == 1)
    return one(jobs[0]);
  BatchPipeline pipeline;
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
  // At most kBatchJobsInFlight jobs at once: job i starts when job i - kBatchJobsInFlight ended.
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
    if (i >= static_cast<size_t>(kBatchJobsInFlight))
      join(i - kBatchJobsInFlight);
    threads[i] = std::thread(run_one, i);
  }
  for (size_t i = jobs.size() > static_cast<size_t>(kBatchJobsInFlight)
                      ? jobs.size() - kBatchJobsInFlight
                      : 0;
       i < jobs.size(); ++i)
    join(i);
  if (aborted)
    throw Aborted();
  if (failed > 0) {
    throw Error(std::to_string(failed) + " of " + std::to_string(jobs.size()) +
                " inputs failed (named above); the others were written");
  }
  note(c, "batch: " + std::to_string(jobs.size()) + " inputs written");
}

void print_line(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(static_cast<size_t>(std::max(length, 0)) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, again);
  va_end(again);
  text.pop_back();
  io::print_stderr_line(text);
}

void note(const CommonOptions& c, const std::string& text) {
  if (!c.quiet)
    io::print_stderr_line("ndconv: " + text);
}

void warn(const std::string& text) {
  io::print_stderr_line("ndconv: warning: " + text);
}

namespace {
// The output's place first, so that a folder is called a folder, not "exists"; paths are compared
// by what they resolve to (`..`, symlinks).
void check_target(const std::string& in, const std::string& target, const CommonOptions& c) {
  io::check_output_location(target);
  if (!c.force && io::same_file(in, target)) {
    throw UsageError(target + ": is the input file; use --force to replace it");
  }
  if (!c.force && ::access(target.c_str(), F_OK) == 0)
    throw io::RequestError(target + ": exists; use --force to overwrite it");
}
}  // namespace

Plan plan_output(const std::string& in, const std::string& out, const CommonOptions& c,
                 const OutputOptions& o, int output_dims_hint) {
  check_target(in, out, c);
  io::check_companions(out, io::output_names(out, o.compression), c.force);
  if (!o.preview.empty()) {
    if (io::same_file(o.preview, out))
      throw UsageError(o.preview + ": the preview and the output are the same file");
    check_target(in, o.preview, c);
    io::check_output_format(o.preview, 2, 1, io::ComponentType::UInt8);
  }
  Plan plan;
  plan.input = io::read_info(in);
  const int dims = output_dims_hint > 0 ? output_dims_hint : plan.input.geometry.dims;
  std::string why;
  if (o.type.empty()) {
    plan.output_type = io::default_output_type(out, plan.input.component_type, why);
  } else if (o.type == "same") {
    plan.output_type = plan.input.component_type;
  } else {
    io::parse_component_type(o.type, plan.output_type);
  }
  io::check_output_format(out, dims, plan.input.components, plan.output_type, &plan.input.geometry);
  if (!why.empty())
    note(c, out + ": " + why);
  return plan;
}

void check_memory_plan(const std::string& in, const std::string& out, const Plan& plan,
                       const Index& out_extent, double filter_copies, const CommonOptions& c) {
  io::MemoryPlan m;
  const io::Geometry& g = plan.input.geometry;
  m.input_values = static_cast<double>(g.voxel_count()) * plan.input.components;
  m.input_bytes = io::component_bytes(plan.input.component_type);
  m.input_nifti = plan.input.format == "NiftiImageIO";
  m.input_local_metaimage = plan.input.metaimage_pixels.offset >= 0;
  m.output_values = static_cast<double>(plan.input.components);
  for (int a = 0; a < g.dims; ++a)
    m.output_values *= static_cast<double>(out_extent[a]);
  m.output_bytes = io::component_bytes(plan.output_type);
  const std::string ext = out.size() >= 4 ? out.substr(out.size() - 4) : out;
  m.output_compressed =
      ext == ".mha" || ext == ".mhd" || (out.size() >= 3 && out.substr(out.size() - 3) == ".gz");
  m.filter_copies = filter_copies;
  m.compress_threads = io::worker_threads(c.threads);
  // A batch holds the volumes of the jobs it overlaps.
  m.input_values *= jobs_in_flight();
  m.output_values *= jobs_in_flight();
  if (c.verbose) {
    print_line("plan: memory: about %s at peak; %s usable",
               io::human_bytes(io::peak_bytes(m)).c_str(),
               io::human_bytes(io::usable_memory_bytes()).c_str());
  }
  io::check_plan_fits(in, m);
}

io::Image read_input(const std::string& path, Progress& progress, double& seconds_read) {
  const StageTurn turn(kRead);
  const auto t0 = std::chrono::steady_clock::now();
  const auto share = progress.span(0.0, kReadShare);
  share(0.0);
  io::Image image = io::read_image(path);
  share(1.0);
  seconds_read = seconds_since(t0);
  return image;
}

bool gpu_may_filter(const CommonOptions& c) {
#ifdef NDCONV_HAVE_CUDA
  return c.device != "cpu";
#else
  return c.device != "cpu" && c.device != "auto";
#endif
}

HostMemory input_memory(const CommonOptions& c) {
  if (c.device == "cpu")
    return HostMemory::Ordinary;
  return cuda_started(engine_options(c).cuda_device) ? HostMemory::Pinned : HostMemory::Ordinary;
}

bool gpu_may_win(const Plan& plan, const Index& out_extent, const PlannedWork& work,
                 const CommonOptions& c) {
  if (!gpu_may_filter(c))
    return false;
#ifdef NDCONV_HAVE_CUDA
  if (c.device != "auto")
    return true;
  const Options options = engine_options(c);
  detail::CostInput cost;
  cost.input_voxels = plan.input.geometry.voxel_count();
  cost.output_voxels = 1;
  for (int a = 0; a < plan.input.geometry.dims; ++a)
    cost.output_voxels *= out_extent[a];
  cost.input_bytes_per_voxel =
      work.stored ? static_cast<double>(io::component_bytes(plan.input.component_type)) : 4.0;
  cost.taps_per_output = work.taps_per_output;
  cost.passes = work.passes;
  cost.separable = work.separable;
  cost.cuda_started = true;  // as if the start-up were hidden behind the read
  cost.cpu_threads = cpu::resolve_thread_count(options.threads);
  if (work.known && !detail::estimate_costs(cost).prefer_gpu)
    return false;
  warm_up_cuda_async(options.cuda_device);
  return true;
#else
  (void)plan;
  (void)out_extent;
  (void)work;
  return true;
#endif
}

FilterInput read_filter_input(const std::string& path, Progress& progress, double& seconds_read,
                              bool stored_wanted, const CommonOptions& c) {
  FilterInput input;
  if (!stored_wanted) {
    input.image = read_input(path, progress, seconds_read);
    return input;
  }
  const StageTurn turn(kRead);
  const auto t0 = std::chrono::steady_clock::now();
  const auto share = progress.span(0.0, kReadShare);
  share(0.0);
  input.is_stored = io::read_stored_image(path, input.stored, input_memory(c));
  if (input.is_stored)
    input.image.info = input.stored.info;
  else
    input.image = io::read_image(path);
  share(1.0);
  seconds_read = seconds_since(t0);
  return input;
}

void write_result(const std::string& out, const io::Image& input, const io::Image& result,
                  const Plan& plan, const CommonOptions& c, const OutputOptions& o,
                  double& seconds_write, const std::function<bool(double)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  check_stopped();
  io::WriteSettings settings;
  settings.compression = o.compression;
  settings.threads = c.threads;
  if (progress)
    settings.progress = [progress](double f) { progress(f); };
  const io::WriteReport r = io::write_image(out, result, plan.output_type, c.force, settings);
  if (r.clamped > 0) {
    char range[160];
    std::snprintf(range, sizeof range, "[%.17g, %.17g]; the values ranged from %g to %g",
                  io::lowest_value(r.type), io::highest_value(r.type), r.min, r.max);
    warn(out + ": " + std::to_string(r.clamped) + " values outside " + io::to_string(r.type) +
         "'s range were clamped to " + range);
  }
  if (r.nan_zeroed > 0) {
    warn(out + ": " + std::to_string(r.nan_zeroed) + " NaN values were written as 0 (" +
         io::to_string(r.type) + " has no NaN)");
  }
  if (!o.preview.empty())
    write_preview(o.preview, input, result, c.force);
  seconds_write = seconds_since(t0);
  note(c, "wrote " + out + " (" + io::to_string(r.type) + ")" +
              (o.preview.empty() ? "" : " and " + o.preview));
}

void print_run_report(const RunReport& r, const CommonOptions& c) {
  if (!c.verbose) {
    note(c, std::string("filtered on the ") + (r.backend == Backend::Cuda ? "GPU" : "CPU") +
                (r.backend_reason.empty() ? "" : " (" + r.backend_reason + ")"));
    return;
  }
  print_line("plan: backend %s (%s)", to_string(r.backend), r.backend_reason.c_str());
  if (!r.device_name.empty())
    print_line("plan: device %s", r.device_name.c_str());
  print_line("plan: outputs per thread %d%s%s", r.outputs_per_thread,
             r.outputs_per_thread_reason.empty() ? "" : ": ", r.outputs_per_thread_reason.c_str());
  print_line("plan: threads %d, slabs %d", r.threads, r.slabs);
  for (const auto& n : r.notes)
    print_line("plan: %s", n.c_str());
}

Boundary parse_boundary(const std::string& s) {
  if (s == "zero")
    return Boundary::Zero;
  if (s == "mirror")
    return Boundary::Mirror;
  if (s == "periodic")
    return Boundary::Periodic;
  return Boundary::Replicate;
}

void print_timings(const CommonOptions& c, double seconds_read, const RunReport& r,
                   double seconds_write) {
  if (!c.verbose)
    return;
  print_line(
      "timings: read %.3f s, filter %.3f s (upload %.3f s, compute %.3f s, download "
      "%.3f s), write %.3f s, in all %.3f s",
      seconds_read, r.seconds_total, r.seconds_upload, r.seconds_compute, r.seconds_download,
      seconds_write, seconds_since_start());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {
const std::chrono::steady_clock::time_point g_program_start = std::chrono::steady_clock::now();
}  // namespace

double seconds_since_start() {
  return seconds_since(g_program_start);
}

namespace {

// Runs `filter` on every component plane; the engine timings of all planes are summed in
// `report`.
// `stored`, when given, holds the pixels of `input` (one plane) in their stored type.
io::Image filter_components(const io::Image& input, const io::StoredImage* stored,
                            const OutputGeometry& g, Options options, Progress& progress,
                            const PlaneFilter& filter, const StoredPlaneFilter& stored_filter,
                            RunReport& report) {
  io::Image out;
  out.info = input.info;
  io::Geometry& geo = out.info.geometry;
  geo.extent = g.extent;
  // Output voxel o lies over input voxel o + start: move the origin there, in physical space.
  for (int r = 0; r < geo.dims; ++r) {
    double shift = 0;
    for (int a = 0; a < geo.dims; ++a)
      shift += geo.direction[r * kMaxDims + a] * static_cast<double>(g.start[a]) * geo.spacing[a];
    geo.origin[r] += shift;
  }
  const int parts = stored != nullptr ? 1 : static_cast<int>(input.planes.size());
  out.planes.resize(parts);
  double compute = 0, upload = 0, download = 0, total = 0;
  for (int c = 0; c < parts; ++c) {
    ndconv::detail::assign_touched(out.planes[c], static_cast<size_t>(geo.voxel_count()), 0.0f,
                                   options.threads);
    const double share = (kFilterShare - kReadShare) / parts;
    options.progress = progress.span(kReadShare + share * c, kReadShare + share * (c + 1));
    check_stopped();
    RunReport r;
    try {
      r = stored != nullptr ? stored_filter(stored->view(), out.plane_view(c), options)
                            : filter(input.plane_view(c), out.plane_view(c), options);
    } catch (const InvalidArgument& e) {
      // A KO the chosen backend was not built for is a wrong command line, not a failed run.
      if (std::string(e.what()).find("outputs per thread") != std::string::npos)
        throw UsageError(std::string("--outputs-per-thread: ") + e.what() +
                         " (0 is --outputs-per-thread auto)");
      throw;
    }
    compute += r.seconds_compute;
    upload += r.seconds_upload;
    download += r.seconds_download;
    total += r.seconds_total;
    report = r;
  }
  report.seconds_compute = compute;
  report.seconds_upload = upload;
  report.seconds_download = download;
  report.seconds_total = total;
  return out;
}

void filter_and_write_image(Progress& progress, const io::Image& input,
                            const io::StoredImage* stored, const OutputGeometry& g,
                            const Options& options, const PlaneFilter& filter,
                            const StoredPlaneFilter& stored_filter, const std::string& out,
                            const Plan& plan, const CommonOptions& common,
                            const OutputOptions& output, double seconds_read) {
  RunReport report;
  io::Image result;
  {
    const StageTurn turn(kFilter);
    result = filter_components(input, stored, g, options, progress, filter, stored_filter, report);
  }
  const StageTurn turn(kWrite);
  double seconds_write = 0;
  write_result(out, input, result, plan, common, output, seconds_write,
               progress.span(kFilterShare, 1.0));
  progress.finish();
  print_run_report(report, common);
  print_timings(common, seconds_read, report, seconds_write);
}

}  // namespace

void filter_and_write(Progress& progress, const FilterInput& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter,
                      const StoredPlaneFilter& stored_filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read) {
  filter_and_write_image(progress, input.image, input.is_stored ? &input.stored : nullptr, g,
                         options, filter, stored_filter, out, plan, common, output, seconds_read);
}

void filter_and_write(Progress& progress, const io::Image& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read) {
  filter_and_write_image(progress, input, nullptr, g, options, filter, StoredPlaneFilter(), out,
                         plan, common, output, seconds_read);
}

}  // namespace ndconv::cli
