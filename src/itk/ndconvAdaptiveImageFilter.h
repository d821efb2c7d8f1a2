// ndconv::AdaptiveImageFilter: orientation-adaptive denoising (ndconv::adaptive_filter, see
// docs/adaptive.md) as an ITK filter.
#ifndef ndconvAdaptiveImageFilter_h
#define ndconvAdaptiveImageFilter_h

#include "itkImageToImageFilter.h"

#include "ndconv/adaptive.h"
#include "ndconvEngineImageFilter.h"

/** SetName(value) and GetName() for one field of m_Parameters; Set always marks the filter
 * modified. */
#define ndconvAdaptiveParameterMacro(name, field, type) \
  void Set##name(type value) {                          \
    m_Parameters.field = value;                         \
    this->Modified();                                   \
  }                                                     \
  type Get##name() const {                              \
    return m_Parameters.field;                          \
  }

namespace ndconv {

/** \class AdaptiveImageFilter
 * \brief Orientation-adaptive filtering (Knutsson, Westin and Granlund): smooths flat regions
 * and along structures, keeps edges.
 *
 * A quadrature filter bank estimates the local structure tensor, which is relaxed (Gaussian
 * smoothing), normalised by its largest value in the image and mapped to a control tensor C; the
 * output is LP * f + sum_k <C, M_k> (HP_k * f) with a lowpass and d(d+1)/2 directional highpass
 * filters. Parameters are those of ndconv::AdaptiveParameters (SetParameters), with setters for
 * the common ones. Boundary: replicate (zero-flux Neumann) outside the image.
 *
 * The normalisation is global, so the filter always computes the whole image (it requests the
 * largest possible region and does not stream). A 4D image is filtered in true 4D unless
 * TimeAsAxis is off (then each 3D frame on its own).
 *
 * Settings from ndconv::EngineImageFilter: UseGPU, DeviceIndex, OutputsPerThread (the filter
 * bank's outputs along the last axis: 0 = automatic, 1, 2 or 4 on the CPU, 1 or 2 on the GPU).
 *
 * \ingroup ndconv
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT AdaptiveImageFilter
    : public EngineImageToImageFilter<TInputImage, TOutputImage> {
  ndconvFilterMacro(AdaptiveImageFilter, EngineImageToImageFilter<TInputImage, TOutputImage>);

  /** Every parameter at once (ndconv::AdaptiveParameters and its defaults). */
  void SetParameters(const AdaptiveParameters& parameters) {
    m_Parameters = parameters;
    this->Modified();
  }
  const AdaptiveParameters& GetParameters() const { return m_Parameters; }

  /** Every parameter from a named set (ndconv::adaptive_preset): AdaptivePreset::Echo for
   * echocardiography, as `ndconv adaptive --preset echo`. Setters called later change single
   * parameters over it. */
  void SetPreset(AdaptivePreset preset) { SetParameters(adaptive_preset(preset)); }

  /** Sigma in voxels of the smoothing in flat regions (the lowpass filter; default 1.5). */
  ndconvAdaptiveParameterMacro(Smoothing, reconstruction.lowpass_sigma, double);
  /** Sigma in voxels of the structure tensor's relaxation (default 1; 0 = none). */
  ndconvAdaptiveParameterMacro(Relaxation, relaxation_sigma, double);
  /** Structure threshold relative to the strongest structure (magnitude sigma; default 0.3). */
  ndconvAdaptiveParameterMacro(Threshold, magnitude_sigma, double);
  /** Weight of the input in the output, 0 to 1 (default 0). */
  ndconvAdaptiveParameterMacro(Blend, blend, double);
  /** 4D: true 4D filtering (on, the default) or each 3D frame alone (off). */
  ndconvAdaptiveParameterMacro(TimeAsAxis, time_as_axis, bool);

  /** Seconds per stage of the last Update. */
  const std::vector<std::pair<std::string, double>>& GetStageSeconds() const {
    return m_StageSeconds;
  }

 protected:
  AdaptiveImageFilter() = default;
  ~AdaptiveImageFilter() override = default;

  void PrintSelf(std::ostream& os, itk::Indent indent) const override;

  /** The whole image: the normalisation of the structure tensor is global. */
  void EnlargeOutputRequestedRegion(itk::DataObject* output) override;
  void GenerateInputRequestedRegion() override;

  void GenerateData() override;

 private:
  AdaptiveParameters m_Parameters;
  std::vector<std::pair<std::string, double>> m_StageSeconds;
};

}  // namespace ndconv

#undef ndconvAdaptiveParameterMacro

#ifndef ITK_MANUAL_INSTANTIATION
#include "ndconvAdaptiveImageFilter.hxx"
#endif

#endif
