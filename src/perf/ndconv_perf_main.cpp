// ndconv-perf: the sweep and the bench without ITK and CLI11, for machines that have only a CUDA
// toolchain (the GPU machine builds it with -DNDCONV_WITH_ITK=OFF). Same options and output as
// `ndconv sweep` and `ndconv bench`; the bench's CPU row runs without its ITK peer here.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "ndconv/engine.h"
#include "perf/commands.h"
#include "perf/rescore.h"

namespace {

using namespace ndconv::perf;

const char* const kUsage =
    "usage: ndconv-perf sweep [options]   register-blocking sweep (CSV + JSON)\n"
    "       ndconv-perf bench [options]   fixed workloads against measured ceilings\n"
    "       ndconv-perf rescore SWEEP.csv  replay the current KO rule on a recorded GPU sweep\n"
    "\n"
    "sweep options:\n"
    "  --device gpu|cpu      GPU kernels (blocked and tiled, each KO, and the automatic\n"
    "                        plan), or the CPU backend's blocking factor (gpu)\n"
    "  --cuda-device N       CUDA device index (0)\n"
    "  --dims LIST           dimensions to keep, e.g. 2,3\n"
    "  --volumes LIST        volume extents, e.g. 4096x4096,256x256x256\n"
    "  --filters LIST        cube filter extents, e.g. 3:15:2 or 3,5,7\n"
    "  --ko LIST             KO values, e.g. 1,2,4,8 (default: every compiled one)\n"
    "  --block-shapes        also the tiled kernel's other compiled block shapes (GPU)\n"
    "  --quick               small grid, under a minute\n"
    "  --warmup N --reps N   untimed and timed repetitions per point\n"
    "  --no-flush            do not flush L2 between repetitions\n"
    "  --threads N           CPU threads (0 = all)\n"
    "  --check-budget F      CPU FMAs per validation window (2e9)\n"
    "  --seed N              fixed random seed (default: fresh)\n"
    "  --csv PATH --json PATH  outputs (ndconv-sweep.csv, ndconv-sweep.json)\n"
    "  --force               overwrite existing outputs\n"
    "\n"
    "bench options:\n"
    "  --device gpu|cpu      all workloads, or the CPU row only\n"
    "  --workload NAMES      dense3d_11,dense3d_5,dense4d_7,dense2d_17,gauss3d_s2,cpu3d_7;\n"
    "                        also denseND_K: a K^N filter on that row's volume, no target\n"
    "  --json PATH           also write JSON (\"-\": JSON on stdout instead of the table)\n"
    "  --reps N --call-reps N  timed repetitions (20, 5)\n"
    "  --quick               fewer repetitions, no per-KO or boundary timings\n"
    "  --boundaries          with --quick: time the other boundaries all the same\n"
    "  --cuda-device N --threads N --seed N --force\n";

// Options that take a value, mapped to setters; flags separately.
using Setter = std::function<void(const std::string&)>;

int to_int(const std::string& name, const std::string& v) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0')
    throw ndconv::InvalidArgument(name + ": '" + v + "' is not an integer");
  return static_cast<int>(x);
}

double to_double(const std::string& name, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0')
    throw ndconv::InvalidArgument(name + ": '" + v + "' is not a number");
  return x;
}

void parse(int argc, char** argv, const std::map<std::string, Setter>& options,
           const std::map<std::string, std::function<void()>>& flags) {
  for (int i = 2; i < argc; ++i) {
    std::string name = argv[i], value;
    const auto eq = name.find('=');
    if (name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      if (!options.count(name))
        throw ndconv::InvalidArgument("unknown option " + name + " (see --help)");
      options.at(name)(value);
      continue;
    }
    if (flags.count(name)) {
      flags.at(name)();
    } else if (options.count(name)) {
      if (i + 1 >= argc)
        throw ndconv::InvalidArgument(name + " needs a value");
      options.at(name)(argv[++i]);
    } else {
      throw ndconv::InvalidArgument("unknown option " + name + " (see --help)");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_line = "ndconv-perf";
  for (int i = 1; i < argc; ++i)
    command_line += std::string(" ") + argv[i];
  const std::string sub = argc > 1 ? argv[1] : "";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
  }
  try {
    if (sub == "sweep") {
      SweepArgs a;
      parse(argc, argv,
            {{"--device", [&](const std::string& v) { a.device = v; }},
             {"--cuda-device",
              [&](const std::string& v) { a.cuda_device = to_int("--cuda-device", v); }},
             {"--dims", [&](const std::string& v) { a.dims = v; }},
             {"--volumes", [&](const std::string& v) { a.volumes = v; }},
             {"--filters", [&](const std::string& v) { a.filters = v; }},
             {"--ko", [&](const std::string& v) { a.ko = v; }},
             {"--warmup", [&](const std::string& v) { a.warmup = to_int("--warmup", v); }},
             {"--reps", [&](const std::string& v) { a.repetitions = to_int("--reps", v); }},
             {"--threads", [&](const std::string& v) { a.threads = to_int("--threads", v); }},
             {"--check-budget",
              [&](const std::string& v) { a.check_budget = to_double("--check-budget", v); }},
             {"--seed", [&](const std::string& v) { a.seed = to_int("--seed", v); }},
             {"--csv", [&](const std::string& v) { a.csv = v; }},
             {"--json", [&](const std::string& v) { a.json = v; }}},
            {{"--quick", [&] { a.quick = true; }},
             {"--block-shapes", [&] { a.block_shapes = true; }},
             {"--no-flush", [&] { a.no_flush = true; }},
             {"--force", [&] { a.force = true; }}});
      return run_sweep_command(a, command_line, std::cout, std::cerr);
    }
    if (sub == "bench") {
      BenchArgs a;
      parse(argc, argv,
            {{"--device", [&](const std::string& v) { a.device = v; }},
             {"--cuda-device",
              [&](const std::string& v) { a.cuda_device = to_int("--cuda-device", v); }},
             {"--workload", [&](const std::string& v) { a.workload = v; }},
             {"--json", [&](const std::string& v) { a.json = v; }},
             {"--threads", [&](const std::string& v) { a.threads = to_int("--threads", v); }},
             {"--reps", [&](const std::string& v) { a.repetitions = to_int("--reps", v); }},
             {"--call-reps",
              [&](const std::string& v) { a.call_repetitions = to_int("--call-reps", v); }},
             {"--seed", [&](const std::string& v) { a.seed = to_int("--seed", v); }}},
            {{"--quick", [&] { a.quick = true; }},
             {"--boundaries", [&] { a.boundaries = true; }},
             {"--force", [&] { a.force = true; }}});
      return run_bench_command(a, command_line, nullptr, std::cout, std::cerr);
    }
    if (sub == "rescore") {
      if (argc != 3)
        throw ndconv::InvalidArgument("usage: ndconv-perf rescore SWEEP.csv");
      std::ifstream f(argv[2]);
      if (!f)
        throw ndconv::InvalidArgument(std::string("cannot read '") + argv[2] + "'");
      print_rescore_table(std::cout, rescore_sweep(read_csv(f)));
      return kExitOk;
    }
    std::cerr << "ndconv-perf: "
              << (sub.empty() ? "missing subcommand" : "unknown subcommand '" + sub + "'")
              << " (sweep, bench or rescore; see --help)\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "ndconv-perf " << sub << ": error: " << e.what() << "\n";
    return kExitError;
  }
}
