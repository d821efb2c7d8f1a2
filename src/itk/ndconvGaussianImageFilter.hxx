// ndconv::GaussianImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvGaussianImageFilter_hxx
#define ndconvGaussianImageFilter_hxx

#include <type_traits>
#include <vector>

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
  os << indent << "UseGPU: " << m_UseGPU << std::endl;
  os << indent << "DeviceIndex: " << m_DeviceIndex << std::endl;
  os << indent << "OutputsPerThread: " << m_OutputsPerThread << std::endl;
  os << indent << "GPUUsed: " << m_GPUUsed << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
}

template <typename TInputImage, typename TOutputImage>
void GaussianImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  auto* input = const_cast<InputImageType*>(this->GetInput());
  if (!input)
    return;
  const SeparableFilter filter = this->MakeSeparableFilter(input);
  InputRegionType region = this->GetOutput()->GetRequestedRegion();
  typename InputImageType::SizeType radius;
  for (unsigned int a = 0; a < ImageDimension; ++a)
    radius[a] = filter.taps[a].size() / 2;
  region.PadByRadius(radius);
  if (!region.Crop(input->GetLargestPossibleRegion())) {
    itk::InvalidRequestedRegionError e(__FILE__, __LINE__);
    e.SetLocation(ITK_LOCATION);
    e.SetDescription(
        "ndconv::GaussianImageFilter: the requested region is (at least partially) outside the "
        "largest possible region");
    e.SetDataObject(input);
    throw e;
  }
  input->SetRequestedRegion(region);
}

template <typename TInputImage, typename TOutputImage>
void GaussianImageFilter<TInputImage, TOutputImage>::GenerateData() {
  constexpr int dims = static_cast<int>(ImageDimension);
  this->AllocateOutputs();
  this->UpdateProgress(0.0f);

  const InputImageType* input = this->GetInput();
  OutputImageType* output = this->GetOutput();
  const OutputRegionType region = output->GetRequestedRegion();
  if (region.GetNumberOfPixels() == 0)
    return;

  const itk_bridge::BoundarySpec boundary =
      itk_bridge::DescribeBoundary<TInputImage>(m_BoundaryCondition, "ndconv::GaussianImageFilter");
  const SeparableFilter filter = this->MakeSeparableFilter(input);

  // Taps are odd-sized and symmetric: the footprint is the region padded by the radius.
  InputRegionType padded;
  Index padded_extent{1, 1, 1, 1}, out_extent{1, 1, 1, 1};
  for (unsigned int a = 0; a < ImageDimension; ++a) {
    const auto radius = static_cast<itk::IndexValueType>(filter.taps[a].size() / 2);
    padded.SetIndex(a, region.GetIndex(a) - radius);
    padded.SetSize(a, region.GetSize(a) + static_cast<itk::SizeValueType>(2 * radius));
    padded_extent[a] = static_cast<int64_t>(padded.GetSize(a));
    out_extent[a] = static_cast<int64_t>(region.GetSize(a));
  }
  std::vector<float> in_buffer;
  itk_bridge::CopyPaddedRegion(input, padded, boundary, in_buffer);
  itk_bridge::CheckAbort(this);
  this->UpdateProgress(0.05f);

  const ConstVolumeView in_view =
      make_view(static_cast<const float*>(in_buffer.data()), dims, padded_extent);
  const Options options = itk_bridge::MakeOptions(m_UseGPU, m_DeviceIndex, m_OutputsPerThread,
                                                  itk_bridge::CpuThreads(this));
  RunReport report;
  if constexpr (std::is_same_v<typename OutputImageType::PixelType, float>) {
    const VolumeView out_view = itk_bridge::ViewOfRegion(output, region);
    report = itk_bridge::RunEngine(this, options, 0.05f, 1.0f, [&](const Options& o) {
      return filter_separable(in_view, filter, out_view, o);
    });
  } else {
    std::vector<float> out_buffer(region.GetNumberOfPixels());
    const VolumeView out_view = make_view(out_buffer.data(), dims, out_extent);
    report = itk_bridge::RunEngine(this, options, 0.05f, 0.95f, [&](const Options& o) {
      return filter_separable(in_view, filter, out_view, o);
    });
    itk_bridge::WriteRegion(out_buffer, output, region);
  }
  m_GPUUsed = report.backend == Backend::Cuda;
  m_BackendDescription = itk_bridge::DescribeRun(report);
  this->UpdateProgress(1.0f);
}

}  // namespace ndconv

#endif
