// ndconv::GaussianImageFilter: Gaussian smoothing through the engine's separable path, with the
// same sampled taps as `ndconv smooth` (ndconv::gaussian_filter).
#ifndef ndconvGaussianImageFilter_h
#define ndconvGaussianImageFilter_h

#include "itkFixedArray.h"
#include "itkImageBoundaryCondition.h"
#include "itkImageToImageFilter.h"
#include "itkZeroFluxNeumannBoundaryCondition.h"

#include "ndconv/types.h"
#include "ndconvEngineImageFilter.h"

namespace ndconv {

/** \class GaussianImageFilter
 * \brief Smooths an image with a sampled Gaussian on the GPU (separable filtering).
 *
 * Along each axis the filter is the Gaussian of standard deviation sigma sampled at integer
 * offsets, truncated at Truncate standard deviations (radius round(Truncate * sigma), in voxels)
 * and normalised to sum 1, as scipy.ndimage.gaussian_filter. Sigma is given per axis
 * (SetSigmaArray) or for all axes (SetSigma), in physical units when UseImageSpacing is on (the
 * default) and in voxels otherwise; a sigma of 0 leaves that axis unfiltered. The boundary
 * condition is itk::ZeroFluxNeumannBoundaryCondition by default; itk::ConstantBoundaryCondition
 * and itk::PeriodicBoundaryCondition are supported too.
 *
 * Settings from ndconv::EngineImageFilter: UseGPU (on by default, falling back to the CPU; see
 * GetGPUUsed()), DeviceIndex, OutputsPerThread (0 = automatic). The filter streams exactly, as
 * ndconv::ConvolutionImageFilter.
 *
 * \ingroup ndconv
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT GaussianImageFilter
    : public EngineImageToImageFilter<TInputImage, TOutputImage> {
  ndconvFilterMacro(GaussianImageFilter, EngineImageToImageFilter<TInputImage, TOutputImage>);

  using SigmaArrayType = itk::FixedArray<double, ImageDimension>;
  using BoundaryConditionType = itk::ImageBoundaryCondition<TInputImage>;
  using BoundaryConditionPointerType = BoundaryConditionType*;
  using DefaultBoundaryConditionType = itk::ZeroFluxNeumannBoundaryCondition<TInputImage>;

  /** Standard deviation per axis (physical units, or voxels when UseImageSpacing is off). */
  itkSetMacro(SigmaArray, SigmaArrayType);
  itkGetConstMacro(SigmaArray, SigmaArrayType);
  /** The same standard deviation along every axis. */
  void SetSigma(double sigma) {
    SigmaArrayType s;
    s.Fill(sigma);
    this->SetSigmaArray(s);
  }

  /** Sigma in physical units (on, the default) or in voxels (off). */
  itkSetMacro(UseImageSpacing, bool);
  itkGetConstMacro(UseImageSpacing, bool);
  itkBooleanMacro(UseImageSpacing);

  /** Truncate the Gaussian at this many standard deviations (default 4). */
  itkSetMacro(Truncate, double);
  itkGetConstMacro(Truncate, double);

  /** The boundary condition (not owned); nullptr restores the default zero-flux Neumann. */
  void SetBoundaryCondition(BoundaryConditionPointerType condition) {
    BoundaryConditionPointerType c = condition ? condition : &m_DefaultBoundaryCondition;
    if (c != m_BoundaryCondition) {
      m_BoundaryCondition = c;
      this->Modified();
    }
  }
  itkGetConstMacro(BoundaryCondition, BoundaryConditionPointerType);

  /** The 1D filters the current settings give for `image` (its spacing matters). */
  SeparableFilter MakeSeparableFilter(const InputImageType* image) const;

 protected:
  GaussianImageFilter();
  ~GaussianImageFilter() override = default;

  void PrintSelf(std::ostream& os, itk::Indent indent) const override;

  /** Pads the output requested region by the Gaussian's radius, cropped to the largest
   * possible region. */
  void GenerateInputRequestedRegion() override;

  /** One engine call for the output requested region. */
  void GenerateData() override;

 private:
  SigmaArrayType m_SigmaArray;
  bool m_UseImageSpacing{true};
  double m_Truncate{4.0};
  DefaultBoundaryConditionType m_DefaultBoundaryCondition;
  BoundaryConditionPointerType m_BoundaryCondition;
};

}  // namespace ndconv

#ifndef ITK_MANUAL_INSTANTIATION
#include "ndconvGaussianImageFilter.hxx"
#endif

#endif
