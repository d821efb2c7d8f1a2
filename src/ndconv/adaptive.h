// Filter banks and orientation-adaptive filtering (Knutsson, Westin and Granlund; Westin et al.,
// "Adaptive image filtering", Handbook of Medical Imaging 2000; Broxvall, Emilsson and Thunberg,
// IEEE TMI 2012; Eklund, Andersson and Knutsson, Int. J. Biomed. Imaging 2011, 952819).
// See docs/adaptive.md.
//
// The filter bank applies F real filters of one extent to one input in one pass over it: every
// input value loaded feeds all F filters and all outputs of a register block. The adaptive filter
// is built on it: a quadrature filter bank estimates the local structure tensor, which is relaxed
// (Gaussian smoothing), mapped to a control tensor C, and steers the reconstruction
//   out = LP * f + sum_k <C, M_k> (HP_k * f)
// computed by the bank's weighted sum without writing the HP_k * f volumes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv {

// ---- The filter bank ---------------------------------------------------------------------------

/// `count` real filters of the same dimension and extent; filter f's taps start at
/// taps + f * tap_count(), contiguous with x fastest (a complex filter is two real ones).
struct FilterBank {
  int dims = 0;
  Index extent{1, 1, 1, 1};
  int count = 0;
  const float* taps = nullptr;
  /// Taps of one filter.
  int64_t tap_count() const { return DenseFilter{dims, extent, taps}.tap_count(); }
};

/// Filters `input` with every filter of `bank` into outputs[f] (each with the extents of
/// output_geometry(...)). Options as filter_dense (operation, boundary, region, backend, threads,
/// outputs_per_thread = outputs per block along the last axis: 1, 2 or 4 on the CPU, 1 or 2 on
/// the GPU; progress). The backend is chosen as for filter_dense; the GPU takes filters of 3, 5,
/// 7, 9, 11, 13 or 15 taps along x, other filters run on the CPU (or fail where CUDA is required).
RunReport filter_bank(const ConstVolumeView& input, const FilterBank& bank,
                      const std::vector<VolumeView>& outputs, const Options& options = {});

/// output(x) = sum_f weights[f](x) * (bank_f * input)(x) in the same pass, without writing the F
/// filter responses; `weights` holds one volume per filter with the output's extents.
RunReport filter_bank_weighted_sum(const ConstVolumeView& input, const FilterBank& bank,
                                   const std::vector<ConstVolumeView>& weights,
                                   const VolumeView& output, const Options& options = {});

// ---- Filter design -----------------------------------------------------------------------------

/// A designed filter: its taps (x fastest, convolution order: its frequency response is
/// H(u) = sum_x h(x) exp(-i u.x)), the direction it is tuned to, and how close it came.
struct DesignedFilter {
  Index extent{1, 1, 1, 1};
  std::vector<float> real;
  std::vector<float> imag;                   ///< empty for real filters
  std::array<double, kMaxDims> direction{};  ///< unit vector; zero for the lowpass filter
  double dc_response = 0;                    ///< |H(0)|
  double ideal_dc_response = 0;
  /// sqrt(sum W |H - ideal|^2 / sum W |ideal|^2) over the design's frequency grid.
  double relative_error = 0;
};

struct QuadratureDesign {
  int size = 7;  ///< taps per axis
  /// Lognormal radial function R(rho) = exp(-4 / (B^2 ln 2) * ln^2(rho / rho_c)): centre
  /// frequency rho_c (radians per voxel) and bandwidth B (octaves). Knutsson's defaults.
  double centre_frequency = 1.1107207345395915;  ///< pi / (2 sqrt 2)
  double bandwidth_octaves = 2.0;
};

struct ReconstructionDesign {
  int size = 11;  ///< taps per axis (7 to 11)
  /// The lowpass filter's radial function is a Gaussian: exp(-rho^2 sigma^2 / 2), i.e. a spatial
  /// Gaussian of this standard deviation in voxels; each highpass filter is
  /// (1 - that) * (u.n_k)^2, so that a control tensor C = I passes the signal unchanged.
  double lowpass_sigma = 1.5;
};

/// Filter directions: 3 in 2D (60 degrees apart), 6 in 3D (icosahedron), 12 in 4D (the 24-cell).
std::vector<std::array<double, kMaxDims>> quadrature_directions(int dims);
/// d(d+1)/2 directions whose n n^T span the symmetric tensors: 3 / 6 / 10 in 2D / 3D / 4D.
std::vector<std::array<double, kMaxDims>> reconstruction_directions(int dims);
/// The dual tensors M_k of directions n_k (row-major d x d): sum_k <n_k n_k^T, X> M_k = X for
/// every symmetric X. For the quadrature directions M_k = a n_k n_k^T - b I.
std::vector<std::array<double, kMaxDims * kMaxDims>> dual_tensors(
    int dims, const std::vector<std::array<double, kMaxDims>>& directions);

