// The sweep and the bench as commands, with one definition of their options that both front ends
// mount: `ndconv sweep|bench` (CLI11, with ITK for the bench's CPU peer) adds each option to its
// subcommand, and the ITK-free, CLI11-free `ndconv-perf sweep|bench` (for machines with only a
// CUDA toolchain, such as the GPU machine) parses its arguments with parse_options. The options
// arrive as text and become configurations here, so both accept and reject the same things and
// print the same help.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "perf/bench.h"
#include "perf/sweep.h"

namespace ndconv::perf {

/// Exit codes of ndconv-perf.
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
  int itk_repetitions = 1;
  bool quick = false;       ///< fewer repetitions, no per-KO and boundary timings
  bool boundaries = false;  ///< with quick: the boundary timings all the same
  uint64_t seed = 0;
  std::string e2e_devices = "auto";  ///< --device of the e2e_* and batch commands
  int e2e_repetitions = 3;
  std::string e2e_volume = "160x160x160x20";
  std::string batch_volume = "160x160x160";
  int batch_count = 40;
  std::string work_dir;  ///< where the temporary folder of the e2e rows goes
  /// Not an option: the front end's ndconv binary, which the e2e rows run (empty: not available).
  std::string ndconv_binary;
};

/// One option of a command.
struct Option {
  std::string name;        ///< "--reps"
  std::string value_name;  ///< "N"; empty for a flag
  std::string help;
  /// Stores the value (a flag gets ""); throws InvalidArgument for text it cannot take.
  std::function<void(const std::string& value)> set;
};

/// A command's name, one-line summary (for a list of commands), description and options (bound to
/// the arguments it fills).
struct CommandLine {
  std::string name;
  std::string summary;
  std::string description;
  std::vector<Option> options;
};

CommandLine sweep_command_line(SweepArgs& args);
/// `itk_peer`: the front end runs itk::ConvolutionImageFilter for the CPU row (adds --itk-reps).
CommandLine bench_command_line(BenchArgs& args, bool itk_peer);

/// Applies `args` (the words after the command's name) to the command's options: "--name value",
/// "--name=value" or "--flag". Throws InvalidArgument for an unknown option or a missing value.
void parse_options(const CommandLine& command, const std::vector<std::string>& args);

/// The words of `text` in lines of at most 100 columns, each line after the first indented by
/// `indent` spaces (as the first is taken to be).
std::string wrapped(const std::string& text, std::size_t indent);

/// The command's usage line, summary, description and options, wrapped for a terminal.
void print_help(std::ostream& out, const std::string& program, const CommandLine& command);

/// The command as typed, for the JSON record (Linux: /proc/self/cmdline; else `fallback`).
std::string typed_command_line(const std::string& fallback);

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
