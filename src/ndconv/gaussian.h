// Sampled Gaussian filters for the separable path, shared by the command line and the ITK layer
// so that `ndconv smooth` and ndconv::GaussianImageFilter compute the same thing. The taps are the
// Gaussian sampled at integer offsets and normalised to sum 1, with radius
// round(truncate * sigma), as scipy.ndimage.gaussian_filter does.
#pragma once

#include <vector>

#include "ndconv/types.h"

namespace ndconv {

/// 1D taps for a Gaussian of standard deviation `sigma_voxels` (> 0) truncated at `truncate`
/// standard deviations (> 0). Throws InvalidArgument for bad values or more taps than
/// kMaxSeparableExtent.
std::vector<float> gaussian_taps(double sigma_voxels, double truncate = 4.0);

/// A separable Gaussian of dimension `dims`; a sigma of 0 along an axis skips that axis.
SeparableFilter gaussian_filter(int dims, const std::array<double, kMaxDims>& sigma_voxels,
                                double truncate = 4.0);

/// FWHM = sigma * 2 sqrt(2 ln 2).
double fwhm_to_sigma(double fwhm);

}  // namespace ndconv
