// The voxel size of ultrasound DICOM, read by ndconv from the attributes its IOD keeps it in.
// GDCM (under ITK's GDCMImageIO) takes an Enhanced US Volume's voxel size from top-level Pixel
// Spacing and Spacing Between Slices, which that IOD does not use (it keeps them in the Pixel
// Measures functional group), and an ultrasound image's from the first Ultrasound Region's
// Physical Delta X/Y without their unit (centimetres), 1 where it finds none.
#pragma once

#include <string>

#include "io/image.h"

namespace ndconv::io {

/// For an Enhanced US Volume, an Ultrasound Multi-frame Image or an Ultrasound Image file, sets
/// the spacing of its first three axes (at most `info.geometry.dims`) in millimetres:
///  - Enhanced US Volume: the Pixel Measures functional group's Pixel Spacing (shared or per
///    frame: all the same) for x and y; along the frames the step between the frames' positions
///    (Plane Position (Volume), else Plane Position (Patient), every frame's) where they are
///    evenly spaced along one line, else Spacing Between Slices (Pixel Measures);
///  - ultrasound images: Physical Delta X and Y of the Sequence of Ultrasound Regions' 2D regions
///    in centimetres (all the same) for x and y; the frames' axis of a multi-frame image is time,
///    spacing 1.
/// Where the file gives no voxel size (or, for an Enhanced US Volume, no step between frames, or
/// positions not evenly spaced along one line, as in 3D+t), that spacing is 1 and
/// `info.spatial_unit_unknown` says why. Throws IoError naming `path` where the file contradicts
/// itself (frames or regions with different voxel sizes, Spacing Between Slices against the
/// frames' positions) or gives a voxel size that is not a finite positive number. Any other file
/// is left as it is.
void apply_ultrasound_spacing(const std::string& path, ImageInfo& info);

}  // namespace ndconv::io
