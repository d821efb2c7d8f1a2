// ndconv::ConvolutionImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvConvolutionImageFilter_hxx
#define ndconvConvolutionImageFilter_hxx

#include <cmath>
#include <vector>

#include "itkImageRegionConstIterator.h"
#include "ndconvConvolutionImageFilter.h"
#include "ndconvImageFilterBridge.h"

namespace ndconv {

template <typename TInputImage, typename TKernelImage, typename TOutputImage>
void ConvolutionImageFilter<TInputImage, TKernelImage,
                            TOutputImage>::GenerateInputRequestedRegion() {
  // Deliberately not the superclass's version, which would ask the kernel for the output's
  // region: this is itk::ConvolutionImageFilter's rule.
  if (this->GetInput() && this->GetKernelImage()) {
    KernelSizeType radius;
    const auto kernel_size = this->GetKernelImage()->GetLargestPossibleRegion().GetSize();
    for (unsigned int a = 0; a < ImageDimension; ++a)
      radius[a] = kernel_size[a] / 2;
    this->RequestPaddedInputRegion(radius);
  }
  if (this->GetKernelImage()) {
    auto* kernel = const_cast<KernelImageType*>(this->GetKernelImage());
    kernel->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TKernelImage, typename TOutputImage>
void ConvolutionImageFilter<TInputImage, TKernelImage, TOutputImage>::GenerateData() {
  constexpr int dims = static_cast<int>(ImageDimension);
  if (!this->AllocateRequestedOutput())
    return;
  const KernelImageType* kernel = this->GetKernelImage();
  const OutputRegionType region = this->GetOutput()->GetRequestedRegion();

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
  for (unsigned int a = 0; a < ImageDimension; ++a) {
    const auto k = static_cast<itk::IndexValueType>(kernel_region.GetSize(a));
    filter.extent[a] = k;
    padded.SetIndex(a, region.GetIndex(a) - (k - 1 - k / 2));
    padded.SetSize(a, region.GetSize(a) + static_cast<itk::SizeValueType>(k - 1));
  }
  this->RunEngineOnPaddedInput(
      padded, boundary, [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
        return filter_dense(in, filter, out, o);
      });
}

}  // namespace ndconv

#endif
