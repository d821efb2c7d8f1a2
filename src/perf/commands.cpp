#include "perf/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>

#include "ndconv/plan.h"
#include "perf/gpu.h"

namespace ndconv::perf {

namespace {

Option text_option(const char* name, const char* value_name, const char* help, std::string& to) {
  return {name, value_name, help, [&to](const std::string& v) { to = v; }};
}

template <typename Int>
Option int_option(const char* name, const char* help, Int& to, int64_t min_value) {
  const auto max_value = static_cast<int64_t>(
      std::min<uint64_t>(std::numeric_limits<Int>::max(), std::numeric_limits<int64_t>::max()));
  return {name, "N", help, [&to, name, min_value, max_value](const std::string& v) {
            to = static_cast<Int>(parse_int(v, name, min_value, max_value));
          }};
}

Option flag(const char* name, const char* help, bool& to) {
  return {name, "", help, [&to](const std::string&) { to = true; }};
}

}  // namespace

CommandLine sweep_command_line(SweepArgs& a) {
  return {
      "sweep",
      "Register-blocking study: every kernel instantiation and the automatic plan, validated and "
      "timed",
      "Times every kernel instantiation (blocked and tiled, each KO) "
      "and the automatic plan over dimensions, volume and filter extents, each point validated "
      "against the CPU backend first, against the FMA peak and copy bandwidth measured at the "
      "start of the run (--device cpu: the CPU backend's blocking factor). Writes one CSV row and "
      "one JSON object per point, and a JSON summary per problem.",
      {text_option("--device", "gpu|cpu",
                   "gpu: the GPU kernels' KO; cpu: the CPU backend's blocking factor (gpu)",
                   a.device),
       int_option("--cuda-device", "CUDA device index (0)", a.cuda_device, 0),
       text_option("--dims", "LIST", "dimensions to keep, e.g. 2,3", a.dims),
       text_option("--volumes", "LIST",
                   "volume extents, e.g. 4096x4096,256x256x256 (default: the study's)", a.volumes),
       text_option("--filters", "LIST",
                   "cube filter extents, e.g. 3:15:2 or 3,5,7 (default: per dimension)", a.filters),
       text_option("--ko", "LIST", "KO values, e.g. 1,2,4,8 (default: every compiled one)", a.ko),
       flag("--block-shapes",
            "also the tiled kernel's other compiled block shapes (GPU; TX 16 with 2x64 threads, "
            "128x1 threads)",
            a.block_shapes),
       flag("--quick", "a small grid that runs in under a minute", a.quick),
       int_option("--warmup", "untimed runs per point (default: the preset's)", a.warmup, 0),
       int_option("--reps", "timed runs per point (default: the preset's)", a.repetitions, 1),
       flag("--no-flush", "do not flush L2 between repetitions", a.no_flush),
       int_option("--threads", "CPU threads (0: all)", a.threads, 0),
       {"--check-budget", "F", "CPU FMAs per validation window (default 2e9)",
        [&a](const std::string& v) { a.check_budget = parse_number(v, "--check-budget"); }},
       int_option("--seed", "fixed random seed (0: fresh)", a.seed, 0),
       text_option("--csv", "PATH", "one row per point (ndconv-sweep.csv; \"\": none)", a.csv),
       text_option("--json", "PATH", "points and summary (ndconv-sweep.json; \"\": none)", a.json),
       flag("--force", "overwrite existing outputs", a.force)}};
}

CommandLine bench_command_line(BenchArgs& a, bool itk_peer) {
  CommandLine c{
      "bench",
      "Fixed workloads against the measured FMA peak and bandwidth; the CPU row against ITK",
      "Each workload is validated against the CPU backend, then timed on data already on the "
      "device and as a whole call (transfers included), against the FMA peak and copy bandwidth "
      "measured at the start of the run; the CPU rows against the CPU's FMA peak measured beside "
      "them, cpu3d_7 also against itk::ConvolutionImageFilter (ndconv only: ndconv-perf has no "
      "ITK). api_* rows: the whole call on pageable and on pinned host "
      "buffers against max(upload, kernel, download) at the host bandwidth measured in the run. "
      "e2e_* and batch rows (ndconv only): whole ndconv commands on generated echo-like files, "
      "timed as child processes against ndconv convert of the same files (the I/O-only floor).",
      {text_option("--device", "gpu|cpu",
                   "gpu: all workloads; cpu: those that need no GPU in this process (cpu3d_7, "
                   "cpu_bank_3d, cpu_bank_3d_u8, e2e_*, batch) (gpu)",
                   a.device),
       int_option("--cuda-device", "CUDA device index (0)", a.cuda_device, 0),
       text_option("--workload", "NAMES",
                   "comma-separated: dense3d_11, dense3d_5, dense4d_7, dense2d_17, gauss3d_s2, "
                   "gauss3d_s2_272, "
                   "median3d_r1, median3d_r3, median2d_r3, "
                   "cpu3d_7, cpu_bank_3d, cpu_bank_3d_u8, api_<a GPU workload>, e2e_smooth_mha, "
                   "e2e_smooth_nii, "
                   "e2e_smooth_niigz, e2e_convolve_mha, e2e_convolve_nii, e2e_convolve_niigz, "
                   "batch (default: all); a name ending in * takes every row it starts "
                   "(e2e_*; quote it from the shell); also denseND_K, a K^N filter on the volume "
                   "of that dense row, without a target",
                   a.workload),
       text_option("--json", "PATH", "also write the JSON here (-: JSON on stdout instead)",
                   a.json),
       flag("--force", "overwrite an existing JSON file", a.force),
       int_option("--threads", "CPU threads for the CPU row (0: all)", a.threads, 0),
       int_option("--reps", "timed device repetitions (20)", a.repetitions, 1),
       int_option("--call-reps", "timed whole-call repetitions (5)", a.call_repetitions, 1),
       flag("--quick", "fewer repetitions, no per-KO or boundary timings", a.quick),
       flag("--boundaries", "with --quick: time the other boundaries all the same", a.boundaries),
       int_option("--seed", "fixed random seed (0: fresh)", a.seed, 0),
       text_option(
           "--e2e-device", "LIST",
           "e2e_* and batch rows: --device of the timed commands, e.g. auto,cpu,cuda (auto)",
           a.e2e_devices),
       int_option("--e2e-reps", "e2e_* and batch rows: timed runs of each command (3)",
                  a.e2e_repetitions, 1),
       text_option("--e2e-volume", "SHAPE",
                   "e2e_* rows: the echo-like sequence's extents (160x160x160x20)", a.e2e_volume),
       text_option("--batch-volume", "SHAPE", "batch row: each volume's extents (160x160x160)",
                   a.batch_volume),
       int_option("--batch-count", "batch row: number of volumes (40)", a.batch_count, 1),
       text_option("--work-dir", "DIR",
                   "e2e_* and batch rows: make the temporary folder for their files in DIR "
                   "(default $TMPDIR or /tmp; removed at the end)",
                   a.work_dir)}};
  if (itk_peer) {
    c.options.push_back(
        int_option("--itk-reps", "timed ITK repetitions (1; ITK is slow)", a.itk_repetitions, 1));
  }
  return c;
}

void parse_options(const CommandLine& command, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    const auto eq = name.find('=');
    const bool inline_value = name.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const auto o = std::find_if(command.options.begin(), command.options.end(),
                                [&](const Option& opt) { return opt.name == name; });
    if (o == command.options.end())
      throw InvalidArgument("unknown option " + name + " (see --help)");
    if (o->value_name.empty() && inline_value)
      throw InvalidArgument(name + " takes no value");
    if (!o->value_name.empty() && !inline_value) {
      if (i + 1 >= args.size())
        throw InvalidArgument(name + " needs a value");
      value = args[++i];
    }
    o->set(value);
  }
}

