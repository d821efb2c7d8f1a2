// --preview: one 8-bit PNG showing what a filter did. A caption (the command that made it), then
// one row per view (the three planes through the middle of the volume, named axial, coronal or
// sagittal from the image's direction, with the slice index and the anatomical letters at each
// edge; the middle frame of a 4D series; the image itself in 2D), input on the left and output on
// the right, both scaled to 8 bits by one window (the 0.5th and 99.5th percentiles of all values
// shown, printed under the pictures) and resampled to square pixels from the voxel spacing.
// Multi-component pixels are shown as the mean of their components.
#pragma once

#include <string>

#include "io/image.h"

namespace ndconv::cli {

/// The caption of every preview this process writes: the command line (paths cut to file names).
void set_preview_caption(int argc, char** argv);

/// Builds the preview picture (2D, one uint8-valued component).
io::Image make_preview(const io::Image& input, const io::Image& output);

/// Builds and writes it to `path` (atomic, as every output).
void write_preview(const std::string& path, const io::Image& input, const io::Image& output,
                   bool overwrite);

}  // namespace ndconv::cli
