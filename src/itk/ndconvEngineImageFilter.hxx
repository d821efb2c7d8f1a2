// ndconv::EngineImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvEngineImageFilter_hxx
#define ndconvEngineImageFilter_hxx

#include <type_traits>
#include <vector>

#include "ndconvEngineImageFilter.h"
#include "ndconvImageFilterBridge.h"

namespace ndconv {

template <typename TParentImageFilter>
void EngineImageFilter<TParentImageFilter>::PrintSelf(std::ostream& os, itk::Indent indent) const {
  Superclass::PrintSelf(os, indent);
  os << indent << "UseGPU: " << m_UseGPU << std::endl;
  os << indent << "DeviceIndex: " << m_DeviceIndex << std::endl;
  os << indent << "OutputsPerThread: " << m_OutputsPerThread << std::endl;
  os << indent << "GPUUsed: " << m_GPUUsed << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
}

template <typename TParentImageFilter>
bool EngineImageFilter<TParentImageFilter>::AllocateRequestedOutput() {
  this->AllocateOutputs();
  this->UpdateProgress(0.0f);
  return this->GetOutput()->GetRequestedRegion().GetNumberOfPixels() != 0;
}

template <typename TParentImageFilter>
void EngineImageFilter<TParentImageFilter>::RequestPaddedInputRegion(
    const typename InputImageType::SizeType& radius) {
  auto* input = const_cast<InputImageType*>(this->GetInput());
  InputImageRegionType region = this->GetOutput()->GetRequestedRegion();
  region.PadByRadius(radius);
  if (!region.Crop(input->GetLargestPossibleRegion())) {
    itk::InvalidRequestedRegionError e(__FILE__, __LINE__);
    e.SetLocation(ITK_LOCATION);
    e.SetDescription(std::string("ndconv::") + this->GetNameOfClass() +
                     ": the requested region is (at least partially) outside the largest "
                     "possible region");
    e.SetDataObject(input);
    throw e;
  }
  input->SetRequestedRegion(region);
}

template <typename TParentImageFilter>
template <typename TEngineCall>
void EngineImageFilter<TParentImageFilter>::RunEngineOnPaddedInput(
    const InputImageRegionType& padded, const itk_bridge::BoundarySpec& boundary,
    TEngineCall&& engine_call) {
  constexpr int dims = static_cast<int>(OutputImageType::ImageDimension);
  OutputImageType* output = this->GetOutput();
  const OutputImageRegionType region = output->GetRequestedRegion();
  Index padded_extent{1, 1, 1, 1}, out_extent{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    padded_extent[a] = static_cast<int64_t>(padded.GetSize(a));
    out_extent[a] = static_cast<int64_t>(region.GetSize(a));
  }
  std::vector<float> in_buffer;
  itk_bridge::CopyPaddedRegion(this->GetInput(), padded, boundary, in_buffer);
  itk_bridge::CheckAbort(this);
  this->UpdateProgress(0.05f);

  const ConstVolumeView in_view =
      make_view(static_cast<const float*>(in_buffer.data()), dims, padded_extent);
  const Options options = itk_bridge::MakeOptions(m_UseGPU, m_DeviceIndex, m_OutputsPerThread,
                                                  itk_bridge::CpuThreads(this));
  RunReport report;
  if constexpr (std::is_same_v<typename OutputImageType::PixelType, float>) {
    // A float output is written in place, through a strided view of its requested region.
    const VolumeView out_view = itk_bridge::ViewOfRegion(output, region);
    report = itk_bridge::RunEngine(this, options, 0.05f, 1.0f, [&](const Options& o) {
      return engine_call(in_view, out_view, o);
    });
  } else {
    std::vector<float> out_buffer(region.GetNumberOfPixels());
    const VolumeView out_view = make_view(out_buffer.data(), dims, out_extent);
    report = itk_bridge::RunEngine(this, options, 0.05f, 0.95f, [&](const Options& o) {
      return engine_call(in_view, out_view, o);
    });
    itk_bridge::WriteRegion(out_buffer, output, region);
  }
  m_GPUUsed = report.backend == Backend::Cuda;
  m_BackendDescription = itk_bridge::DescribeRun(report);
  this->UpdateProgress(1.0f);
}

}  // namespace ndconv

#endif