std::string wrapped(const std::string& text, std::size_t indent) {
  std::string out;
  std::size_t column = indent;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (column > indent && column + 1 + w.size() > 100) {
      out += '\n' + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += w;
    column += w.size();
  }
  return out;
}

void print_help(std::ostream& out, const std::string& program, const CommandLine& command) {
  out << "usage: " << program << ' ' << command.name << " [options]\n\n"
      << wrapped(command.summary + ".", 0) << "\n\n"
      << wrapped(command.description, 0) << "\n\noptions:\n";
  constexpr std::size_t kHelpColumn = 26;
  for (const Option& o : command.options) {
    std::string head = "  " + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    if (head.size() + 1 > kHelpColumn) {
      out << head << '\n';
      head.clear();
    }
    out << head << std::string(kHelpColumn - head.size(), ' ') << wrapped(o.help, kHelpColumn)
        << '\n';
  }
}

std::string typed_command_line(const std::string& fallback) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::replace(all.begin(), all.end(), '\0', ' ');
  while (!all.empty() && all.back() == ' ')
    all.pop_back();
  return all.empty() ? fallback : all;
}

SweepConfig sweep_config(const SweepArgs& a) {
  if (a.device != "gpu" && a.device != "cpu")
    throw InvalidArgument("--device: '" + a.device + "' is neither gpu nor cpu");
  SweepConfig c = a.quick ? quick_config() : study_config();
  c.cpu = a.device == "cpu";
  if (c.cpu && a.volumes.empty()) {
    // The GPU study's volumes would take hours on a CPU: smaller defaults, same filter sizes.
    c.volumes = parse_shape_list(
        a.quick ? "256x256,48x48x48,24x24x24x6" : "1024x1024,96x96x96,40x40x40x8", "volumes");
  }
  if (!a.volumes.empty())
    c.volumes = parse_shape_list(a.volumes, "--volumes");
  if (!a.dims.empty()) {
    const std::vector<int64_t> dims = parse_int_list(a.dims, "--dims", 2, 4);
    std::vector<Shape> kept;
    for (const Shape& s : c.volumes)
      if (std::find(dims.begin(), dims.end(), s.dims) != dims.end())
        kept.push_back(s);
    c.volumes = kept;
  }
  if (c.volumes.empty())
    throw InvalidArgument("--dims/--volumes: no volume left to sweep");
  for (const Shape& s : c.volumes) {
    if (s.dims < 2)
      throw InvalidArgument("--volumes: ndconv filters 2D, 3D and 4D volumes");
  }
  if (!a.filters.empty()) {
    const std::vector<int64_t> ks = parse_int_list(a.filters, "--filters", 1, 31);
    for (int d = 2; d <= 4; ++d)
      c.filters[d] = ks;
    for (int64_t k : ks) {
      for (const Shape& s : c.volumes)
        if (s.dims == 4 && k > 15)
          throw InvalidArgument("--filters: " + std::to_string(k) +
                                " exceeds the 4D dense limit of 15");
    }
  }
  if (!a.ko.empty())
    c.kos = parse_int_list(a.ko, "--ko", 1, 1024);
  if (a.block_shapes && c.cpu)
    throw InvalidArgument("--block-shapes: the CPU backend has no block shape (GPU only)");
  c.block_shapes = a.block_shapes;
  if (a.warmup >= 0)
    c.warmup = a.warmup;
  if (a.repetitions >= 0) {
    if (a.repetitions < 1)
      throw InvalidArgument("--reps must be at least 1");
    c.repetitions = a.repetitions;
  }
  if (a.no_flush)
    c.flush_l2 = false;
  if (a.check_budget > 0)
    c.check_budget_fmas = a.check_budget;
  c.cuda_device = a.cuda_device;
  c.threads = a.threads;
  c.seed = a.seed;
  return c;
}

