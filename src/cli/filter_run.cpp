#include "filter_run.h"

#include <cstdio>
#include <string>

#include "batch.h"
#include "core/first_touch.h"
#include "messages.h"
#include "ndconv/engine.h"
#include "ndconv/plan.h"
#include "preview.h"
#include "progress.h"
#include "signals.h"

namespace ndconv::cli {

io::Image read_input(const std::string& path, Progress& progress, double& seconds_read) {
  const StageTurn turn(kRead);
  const auto t0 = std::chrono::steady_clock::now();
  const auto share = progress.stage(kRead);
  share(0.0);
  io::Image image = io::read_image(path);
  share(1.0);
  seconds_read = seconds_since(t0);
  return image;
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
  const auto share = progress.stage(kRead);
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

namespace {

// A KO the chosen backend was not built for is a wrong command line, not a failed run.
void throw_usage_error_for_ko(const InvalidArgument& e) {
  if (std::string(e.what()).find("outputs per thread") != std::string::npos)
    throw UsageError(std::string("--outputs-per-thread: ") + e.what() +
                     " (0 is --outputs-per-thread auto)");
}

}  // namespace

double print_plan_before_work(const FilterRequest& request, const CommonOptions& c) {
  FilterRequest before_work = request;
  // Asking CUDA for its devices would wait for the driver; the filter call probes as usual.
  before_work.probe_devices = false;
  ndconv::Plan p;
  try {
    p = ndconv::plan(before_work);
  } catch (const InvalidArgument& e) {
    throw_usage_error_for_ko(e);
    throw;
  }
  if (c.verbose) {
    print_line("plan: backend %s (%s)", to_string(p.backend), p.backend_reason.c_str());
    if (p.backend == Backend::Cpu)
      print_line("plan: estimated %.3g s on the CPU", p.estimated_cpu_seconds);
  }
  return p.backend == Backend::Cuda ? p.estimated_gpu_seconds : p.estimated_cpu_seconds;
}

void print_run_report(const RunReport& r, const CommonOptions& c, bool backend_planned) {
  if (!c.verbose)
    return;
  // The reason was printed with the plan before the work where there was one.
  if (backend_planned)
    print_line("run: backend %s", to_string(r.backend));
  else
    print_line("run: backend %s (%s)", to_string(r.backend), r.backend_reason.c_str());
  if (!r.device_name.empty())
    print_line("run: device %s", r.device_name.c_str());
  print_line("run: outputs per thread %d%s%s", r.outputs_per_thread,
             r.outputs_per_thread_reason.empty() ? "" : ": ", r.outputs_per_thread_reason.c_str());
  print_line("run: threads %d, slabs %d", r.threads, r.slabs);
  for (const auto& n : r.notes)
    print_line("run: %s", n.c_str());
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

namespace {

// The output image of `input`, its planes allocated and touched (first_touch.h). A batch calls it
// before the job's turn at filtering, so that a GPU's lane does not wait for the pages.
// `stored`, when given, holds the pixels of `input` (one plane) in their stored type.
io::Image output_image(const io::Image& input, const io::StoredImage* stored,
                       const OutputGeometry& g, int threads) {
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
  for (auto& plane : out.planes)
    ndconv::detail::assign_touched(plane, static_cast<size_t>(geo.voxel_count()), 0.0f, threads);
  return out;
}

// Runs `filter` on every component plane of `input` into `out` (output_image); the engine
// timings of all planes are summed in `report`.
void filter_components(const io::Image& input, const io::StoredImage* stored, io::Image& out,
                       Options options, Progress& progress, const PlaneFilter& filter,
                       const StoredPlaneFilter& stored_filter, RunReport& report) {
  const int parts = static_cast<int>(out.planes.size());
  double compute = 0, upload = 0, download = 0, total = 0;
  for (int c = 0; c < parts; ++c) {
    options.progress = progress.stage(kFilter, c, parts);
    check_stopped();
    RunReport r;
    try {
      r = stored != nullptr ? stored_filter(stored->view(), out.plane_view(c), options)
                            : filter(input.plane_view(c), out.plane_view(c), options);
    } catch (const InvalidArgument& e) {
      throw_usage_error_for_ko(e);
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
}

void filter_and_write_image(Progress& progress, const io::Image& input,
                            const io::StoredImage* stored, const OutputGeometry& g,
                            const Options& options, const PlaneFilter& filter,
                            const StoredPlaneFilter& stored_filter, const std::string& out,
                            const Plan& plan, const CommonOptions& common,
                            const OutputOptions& output, double seconds_read,
                            bool backend_planned) {
  RunReport report;
  io::Image result = output_image(input, stored, g, options.threads);
  {
    const StageTurn turn(kFilter);
    filter_components(input, stored, result, options, progress, filter, stored_filter, report);
  }
  // What the run found (threads, slabs, kernels), before the write and its "wrote" line.
  print_run_report(report, common, backend_planned);
  const StageTurn turn(kWrite);
  double seconds_write = 0;
  write_result(out, input, result, plan, common, output, seconds_write, progress.stage(kWrite));
  progress.finish();
  print_timings(common, seconds_read, report, seconds_write);
}

}  // namespace

void filter_and_write(Progress& progress, const FilterInput& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter,
                      const StoredPlaneFilter& stored_filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read) {
  filter_and_write_image(progress, input.image, input.is_stored ? &input.stored : nullptr, g,
                         options, filter, stored_filter, out, plan, common, output, seconds_read,
                         true);
}

void filter_and_write(Progress& progress, const io::Image& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read, bool backend_planned) {
  filter_and_write_image(progress, input, nullptr, g, options, filter, StoredPlaneFilter(), out,
                         plan, common, output, seconds_read, backend_planned);
}

}  // namespace ndconv::cli
