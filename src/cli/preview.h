// --preview: one 8-bit PNG showing what a filter did. One row per view (axial, coronal,
// sagittal through the middle of the volume; the middle frame of a 4D series; the image itself
// in 2D), input on the left and output on the right, each scaled to 8 bits between its own 0.5th
// and 99.5th percentiles and resampled to square pixels from the voxel spacing. Multi-component
// pixels are shown as the mean of their components.
#pragma once

#include <string>

#include "io/image.h"

namespace ndconv::cli {

/// Builds the preview picture (2D, one uint8-valued component).
io::Image make_preview(const io::Image& input, const io::Image& output);

/// Builds and writes it to `path` (atomic, as every output).
void write_preview(const std::string& path, const io::Image& input, const io::Image& output,
                   bool overwrite);

}  // namespace ndconv::cli
