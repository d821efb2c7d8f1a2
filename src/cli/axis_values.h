// Parsing of per-axis values with a unit, as `--sigma 1.5`, `--sigma 1x1x2`, `--fwhm 4mm`,
// `--sigma 2vox`, and of time values (`--time-sigma 2` frames or `--time-sigma 1.5s` seconds).
#pragma once

#include <string>
#include <vector>

#include "core/number_text.h"

namespace ndconv::cli {

enum class LengthUnit { Millimetre, Voxel };

struct AxisValues {
  std::vector<double> values;  ///< one value, or one per axis
  LengthUnit unit = LengthUnit::Millimetre;
  bool unit_given = false;  ///< the text named its unit (mm or vox), not mm by default
};

/// Parses "V", "VxVxV" with an optional unit suffix "mm" or "vox". `option` names the option in
/// error messages. Every value must be finite and >= 0, and at least one > 0. Throws UsageError.
AxisValues parse_axis_values(const std::string& text, const std::string& option);

/// The values expanded to `axes` axes (one value repeats). Throws UsageError on a wrong count.
std::vector<double> expand_to_axes(const AxisValues& v, int axes, const std::string& option,
                                   const std::string& input);

struct TimeValue {
  double value = 0;
  bool seconds = false;  ///< false: frames
};

/// Parses "N" (frames) or "Ns" (seconds), N > 0. Throws UsageError.
TimeValue parse_time_value(const std::string& text, const std::string& option);

/// Parses a strictly numeric double (the whole string); false otherwise. The engine's reading,
/// which its kernel specifications use too.
using ndconv::detail::parse_number;

}  // namespace ndconv::cli
