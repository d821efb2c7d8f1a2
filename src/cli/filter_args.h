// What the filter subcommands (mean, median, gradient, laplacian, derivative, unsharp, and smooth's
// --mask) share: input/output/boundary options, lengths in mm or voxels per spatial axis, the mask
// file, and the read-filter-write flow for an output of the input's shape.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "io/image.h"
#include "ndconv/filters.h"

namespace CLI {
class App;
}

namespace ndconv::cli {

struct FilterArgs {
  std::vector<std::string> files;  ///< IN OUT, or the inputs of a batch
  BatchOptions batch;
  std::string in, out, boundary = "replicate";
  CommonOptions common;
  OutputOptions output;
};

/// IN, OUT, --boundary, the input, output and common options.
void add_filter_args(CLI::App& sub, FilterArgs& a, const std::string& what);

/// IN OUT, or IN... with -o DIR or --list (a batch); `what` describes the output.
void add_input_output_args(CLI::App& sub, FilterArgs& a, const std::string& what);

/// --boundary, the input, output and common options.
void add_boundary_and_common_args(CLI::App& sub, FilterArgs& a);

/// The subcommand `name` of a filter that writes an image: IN, OUT and the options of
/// add_filter_args over `a`; choosing it calls `run` (run_jobs_of for a batch). The caller adds
/// the filter's own options.
CLI::App* add_filter_command(CLI::App& app, const std::string& name, const std::string& description,
                             FilterArgs& a, const std::function<void()>& run);

/// Lengths per spatial axis in voxels from "V", "VxVxV", with mm (default) or vox: the syntax of
/// smooth's --sigma. Axes past the spatial ones (t of a 4D series) are 0.
std::array<double, kMaxDims> lengths_in_voxels(const std::string& text, const std::string& option,
                                               const io::ImageInfo& info);

/// Warns, once per input, that the header leaves the unit of its spacing unknown and that it is
/// read as millimetres: for lengths in mm by default (io::ImageInfo::spatial_unit_unknown); a
/// length the user wrote with its unit (2mm) needs no warning.
void warn_if_spatial_unit_unknown(const io::ImageInfo& info);

/// Why the unit of a 4D series' time step is unknown ("" when it is seconds): a NIfTI header
/// without a time unit (io's time_unit_unknown), or a MetaImage, whose header has no field for it.
std::string time_unit_unknown(const io::ImageInfo& info);

/// The time step of a 4D series in seconds, for a time value that `option` gives in seconds.
/// Throws Error when the header gives no time step (0) or no time unit: the value must then be
/// given in frames.
double time_step_seconds(const io::ImageInfo& info, const std::string& option);

/// The engine's limit on a sampled Gaussian's taps, checked before any work so that the message
/// names the option (`option` for the spatial axes, --time-sigma for t) and the axis: an absurd
/// sigma such as 1e39 would otherwise overflow the tap count. Throws UsageError.
void check_gaussian_width(const std::array<double, kMaxDims>& sigma, int dims, double truncate,
                          const std::string& option);

/// Warns when a Gaussian of `sigma` voxels is a single tap along an axis (a copy of the input).
void warn_if_one_tap(const std::array<double, kMaxDims>& sigma, int dims, double truncate,
                     const std::string& option);

/// --truncate: the filter radius in standard deviations, in (0, kMaxTruncate].
inline constexpr double kMaxTruncate = 100;
void add_truncate_option(CLI::App& sub, double& truncate);

/// --mask FILE and --outside VALUE|input.
struct MaskArgs {
  std::string path;
  std::string outside = "0";
};
void add_mask_options(CLI::App& sub, MaskArgs& m);
/// The parsed --outside (UsageError when it is neither a number within float32's range nor
/// "input").
MaskedOptions masked_options(const MaskArgs& m);
/// Reads the mask: a scalar image with the input's extents, or a 3D mask for each frame of a 4D
/// input. Returns one plane with the input's extents.
std::vector<float> read_mask(const MaskArgs& m, const io::ImageInfo& input);

/// Reads `a.in`, runs `filter` on every component plane (same extents as the input) with
/// `a.boundary` and writes `a.out`. `filter_seconds`: the filter's estimated time, its share of
/// the progress bar (0: unknown, estimated from the voxel count); `backend_planned`: the backend's
/// reason was printed before the work (print_plan_before_work).
void read_filter_write(const std::string& label, const FilterArgs& a, const Plan& plan,
                       const PlaneFilter& filter, double filter_seconds = 0,
                       bool backend_planned = false);

/// Refuses a run that would not fit in memory (`filter_copies` float32 volumes of scratch besides
/// the output), then read_filter_write.
void filter_same_shape(const std::string& label, const FilterArgs& a, const Plan& plan,
                       double filter_copies, const PlaneFilter& filter, double filter_seconds = 0,
                       bool backend_planned = false);

}  // namespace ndconv::cli
