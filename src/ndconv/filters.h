// Filters built on the engine's dense and separable calls (so they run on the CPU and the GPU
// backends alike), the median (a selection, not a multiply-add), and kernels described by a
// short text instead of a kernel file.
//
// Units: sigmas and radii are in voxels here; the command line converts millimetres. Derivatives
// are taken with respect to physical coordinates (the input view's spacing), as ITK's
// GradientMagnitudeRecursiveGaussianImageFilter and LaplacianRecursiveGaussianImageFilter do with
// their default NormalizeAcrossScale off; with a spacing of 1 they equal scipy.ndimage's
// gaussian_filter(order=...) (the derivative of the sampled, normalised Gaussian).
//
// The derivative filters act on the spatial axes: all axes of a 2D or 3D volume, x, y and z of a
// 4D series (each frame on its own).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ndconv/engine.h"
#include "ndconv/types.h"

namespace ndconv {

/// A dense kernel that owns its taps, x fastest, in the orientation a kernel file holds them
/// (`convolve` flips it, `convolve --correlate` does not).
struct Kernel {
  int dims = 0;
  Index extent{1, 1, 1, 1};
  std::vector<float> taps;
  DenseFilter filter() const;
};

/// The grammar of kernel specs, one line per kind, for --help texts.
const char* kernel_spec_grammar();

/// A kernel from a spec for an image of `dims` dimensions (2..4):
///   box:N[xN...]       mean of N voxels per axis
///   gauss:S[xS...]     sampled Gaussian of sigma S voxels, truncated at 4 sigma, sum 1
///   sphere:R[xR...]    mean over the voxels of an ellipsoid of radii R voxels
///   sobel:AXIS         central difference along AXIS (x, y, z), [1 2 1] along the others
///   prewitt:AXIS       central difference along AXIS, [1 1 1] along the others
///   laplace            the discrete Laplacian (2 * spatial axes + 1 non-zero taps)
/// One value repeats over the spatial axes (x, y, z of a 4D series: extent 1 along t); several
/// give one per spatial axis, or one per axis of `dims`. Throws InvalidArgument naming the
/// problem. `dims` = 0 takes the dimension from the spec (the number of values; 3 for one).
Kernel parse_kernel_spec(const std::string& spec, int dims);

/// The dimension `parse_kernel_spec(spec, 0)` chooses.
int kernel_spec_dims(const std::string& spec);

/// A mean over `extent` voxels per axis (extent 1 or 0: the axis is not filtered), separable.
SeparableFilter box_filter(int dims, const Index& extent);

/// A mean over the voxels whose offset d satisfies sum (d_a / r_a)^2 <= 1 (r_a = 0: the axis is
/// not filtered); extent 2 floor(r_a) + 1. Dense: checked against the dense limits.
Kernel ellipsoid_mean_kernel(int dims, const std::array<double, kMaxDims>& radius_voxels);

/// Correlation taps of the `order`-th (0, 1, 2) derivative of a Gaussian of `sigma_voxels`,
/// truncated at `truncate` sigmas, in voxel units: the derivative of the normalised sampled
/// Gaussian as scipy.ndimage.gaussian_filter1d computes it. Correlating with them gives the
/// derivative along +axis.
std::vector<float> gaussian_derivative_taps(double sigma_voxels, int order, double truncate = 4.0);

/// Gaussian smoothing with derivative `orders[a]` along axis a, in physical units (order-n taps
/// divided by spacing^n). A sigma of 0 with order 0 skips the axis. Correlation order.
SeparableFilter gaussian_derivative_filter(int dims,
                                           const std::array<double, kMaxDims>& sigma_voxels,
                                           const std::array<int, kMaxDims>& orders,
                                           const std::array<double, kMaxDims>& spacing,
                                           double truncate = 4.0);

/// The spatial axes the derivative filters act on: 3 for a 4D volume, else `dims`.
int spatial_axes(int dims);

/// |grad (G_sigma * in)| over the spatial axes, physical units. `output` has the input's extents.
RunReport gradient_magnitude(const ConstVolumeView& input, const VolumeView& output,
                             const std::array<double, kMaxDims>& sigma_voxels,
                             const Options& options, double truncate = 4.0);

/// sum over the spatial axes of d^2/dx_a^2 (G_sigma * in), physical units (LoG).
RunReport laplacian_of_gaussian(const ConstVolumeView& input, const VolumeView& output,
                                const std::array<double, kMaxDims>& sigma_voxels,
                                const Options& options, double truncate = 4.0);

/// Unsharp masking as ITK's UnsharpMaskImageFilter: with d = in - G_sigma * in,
/// out = in + amount * d where |d| > threshold, else in.
struct UnsharpParameters {
  std::array<double, kMaxDims> sigma_voxels{0, 0, 0, 0};
  double amount = 0.5;
  double threshold = 0;
  double truncate = 4.0;
};
RunReport unsharp_mask(const ConstVolumeView& input, const VolumeView& output,
                       const UnsharpParameters& parameters, const Options& options);

/// Normalized convolution inside a mask: out = F(in * m) / F(m) where m != 0, with m the mask
/// made binary (non-zero: 1) and F the filter; so values outside the mask do not leak in.
/// Voxels where m = 0 (or F(m) = 0) get `outside_value`, or the input's value when
/// `keep_input_outside`. The mask has the input's extents.
struct MaskedOptions {
  float outside_value = 0;
  bool keep_input_outside = false;
};
/// Any filter of `input` into `output` (an engine call), as filter_separable and filter_dense.
using VolumeFilter =
    std::function<RunReport(const ConstVolumeView&, const VolumeView&, const Options&)>;
RunReport masked_filter(const ConstVolumeView& input, const ConstVolumeView& mask,
                        const VolumeView& output, const MaskedOptions& masked,
                        const Options& options, const VolumeFilter& filter);
RunReport masked_filter_separable(const ConstVolumeView& input, const ConstVolumeView& mask,
                                  const SeparableFilter& filter, const VolumeView& output,
                                  const MaskedOptions& masked, const Options& options);
RunReport masked_filter_dense(const ConstVolumeView& input, const ConstVolumeView& mask,
                              const DenseFilter& filter, const VolumeView& output,
                              const MaskedOptions& masked, const Options& options);

/// How `smooth` builds its Gaussian: Exact samples it (a separable FIR filter, at most
/// kMaxSeparableExtent taps per axis); Recursive runs Young and van Vliet's third-order IIR
/// recursion forwards and backwards along each axis (any sigma >= kMinRecursiveSigma, a cost per
/// voxel that does not grow with sigma, within 0.4% relative L2 of the exact Gaussian); Auto takes
/// Exact while it fits and Recursive past it (sigma * truncate > 511 voxels along some axis).
enum class GaussianMethod { Auto, Exact, Recursive };
inline constexpr double kMinRecursiveSigma = 0.5;
/// Largest sigma the recursive Gaussian takes (its margins must stay countable).
inline constexpr double kMaxRecursiveSigma = 1e6;

/// Whether Auto picks the recursive filter for these sigmas: when the sampled Gaussian needs more
/// than kMaxSeparableExtent taps along some axis.
bool recursive_gaussian_needed(const std::array<double, kMaxDims>& sigma_voxels, double truncate);

/// Recursive Gaussian smoothing along every axis with sigma_voxels[a] > 0 (each in
/// [kMinRecursiveSigma, kMaxRecursiveSigma]), the boundary extending each line. Runs on the GPU
/// (one thread per line) when the backend allows it and the volume fits, else on the CPU (all
/// threads); Backend::Cuda throws when the GPU cannot run it.
RunReport recursive_gaussian(const ConstVolumeView& input, const VolumeView& output,
                             const std::array<double, kMaxDims>& sigma_voxels,
                             const Options& options);

/// Largest median radius per axis.
inline constexpr int64_t kMaxMedianRadius = 7;

/// The median of the (2 r_a + 1) per axis voxels around each voxel (r_a = 0: the axis is not
/// filtered), the boundary extending the input as for the other filters. NaN voxels sort above
/// every number. Runs on the GPU (its own selection kernel: every radius in 2D and 3D, 4D windows
/// whose staged box fits a block's shared memory, e.g. radius 4 per axis) when the backend allows
/// it, else on the CPU (all threads); Backend::Cuda throws when the GPU cannot run it.
RunReport median_filter(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
                        const Options& options);

}  // namespace ndconv
