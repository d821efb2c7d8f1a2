// ndconv::ConvolutionImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvConvolutionImageFilter_hxx
#define ndconvConvolutionImageFilter_hxx

#include <cmath>
#include <type_traits>
#include <vector>

#include "itkImageRegionConstIterator.h"
#include "ndconvConvolutionImageFilter.h"
#include "ndconvImageFilterBridge.h"

namespace ndconv {

template <typename TInputImage, typename TKernelImage, typename TOutputImage>
void ConvolutionImageFilter<TInputImage, TKernelImage, TOutputImage>::PrintSelf(
    std::ostream& os, itk::Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "UseGPU: " << m_UseGPU << std::endl;
  os << indent << "DeviceIndex: " << m_DeviceIndex << std::endl;
  os << indent << "OutputsPerThread: " << m_OutputsPerThread << std::endl;
  os << indent << "GPUUsed: " << m_GPUUsed << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
}

template <typename TInputImage, typename TKernelImage, typename TOutputImage>
void ConvolutionImageFilter<TInputImage, TKernelImage,
                            TOutputImage>::GenerateInputRequestedRegion() {
  // Deliberately not the superclass's version, which would ask the kernel for the output's
  // region: this is itk::ConvolutionImageFilter's rule.
  if (this->GetInput() && this->GetKernelImage()) {
    InputRegionType region = this->GetOutput()->GetRequestedRegion();
    KernelSizeType radius;
    const auto kernel_size = this->GetKernelImage()->GetLargestPossibleRegion().GetSize();
    for (unsigned int a = 0; a < ImageDimension; ++a)
      radius[a] = kernel_size[a] / 2;
    region.PadByRadius(radius);

    auto* input = const_cast<InputImageType*>(this->GetInput());
    if (!region.Crop(input->GetLargestPossibleRegion())) {
      itk::InvalidRequestedRegionError e(__FILE__, __LINE__);
      e.SetLocation(ITK_LOCATION);
      e.SetDescription(
          "ndconv::ConvolutionImageFilter: the requested region is (at least partially) "
          "outside the largest possible region");
      e.SetDataObject(input);
      throw e;
    }
    input->SetRequestedRegion(region);
  }
  if (this->GetKernelImage()) {
    auto* kernel = const_cast<KernelImageType*>(this->GetKernelImage());
    kernel->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TKernelImage, typename TOutputImage>
void ConvolutionImageFilter<TInputImage, TKernelImage, TOutputImage>::GenerateData() {
  constexpr int dims = static_cast<int>(ImageDimension);
  this->AllocateOutputs();
  this->UpdateProgress(0.0f);

  const InputImageType* input = this->GetInput();
  const KernelImageType* kernel = this->GetKernelImage();
  OutputImageType* output = this->GetOutput();
  const OutputRegionType region = output->GetRequestedRegion();
  if (region.GetNumberOfPixels() == 0)
    return;

  const itk_bridge::BoundarySpec boundary = itk_bridge::DescribeBoundary<TInputImage>(
      this->GetBoundaryCondition(), "ndconv::ConvolutionImageFilter");

  // The kernel's taps, x fastest (ITK's iteration order), normalised in double precision.
  const auto kernel_region = kernel->GetLargestPossibleRegion();
  if (!kernel->GetBufferedRegion().IsInside(kernel_region)) {
    itkExceptionMacro(<< "the kernel image's buffered region does not cover its largest "
                         "possible region; update the kernel first");
  }
  std::vector<double> kernel_values;
  kernel_values.reserve(kernel_region.GetNumberOfPixels());
  double sum = 0.0;
  for (itk::ImageRegionConstIterator<KernelImageType> it(kernel, kernel_region); !it.IsAtEnd();
       ++it) {
    kernel_values.push_back(static_cast<double>(it.Get()));
    sum += kernel_values.back();
  }
  if (this->GetNormalize() && !(std::isfinite(sum) && sum != 0.0)) {
    itkExceptionMacro(<< "cannot normalize: the kernel's sum is " << sum);
  }
  std::vector<float> taps(kernel_values.size());
  for (std::size_t i = 0; i < taps.size(); ++i)
    taps[i] = static_cast<float>(this->GetNormalize() ? kernel_values[i] / sum : kernel_values[i]);

  DenseFilter filter;
  filter.dims = dims;
  filter.taps = taps.data();

  // The input footprint of the requested output: out(i) reads in(i - j + c) for j in [0, k),
  // so it spans [i - (k - 1 - c), i + c] with c = k / 2.
  InputRegionType padded;
  Index padded_extent{1, 1, 1, 1}, out_extent{1, 1, 1, 1};
  for (unsigned int a = 0; a < ImageDimension; ++a) {
    const auto k = static_cast<itk::IndexValueType>(kernel_region.GetSize(a));
    filter.extent[a] = k;
    padded.SetIndex(a, region.GetIndex(a) - (k - 1 - k / 2));
    padded.SetSize(a, region.GetSize(a) + static_cast<itk::SizeValueType>(k - 1));
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
      return filter_dense(in_view, filter, out_view, o);
    });
  } else {
    std::vector<float> out_buffer(region.GetNumberOfPixels());
    const VolumeView out_view = make_view(out_buffer.data(), dims, out_extent);
    report = itk_bridge::RunEngine(this, options, 0.05f, 0.95f, [&](const Options& o) {
      return filter_dense(in_view, filter, out_view, o);
    });
    itk_bridge::WriteRegion(out_buffer, output, region);
  }
  m_GPUUsed = report.backend == Backend::Cuda;
  m_BackendDescription = itk_bridge::DescribeRun(report);
  this->UpdateProgress(1.0f);
}

}  // namespace ndconv

#endif
