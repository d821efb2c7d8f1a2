// ndconv-perf: `ndconv sweep` and `ndconv bench` without ITK and CLI11, for machines that have
// only a CUDA toolchain (the GPU machine builds it with -DNDCONV_WITH_ITK=OFF). The same options
// (perf/commands.h) and output; the bench's CPU row runs without its ITK peer here.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "perf/commands.h"

using namespace ndconv::perf;

int main(int argc, char** argv) {
  const std::string sub = argc > 1 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  SweepArgs sweep;
  BenchArgs bench;
  const CommandLine commands[] = {sweep_command_line(sweep), bench_command_line(bench, false)};
  const bool help = sub == "-h" || sub == "--help" ||
                    std::find(args.begin(), args.end(), "--help") != args.end() ||
                    std::find(args.begin(), args.end(), "-h") != args.end();
  for (const CommandLine& c : commands) {
    if (c.name != sub)
      continue;
    if (help) {
      print_help(std::cout, "ndconv-perf", c);
      return kExitOk;
    }
    try {
      parse_options(c, args);
    } catch (const std::exception& e) {
      std::cerr << "ndconv-perf " << sub << ": error: " << e.what() << "\n";
      return kExitError;
    }
    const std::string typed = typed_command_line("ndconv-perf " + sub);
    return sub == "sweep" ? run_sweep_command(sweep, typed, std::cout, std::cerr)
                          : run_bench_command(bench, typed, nullptr, std::cout, std::cerr);
  }
  if (help) {
    for (const CommandLine& c : commands) {
      print_help(std::cout, "ndconv-perf", c);
      std::cout << "\n";
    }
    return kExitOk;
  }
  std::cerr << "ndconv-perf: "
            << (sub.empty() ? "missing command" : "unknown command '" + sub + "'")
            << " (sweep or bench; see --help)\n";
  return kExitError;
}