/// Complex quadrature filters (one per quadrature direction) designed by weighted least squares
/// against the ideal frequency response, weight 1 / (|u| + 0.05 pi) (100 times that at u = 0) on a
/// uniform grid of odd(1.5 size) frequencies per axis.
std::vector<DesignedFilter> design_quadrature_filters(int dims, const QuadratureDesign& design);
/// The lowpass filter, then one real highpass filter per reconstruction direction.
std::vector<DesignedFilter> design_reconstruction_filters(int dims,
                                                          const ReconstructionDesign& design);

// ---- The adaptive filter -----------------------------------------------------------------------

enum class TensorNormalisation {
  LargestEigenvalue,  ///< by the largest eigenvalue of T anywhere in the volume
  Norm,               ///< by the largest Frobenius norm of T anywhere in the volume
};

struct AdaptiveParameters {
  /// 4D input: true 4D filtering (time as the 4th axis) when true, else each 3D frame alone.
  bool time_as_axis = true;
  /// 1 (none) or 2: estimate the orientation on the input lowpass filtered (Gaussian, sigma 1
  /// voxel) and subsampled by 2 along the spatial axes (x, y, z; not t), then interpolate the
  /// control tensor back to the input's grid (multilinear). The quadrature filters then see a
  /// twice coarser scale, at an eighth of the cost in 3D.
  int orientation_downsampling = 1;
  QuadratureDesign quadrature;
  ReconstructionDesign reconstruction;
  /// Gaussian smoothing of the structure tensor's components, in voxels; 0 = none.
  double relaxation_sigma = 1.0;
  TensorNormalisation normalisation = TensorNormalisation::LargestEigenvalue;
  /// The scale the structure tensor is divided by (its largest eigenvalue or norm, as
  /// `normalisation` says); empty: the largest over the volume (each frame's own with
  /// time_as_axis false), computed. A block of a larger image takes the image's (ndconv.dask:
  /// adaptive_normalisation_scales of every block, their largest), so that its outputs are the
  /// whole image's. 0 (an image without structure): every voxel's magnitude gain is 0, as when
  /// the largest computed is 0.
  std::optional<double> normalisation_scale;
  /// Where the largest is taken when normalisation_scale is empty: the voxels of the box
  /// [normalisation_start, normalisation_start + normalisation_extent) (each frame's, with
  /// time_as_axis false); an extent of 0 along an axis: the whole axis. Every voxel is filtered;
  /// the box only says whose magnitudes count. Needs orientation_downsampling 1 unless it is the
  /// whole volume.
  Index normalisation_start{0, 0, 0, 0};
  Index normalisation_extent{0, 0, 0, 0};
  /// Magnitude mapping of the normalised tensor's largest eigenvalue x:
  /// gamma = x^beta / (x^beta + sigma^beta): ~0 in flat regions, ~1 at structure.
  double magnitude_sigma = 0.3;
  double magnitude_beta = 2.0;
  /// Eigenvalue mapping of r = lambda_i / lambda_1:
  /// mu(r) = (r (1 - alpha))^beta / ((r (1 - alpha))^beta + (alpha (1 - r))^beta), mu(1) = 1.
  double eigen_alpha = 0.5;
  double eigen_beta = 2.0;
  /// out = (1 - blend) * adaptive + blend * input.
  double blend = 0.0;
};

/// The parameter sets a user picks by name.
enum class AdaptivePreset {
  Default,  ///< AdaptiveParameters' defaults
  /// Ultrasound speckle (echocardiography): a wider lowpass (sigma 2) and relaxation (2), a
  /// stronger preference for the dominant orientation (alpha 0.2), 9-tap reconstruction filters.
  Echo,
};

/// The parameters of `preset`.
AdaptiveParameters adaptive_preset(AdaptivePreset preset);

/// "default" or "echo"; throws InvalidArgument naming the presets.
AdaptivePreset parse_adaptive_preset(const std::string& name);

/// The ranges of the parameters a user sets, inclusive; adaptive_filter refuses values outside
/// them (and NaN) with validate_adaptive_parameters, before any work.
struct AdaptiveRange {
  double min, max;
};
inline constexpr AdaptiveRange kSmoothingRange{0.1, 10.0};    ///< reconstruction.lowpass_sigma
inline constexpr AdaptiveRange kRelaxationRange{0.0, 10.0};   ///< relaxation_sigma (0: none)
inline constexpr AdaptiveRange kThresholdRange{0.001, 10.0};  ///< magnitude_sigma
inline constexpr AdaptiveRange kAnisotropyRange{0.01, 0.99};  ///< eigen_alpha
inline constexpr AdaptiveRange kBlendRange{0.0, 1.0};         ///< blend
inline constexpr AdaptiveRange kFilterSizeRange{3.0, 15.0};   ///< odd taps per axis of each bank

/// Throws InvalidArgument naming the first parameter that is not finite, outside its range, or
/// (filter sizes) even.
void validate_adaptive_parameters(const AdaptiveParameters& parameters);

