#include "cli_common.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>

#include "io/data_file_policy.h"
#include "io/memory_check.h"
#include "io/output_file.h"
#include "ndconv/engine.h"
#include "preview.h"
#include "progress.h"

namespace ndconv::cli {

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
  sub.add_option("--threads", c.threads, "CPU threads (0: all hardware threads)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
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

void add_output_options(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--type", o.type,
                 "output pixel type: float (default), same, uint8, int8, uint16, int16, uint32, "
                 "int32, double; integers are rounded and clamped")
      ->check(output_type_error);
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
  o.outputs_per_thread = c.outputs_per_thread == "auto" ? 0 : std::stoi(c.outputs_per_thread);
  o.threads = c.threads;
  return o;
}

void note(const CommonOptions& c, const std::string& text) {
  if (!c.quiet)
    std::fprintf(stderr, "ndconv: %s\n", text.c_str());
}

void warn(const std::string& text) {
  std::fprintf(stderr, "ndconv: warning: %s\n", text.c_str());
}

namespace {
void check_target(const std::string& in, const std::string& target, const CommonOptions& c) {
  if (!c.force && io::same_file(in, target)) {
    throw UsageError(target + ": is the input file; use --force to replace it");
  }
  if (!c.force && ::access(target.c_str(), F_OK) == 0)
    throw io::RequestError(target + ": exists; use --force to overwrite it");
  io::check_output_location(target);
}
}  // namespace

Plan plan_output(const std::string& in, const std::string& out, const CommonOptions& c,
                 const OutputOptions& o, int output_dims_hint) {
  check_target(in, out, c);
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
  io::check_output_format(out, dims, plan.input.components, plan.output_type);
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
  m.output_values = static_cast<double>(plan.input.components);
  for (int a = 0; a < g.dims; ++a)
    m.output_values *= static_cast<double>(out_extent[a]);
  m.output_bytes = io::component_bytes(plan.output_type);
  const std::string ext = out.size() >= 4 ? out.substr(out.size() - 4) : out;
  m.output_metaimage = ext == ".mha" || ext == ".mhd";
  m.filter_copies = filter_copies;
  if (c.verbose) {
    std::fprintf(stderr, "plan: memory: about %s at peak; %s usable\n",
                 io::human_bytes(io::peak_bytes(m)).c_str(),
                 io::human_bytes(io::usable_memory_bytes()).c_str());
  }
  io::check_plan_fits(in, m);
}

void write_result(const std::string& out, const io::Image& input, const io::Image& result,
                  const Plan& plan, const CommonOptions& c, const OutputOptions& o,
                  double& seconds_write) {
  const auto t0 = std::chrono::steady_clock::now();
  Progress::check_interrupted();
  const io::WriteReport r = io::write_image(out, result, plan.output_type, c.force);
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
  std::fprintf(stderr, "plan: backend %s (%s)\n", to_string(r.backend), r.backend_reason.c_str());
  if (!r.device_name.empty())
    std::fprintf(stderr, "plan: device %s\n", r.device_name.c_str());
  std::fprintf(stderr, "plan: outputs per thread %d%s%s\n", r.outputs_per_thread,
               r.outputs_per_thread_reason.empty() ? "" : ": ",
               r.outputs_per_thread_reason.c_str());
  std::fprintf(stderr, "plan: threads %d, slabs %d\n", r.threads, r.slabs);
  for (const auto& n : r.notes)
    std::fprintf(stderr, "plan: %s\n", n.c_str());
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
  std::fprintf(stderr,
               "timings: read %.3f s, filter %.3f s (upload %.3f s, compute %.3f s, download "
               "%.3f s), write %.3f s\n",
               seconds_read, r.seconds_total, r.seconds_upload, r.seconds_compute,
               r.seconds_download, seconds_write);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

// Runs `filter` on every component plane; the engine timings of all planes are summed in
// `report`.
io::Image filter_components(const io::Image& input, const OutputGeometry& g, Options options,
                            Progress& progress, const PlaneFilter& filter, RunReport& report) {
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
  const int parts = static_cast<int>(input.planes.size());
  out.planes.resize(parts);
  double compute = 0, upload = 0, download = 0, total = 0;
  for (int c = 0; c < parts; ++c) {
    out.planes[c].assign(static_cast<size_t>(geo.voxel_count()), 0.0f);
    options.progress = progress.callback(c, parts);
    Progress::check_interrupted();
    RunReport r;
    try {
      r = filter(input.plane_view(c), out.plane_view(c), options);
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
  progress.finish();
  report.seconds_compute = compute;
  report.seconds_upload = upload;
  report.seconds_download = download;
  report.seconds_total = total;
  return out;
}

}  // namespace

void filter_and_write(const std::string& label, const io::Image& input, const OutputGeometry& g,
                      const Options& options, const PlaneFilter& filter, const std::string& out,
                      const Plan& plan, const CommonOptions& common, const OutputOptions& output,
                      double seconds_read) {
  const Progress::CooperativeInterrupts cooperative;
  Progress progress(!common.quiet, label);
  RunReport report;
  const io::Image result = filter_components(input, g, options, progress, filter, report);
  print_run_report(report, common);
  double seconds_write = 0;
  write_result(out, input, result, plan, common, output, seconds_write);
  print_timings(common, seconds_read, report, seconds_write);
}

}  // namespace ndconv::cli
