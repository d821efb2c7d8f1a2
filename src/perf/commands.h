// The sweep and bench commands as both front ends run them: `ndconv sweep|bench` (CLI11, with
// ITK for the CPU peer) and the ITK-free `ndconv-perf sweep|bench` (its own small parser, for
// machines without ITK or CLI11, such as the GPU machine). The options arrive as text and are
// turned into configurations here, so both front ends accept and reject the same things.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "perf/bench.h"
#include "perf/sweep.h"

namespace ndconv::perf {

/// Exit codes of the commands.
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,            ///< bad input or a failure (one line on stderr)
  kExitNoGpu = 2,            ///< a GPU mode without a usable GPU
  kExitValidationFailed = 3  ///< results written, but some point did not match the CPU backend
};

struct SweepArgs {
  std::string device = "gpu";  ///< "gpu" or "cpu"
  int cuda_device = 0;
  std::string dims;           ///< e.g. "2,3"; empty = every dimension of the volumes
  std::string volumes;        ///< e.g. "256x256x256,128x128x128x16"; empty = the preset's
  std::string filters;        ///< e.g. "3:15:2"; empty = the preset's per dimension
  std::string ko;             ///< e.g. "1,2,4,8"; empty = all compiled
  bool block_shapes = false;  ///< GPU: also the tiled kernel's other compiled block shapes
  bool quick = false;
  int warmup = -1;       ///< -1 = the preset's
  int repetitions = -1;  ///< -1 = the preset's
  bool no_flush = false;
  int threads = 0;
  double check_budget = 0;  ///< 0 = the preset's
  uint64_t seed = 0;
  std::string csv = "ndconv-sweep.csv";
  std::string json = "ndconv-sweep.json";
  bool force = false;
};

struct BenchArgs {
  std::string device = "gpu";
  int cuda_device = 0;
  std::string workload;  ///< comma-separated names; empty = all
  std::string json;      ///< write the JSON here ("-" = stdout instead of the table)
  bool force = false;
  int threads = 0;
  int repetitions = 20;
  int call_repetitions = 5;
  bool quick = false;       ///< fewer repetitions, no per-KO and boundary timings
  bool boundaries = false;  ///< with quick: the boundary timings all the same
  uint64_t seed = 0;
};

/// Builds the sweep's configuration from the options; throws InvalidArgument.
SweepConfig sweep_config(const SweepArgs& args);
BenchConfig bench_config(const BenchArgs& args);

/// Run a command: table to `out`, progress to `progress` (may be null). Throws InvalidArgument
/// (bad options, an output exists), GpuUnavailable, ValidationFailed (after writing the results),
/// or another ndconv::Error. For front ends with their own error handling (`ndconv`).
void sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                   std::ostream* progress);
void bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                   std::ostream& out, std::ostream* progress);

/// The same, with every error turned into one line on `err` (progress goes there too) and an
/// ExitCode; never throws. `peer` is the CPU row's peer (empty when the front end has no ITK).
int run_sweep_command(const SweepArgs& args, const std::string& command_line, std::ostream& out,
                      std::ostream& err);
int run_bench_command(const BenchArgs& args, const std::string& command_line, CpuPeer peer,
                      std::ostream& out, std::ostream& err);

}  // namespace ndconv::perf