BenchConfig bench_config(const BenchArgs& a) {
  if (a.device != "gpu" && a.device != "cpu")
    throw InvalidArgument("--device: '" + a.device + "' is neither gpu nor cpu");
  if (a.repetitions < 1 || a.call_repetitions < 1)
    throw InvalidArgument("--reps and --call-reps must be at least 1");
  BenchConfig c;
  c.cpu_only = a.device == "cpu";
  c.cuda_device = a.cuda_device;
  c.threads = a.threads;
  c.repetitions = a.repetitions;
  c.call_repetitions = a.call_repetitions;
  c.cpu_peer_repetitions = a.itk_repetitions;
  c.seed = a.seed;
  if (a.quick) {
    c.repetitions = std::min(c.repetitions, 5);
    c.call_repetitions = std::min(c.call_repetitions, 2);
    c.all_kos = false;
    c.all_boundaries = a.boundaries;
  }
  std::stringstream names(a.workload);
  for (std::string n; std::getline(names, n, ',');)
    if (!n.empty())
      c.workloads.push_back(n);
  c.e2e.ndconv = a.ndconv_binary;
  c.e2e.sequence = parse_shape(a.e2e_volume, "--e2e-volume");
  if (c.e2e.sequence.dims < 3)
    throw InvalidArgument("--e2e-volume: a 3D volume or a 4D sequence is needed");
  c.e2e.batch_volume = parse_shape(a.batch_volume, "--batch-volume");
  if (c.e2e.batch_volume.dims != 3)
    throw InvalidArgument("--batch-volume: a 3D volume is needed");
  c.e2e.batch_count = a.batch_count;
  c.e2e.repetitions = a.quick ? std::min(a.e2e_repetitions, 1) : a.e2e_repetitions;
  c.e2e.work_parent = a.work_dir;
  c.e2e.seed = a.seed ? a.seed : 1;
  c.e2e.devices.clear();
  std::stringstream devices(a.e2e_devices);
  for (std::string d; std::getline(devices, d, ',');) {
    try {
      parse_device(d);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--e2e-device: ") + e.what());
    }
    c.e2e.devices.push_back(d);
  }
  if (c.e2e.devices.empty())
    throw InvalidArgument("--e2e-device: no device given");
  return c;
}

