// ndconv::GaussianImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvGaussianImageFilter_hxx
#define ndconvGaussianImageFilter_hxx

#include "ndconv/gaussian.h"
#include "ndconvGaussianImageFilter.h"
#include "ndconvImageFilterBridge.h"

namespace ndconv {

template <typename TInputImage, typename TOutputImage>
GaussianImageFilter<TInputImage, TOutputImage>::GaussianImageFilter() {
  m_SigmaArray.Fill(1.0);
  m_BoundaryCondition = &m_DefaultBoundaryCondition;
}

template <typename TInputImage, typename TOutputImage>
SeparableFilter GaussianImageFilter<TInputImage, TOutputImage>::MakeSeparableFilter(
    const InputImageType* image) const {
  std::array<double, kMaxDims> sigma_voxels{0.0, 0.0, 0.0, 0.0};
  for (unsigned int a = 0; a < ImageDimension; ++a) {
    if (m_SigmaArray[a] < 0.0)
      itkExceptionMacro(<< "sigma along axis " << a << " is negative (" << m_SigmaArray[a] << ")");
    sigma_voxels[a] =
        m_UseImageSpacing ? m_SigmaArray[a] / image->GetSpacing()[a] : m_SigmaArray[a];
  }
  try {
    return gaussian_filter(static_cast<int>(ImageDimension), sigma_voxels, m_Truncate);
  } catch (const std::exception& error) {
    itkExceptionMacro(<< error.what());
  }
}

template <typename TInputImage, typename TOutputImage>
void GaussianImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream& os,
                                                               itk::Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "SigmaArray: " << m_SigmaArray << std::endl;
  os << indent << "UseImageSpacing: " << m_UseImageSpacing << std::endl;
  os << indent << "Truncate: " << m_Truncate << std::endl;
  os << indent << "BoundaryCondition: " << m_BoundaryCondition->GetNameOfClass() << std::endl;
}

template <typename TInputImage, typename TOutputImage>
void GaussianImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  auto* input = const_cast<InputImageType*>(this->GetInput());
  if (!input)
    return;
  const SeparableFilter filter = this->MakeSeparableFilter(input);
  typename InputImageType::SizeType radius;
  for (unsigned int a = 0; a < ImageDimension; ++a)
    radius[a] = filter.taps[a].size() / 2;
  this->RequestPaddedInputRegion(radius);
}

template <typename TInputImage, typename TOutputImage>
void GaussianImageFilter<TInputImage, TOutputImage>::GenerateData() {
  if (!this->AllocateRequestedOutput())
    return;
  const OutputRegionType region = this->GetOutput()->GetRequestedRegion();
  const itk_bridge::BoundarySpec boundary =
      itk_bridge::DescribeBoundary<TInputImage>(m_BoundaryCondition, "ndconv::GaussianImageFilter");
  const SeparableFilter filter = this->MakeSeparableFilter(this->GetInput());

  // Taps are odd-sized and symmetric: the footprint is the region padded by the radius.
  InputRegionType padded;
  for (unsigned int a = 0; a < ImageDimension; ++a) {
    const auto radius = static_cast<itk::IndexValueType>(filter.taps[a].size() / 2);
    padded.SetIndex(a, region.GetIndex(a) - radius);
    padded.SetSize(a, region.GetSize(a) + static_cast<itk::SizeValueType>(2 * radius));
  }
  this->RunEngineOnPaddedInput(
      padded, boundary, [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_separable(in, filter, out, o);
      });
}

}  // namespace ndconv

#endif