/// Float32 volumes of the input's size that adaptive_filter holds at its peak on the host besides
/// its input and output, for a memory check before the work. On the CPU at full resolution the
/// stages run in slabs along z: the structure tensor's d(d + 1) / 2 components are kept for the
/// whole image, one of them in the output's buffer, besides one slab's buffers (about 96 MiB);
/// with the coarse orientation estimate or a periodic `boundary` the tensor and the relaxation's
/// three volumes (frame by frame, with time_as_axis false, a 4D series holds one frame's share of
/// those). On the GPU the tensor stays on the device: pass `on_gpu` for the host's share then (the
/// staged input and output).
double adaptive_working_volumes(int dims, const Index& extent, const AdaptiveParameters& parameters,
                                bool on_gpu = false, Boundary boundary = Boundary::Replicate);

/// The estimated seconds of adaptive_filter on the CPU with `threads` threads (0: every hardware
/// thread), the filter design excepted: each stage by the engine's CPU cost model.
double adaptive_estimated_cpu_seconds(int dims, const Index& extent,
                                      const AdaptiveParameters& parameters, int threads = 0);

/// Seconds per stage, in order, for --verbose.
struct AdaptiveReport {
  std::vector<std::pair<std::string, double>> stage_seconds;
  RunReport bank;  ///< the report of the last filter bank run (the reconstruction's)
  /// The quadrature bank's last run, with seconds_compute summed over its slabs.
  RunReport quadrature_bank;
  /// The scale the structure tensor was divided by (AdaptiveParameters::normalisation_scale, or
  /// the largest computed): one per frame with time_as_axis false on a 4D series, else one.
  std::vector<double> normalisation_scales;
  double seconds_total = 0;
};

/// The stages, exposed for tests and tools. Tensor volumes hold d(d+1)/2 components in the
/// order (0,0), (0,1), ..., (0,d-1), (1,1), ..., (d-1,d-1), each a contiguous volume of the
/// input's extents.
std::vector<std::vector<float>> structure_tensor(const ConstVolumeView& input,
                                                 const std::vector<DesignedFilter>& quadrature,
                                                 const Options& options,
                                                 RunReport* report = nullptr);
/// The input lowpass filtered (Gaussian, sigma 1 voxel) and subsampled by 2 along the spatial
/// axes (every axis but t in 4D); `coarse_extent` receives its extents ((n + 1) / 2).
std::vector<float> downsample_for_orientation(const ConstVolumeView& input, const Options& options,
                                              Index& coarse_extent);
/// Each component (contiguous, `coarse` extents) interpolated multilinearly onto the `fine` grid
/// (fine voxel i lies at coarse position i / 2 along the subsampled axes), in place.
void upsample_tensor(std::vector<std::vector<float>>& tensor, int dims, const Index& coarse,
                     const Index& fine, int threads = 0);
/// Gaussian relaxation of each component in place (the separable engine path).
void relax_tensor(std::vector<std::vector<float>>& tensor, int dims, const Index& extent,
                  double sigma, const Options& options);
/// Structure tensor to control tensor, in place. `progress` (may be empty) follows the work from
/// 0 to 1 as Options::progress does; false stops it with Aborted.
void control_tensor(std::vector<std::vector<float>>& tensor, int dims,
                    const AdaptiveParameters& parameters, int threads = 0,
                    const std::function<bool(double)>& progress = {});
/// out = LP * f + sum_k <C, M_k> (HP_k * f), blended with the input.
RunReport reconstruct(const ConstVolumeView& input, const std::vector<std::vector<float>>& control,
                      const std::vector<DesignedFilter>& reconstruction, double blend,
                      const VolumeView& output, const Options& options);

/// The whole adaptive filter; `output` has the input's extents (region `same`; options.region
/// and options.operation are ignored). 2D, 3D and 4D.
AdaptiveReport adaptive_filter(const ConstVolumeView& input, const VolumeView& output,
                               const AdaptiveParameters& parameters = {},
                               const Options& options = {});

/// How far the adaptive filter reads around a voxel along each filtered axis (with the orientation
/// at full resolution): its relaxed structure tensor reads the quadrature filters' radius plus
/// the relaxation's; an output reads that tensor at its own voxel and the input within the
/// reconstruction filters' radius. A block read with `output` more voxels on each side (the
/// image's boundary beyond its edges) has the whole image's outputs, and its structure tensor,
/// read with `structure_tensor` more, the whole image's magnitudes.
struct AdaptiveReach {
  int64_t structure_tensor = 0;
  int64_t output = 0;
};
AdaptiveReach adaptive_reach(const AdaptiveParameters& parameters);

/// The scales adaptive_filter with these arguments divides the structure tensor by (its
/// report's normalisation_scales), from the stages up to the control tensor's first pass only:
/// without parameters.normalisation_scale, the largest magnitude over the normalisation box. The
/// largest over several blocks' boxes that tile an image, each block read with the halo its
/// structure tensor needs, is the whole image's bit for bit (a maximum of the same per-voxel
/// values; ndconv.dask's first pass).
std::vector<double> adaptive_normalisation_scales(const ConstVolumeView& input,
                                                  const AdaptiveParameters& parameters = {},
                                                  const Options& options = {});

}  // namespace ndconv
