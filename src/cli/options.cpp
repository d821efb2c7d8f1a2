#include "options.h"

#include <CLI/CLI.hpp>
#include <vector>

#include "io/data_file_policy.h"
#include "ndconv/engine.h"
#include "ndconv/plan.h"

namespace ndconv::cli {

void add_threads_option(CLI::App& sub, CommonOptions& c) {
  sub.add_option("--threads", c.threads, "CPU threads (0: all hardware threads)")
      ->group(kRunGroup)
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
}

void add_common_options(CLI::App& sub, CommonOptions& c) {
  sub.add_option("--device", c.device,
                 "auto (the GPU where the cost model expects it to be faster than the CPU, with "
                 "CUDA's start-up counted; else the CPU; --verbose says why), cpu, cuda, cuda:N; "
                 "cuda:N,M,... or cuda:all spread a batch's inputs over those GPUs")
      ->group(kRunGroup)
      ->capture_default_str()
      ->check([](const std::string& s) -> std::string {
        try {
          parse_device(s);
          return {};
        } catch (const InvalidArgument& e) {
          return e.what();
        }
      });
  sub.add_option("--outputs-per-thread", c.outputs_per_thread,
                 "outputs per GPU thread along the last axis (KO): auto or 1..64")
      ->group(kExpertGroup)
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
  sub.add_flag("-f,--force", c.force, "overwrite an existing output (also when it is the input)")
      ->group(kOutputGroup);
  auto* quiet = sub.add_flag("-q,--quiet", c.quiet,
                             "print nothing but errors: no progress, notes or warnings")
                    ->group(kRunGroup);
  auto* verbose = sub.add_flag("-v,--verbose", c.verbose,
                               "print the plan (backend, KO and why, the filter's choices), "
                               "progress lines in logs, and timings")
                      ->group(kRunGroup);
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
         "read")
      ->group(kInputGroup);
}

void add_compression_option(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--compression", o.compression,
                 "deflate level of .nii.gz, .mha and .mhd outputs: 0 (none) to 9 (smallest, "
                 "slowest); compressed on all cores")
      ->group(kOutputGroup)
      ->capture_default_str()
      ->check(CLI::Range(0, io::kMaxCompressionLevel));
}

void add_output_options(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--type", o.type,
                 "output pixel type: float (default), same, uint8, int8, uint16, int16, uint32, "
                 "int32, double; integers are rounded and clamped")
      ->group(kOutputGroup)
      ->check(output_type_error);
  add_compression_option(sub, o);
  sub.add_option("--preview", o.preview,
                 "also write a PNG with the middle slices of input and output side by side; in a "
                 "batch, a name template such as DIR/{stem}.png (see --output-dir)")
      ->group(kOutputGroup);
}

Options engine_options(const CommonOptions& c) {
  Options o;
  const DeviceWish device = parse_device(c.device);
  o.backend = device.backend;
  o.cuda_device = device.cuda_device;
  // One input on a device list: its output in slabs over those GPUs (a batch's jobs get one GPU
  // each, batch.h).
  o.cuda_devices = device.all_cuda_devices ? cuda_devices_of(device) : device.cuda_devices;
  o.expert.outputs_per_thread =
      c.outputs_per_thread == "auto" ? 0 : std::stoi(c.outputs_per_thread);
  o.threads = c.threads;
  return o;
}

namespace {
// The boundaries the command line offers (Boundary::Constant only with 0: zero).
constexpr Boundary kCliBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                       Boundary::Reflect, Boundary::Periodic};
}  // namespace

void add_boundary_option(CLI::App& sub, std::string& boundary) {
  std::vector<std::string> names;
  for (Boundary b : kCliBoundaries)
    names.emplace_back(to_string(b));
  sub.add_option("--boundary", boundary, "what lies outside the image")
      ->capture_default_str()
      ->check(CLI::IsMember(names));
}

Boundary parse_boundary(const std::string& s) {
  for (Boundary b : kCliBoundaries) {
    if (s == to_string(b))
      return b;
  }
  return Boundary::Replicate;
}

}  // namespace ndconv::cli
