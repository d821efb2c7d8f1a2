// The bench's end-to-end rows: whole `ndconv` commands timed as child processes (fork and exec of
// the ndconv binary, wall clock, median of repetitions after one untimed run that also warms the
// page cache), each against its I/O-only floor, `ndconv convert` on the same files with the same
// output type and no filter, timed in the same run with its repetitions interleaved with the
// command's so that a machine's drift affects both alike.
//
// e2e_{smooth,convolve}_{mha,nii,niigz}: an echo-like uint8 sequence (perf/phantom.h) written by
// the bench (perf/volume_files.h); `smooth --sigma 1` or `convolve` with a dense 7^4 kernel,
// float32 output in the input's format. batch: many 3D volumes of .nii.gz smoothed in one command
// when the tree's `smooth` takes `-o DIR/` (else one command per volume, said so in the row),
// against the same volumes converted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perf/params.h"
#include "perf/report.h"
#include "perf/volume_files.h"

namespace ndconv::perf {

struct EndToEndConfig {
  std::string ndconv;  ///< the ndconv binary; empty: the rows say they are not available
  Shape sequence = parse_shape("160x160x160x20", "sequence");
  Shape batch_volume = parse_shape("160x160x160", "batch volume");
  int batch_count = 40;
  std::vector<std::string> devices{"auto"};  ///< --device of the filtering commands
  int repetitions = 3;
  std::string work_parent;  ///< where the temporary work folder goes (empty: the system's)
  uint64_t seed = 1;
};

/// One child process: exit code and wall-clock seconds from fork to exit.
struct ProcessRun {
  int exit_code = -1;  ///< 128 + signal when killed by a signal
  double seconds = 0;
  std::string output;  ///< what it wrote on stdout and stderr (the last 4 KiB)
};

/// Runs `argv` (argv[0] a path) with stdout and stderr captured; throws InvalidArgument when the
/// process cannot be started.
ProcessRun run_process(const std::vector<std::string>& argv);

/// What an ndconv command says it spent (its --verbose "timings:" lines: the stages summed, "in
/// all" the largest), seconds.
struct StageSeconds {
  double read = 0, filter = 0, write = 0;
  double in_all = 0;  ///< from the program's start to its last timings line
};
StageSeconds stage_seconds(const std::string& output);

/// Whether `help` (a command's --help text) lists the option `-o` (a batch's output folder).
bool help_lists_output_folder(const std::string& help);

/// Makes the inputs once, on first use, in a temporary folder removed by the destructor.
class EndToEndBench {
 public:
  explicit EndToEndBench(EndToEndConfig config);
  ~EndToEndBench();

  /// The row's fields (after the common head): `command` "smooth" or "convolve" on `format`.
  Json sequence_row(const std::string& command, FileFormat format, int& failures);
  Json batch_row(int& failures);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndconv::perf