namespace {

template <typename F>
int guarded(const char* name, std::ostream& err, F f) {
  try {
    return f();
  } catch (const ValidationFailed& e) {
    err << "ndconv " << name << ": " << e.what() << "\n";
    return kExitValidationFailed;
  } catch (const GpuUnavailable& e) {
    err << "ndconv " << name << ": " << e.what()
        << "; no measurements made (--device cpu runs the CPU backend instead)\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    err << "ndconv " << name << ": error: " << e.what() << "\n";
    return kExitError;
  }
}

void refuse_existing(const std::string& path, bool force) {
  if (path.empty() || path == "-" || force)
    return;
  std::ifstream f(path);
  if (f.good())
    throw InvalidArgument("'" + path + "' exists; not overwriting it (use --force)");
}

}  // namespace

void sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                   std::ostream* progress) {
  SweepConfig config = sweep_config(args);
  config.command_line = command_line;
  // Check the outputs before the measurements, and write them only at the end.
  refuse_existing(args.csv, args.force);
  refuse_existing(args.json, args.force);
  // A long run keeps <csv>.partial up to date after each problem, so that an interrupted study
  // leaves what it measured; the file goes away when the run completes.
  const std::string partial = args.csv.empty() ? "" : args.csv + ".partial";
  if (!partial.empty()) {
    config.on_problem_done = [&](const std::vector<Json>& rows) {
      std::ostringstream csv;
      write_csv(csv, rows);
      write_file(partial, csv.str(), true);
    };
  }
  const SweepResult r = run_sweep(config, progress);
  if (!partial.empty())
    std::remove(partial.c_str());
  print_sweep_table(out, r);
  if (!args.csv.empty()) {
    std::ostringstream csv;
    write_csv(csv, r.rows);
    write_file(args.csv, csv.str(), true);
  }
  if (!args.json.empty())
    write_file(args.json, json_text(r.summary), true);
  const Json& o = r.summary["overall"];
  out << "points: " << text(o, "points") << ", validation failures: " << r.failures
      << ", not implementable: " << text(o, "not_implementable")
      << ", automatic plan within 5% of the best point: " << text(o, "auto_within_5pct_of_best")
      << " of " << text(o, "problems") << " problems\n";
  if (!args.csv.empty() || !args.json.empty()) {
    out << "wrote " << args.csv << (args.csv.empty() || args.json.empty() ? "" : " and ")
        << args.json << "\n";
  }
  if (r.failures) {
    throw ValidationFailed(std::to_string(r.failures) +
                           " point(s) failed validation against the CPU backend (see "
                           "rel_l2_error; results written)");
  }
}

void bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                   std::ostream& out, std::ostream* progress) {
  BenchConfig config = bench_config(args);
  config.command_line = command_line;
  config.cpu_peer = std::move(peer);
  refuse_existing(args.json, args.force);
  const BenchResult r = run_bench(config, progress);
  if (args.json == "-") {
    out << json_text(r.summary);
  } else {
    print_bench_table(out, r);
    if (!args.json.empty()) {
      write_file(args.json, json_text(r.summary), true);
      out << "wrote " << args.json << "\n";
    }
  }
  if (r.failures) {
    throw ValidationFailed(std::to_string(r.failures) +
                           " validation failure(s) (see rel_l2_error; results written)");
  }
}

int run_sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                      std::ostream& err) {
  return guarded("sweep", err, [&] {
    sweep_command(args, command_line, out, &err);
    return static_cast<int>(kExitOk);
  });
}

int run_bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                      std::ostream& out, std::ostream& err) {
  return guarded("bench", err, [&] {
    bench_command(args, command_line, std::move(peer), out, &err);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace ndconv::perf
