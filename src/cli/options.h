// The options every subcommand shares (device, threads, force, quiet, verbose; output type,
// compression, preview; --allow-external-data), their translation into engine Options, and
// UsageError, the error of a wrong command line (exit code 2; anything else: 1).
#pragma once

#include <string>

#include "io/image.h"
#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace CLI {
class App;
}

namespace ndconv::cli {

/// The command line asks for something impossible (bad value, conflicting options); exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct CommonOptions {
  std::string device = "auto";
  std::string outputs_per_thread = "auto";
  int threads = 0;
  bool force = false;
  bool quiet = false;
  bool verbose = false;
};

/// Output options of the subcommands that write an image.
struct OutputOptions {
  std::string type;  ///< empty: float32 (or what the format holds); "same"; or a type name
  std::string preview;
  int compression = io::kDefaultCompressionLevel;  ///< deflate level of .nii.gz / .mha / .mhd
};

/// The headings of the shared options in --help, after each subcommand's own options (CLI11's
/// "Options"): input, output, how it runs, and the expert settings last.
inline constexpr const char* kInputGroup = "Input options";
inline constexpr const char* kOutputGroup = "Output options";
inline constexpr const char* kRunGroup = "Run options";
inline constexpr const char* kExpertGroup = "Expert options";

void add_common_options(CLI::App& sub, CommonOptions& common);
/// --threads alone (add_common_options includes it), for `convert`.
void add_threads_option(CLI::App& sub, CommonOptions& common);
/// --allow-external-data, on every subcommand that reads an image (io/data_file_policy.h).
void add_input_options(CLI::App& sub);

/// The help of an IN argument: what ndconv reads.
inline constexpr const char* kInputHelp =
    "input image: NIfTI, MetaImage, NRRD, a DICOM series (a folder, or @LIST of slices), PNG, "
    "JPEG, TIFF or BMP; 2D, 3D or 4D";
void add_output_options(CLI::App& sub, OutputOptions& output);
/// --compression alone (add_output_options includes it), for `convert`.
void add_compression_option(CLI::App& sub, OutputOptions& output);
/// The --type check: "" for a type the writers take ("same" included), else the message.
std::string output_type_error(const std::string& type);

/// Engine options from the common options (device, KO, threads).
Options engine_options(const CommonOptions& common);

/// --boundary (zero, replicate, mirror, reflect, periodic) into `boundary`, whose value is the
/// default.
void add_boundary_option(CLI::App& sub, std::string& boundary);
/// A name add_boundary_option accepts (already checked by CLI11).
Boundary parse_boundary(const std::string& name);

}  // namespace ndconv::cli
