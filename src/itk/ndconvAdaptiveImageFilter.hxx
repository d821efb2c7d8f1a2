// ndconv::AdaptiveImageFilter: implementation (included by the header unless
// ITK_MANUAL_INSTANTIATION is defined).
#ifndef ndconvAdaptiveImageFilter_hxx
#define ndconvAdaptiveImageFilter_hxx

#include "ndconvAdaptiveImageFilter.h"
#include "ndconvImageFilterBridge.h"

namespace ndconv {

template <typename TInputImage, typename TOutputImage>
void AdaptiveImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream& os,
                                                               itk::Indent indent) const {
  Superclass::PrintSelf(os, indent);
  const AdaptiveParameters& p = m_Parameters;
  os << indent << "TimeAsAxis: " << p.time_as_axis << std::endl;
  os << indent << "QuadratureSize: " << p.quadrature.size << std::endl;
  os << indent << "CentreFrequency: " << p.quadrature.centre_frequency << std::endl;
  os << indent << "BandwidthOctaves: " << p.quadrature.bandwidth_octaves << std::endl;
  os << indent << "ReconstructionSize: " << p.reconstruction.size << std::endl;
  os << indent << "Smoothing: " << p.reconstruction.lowpass_sigma << std::endl;
  os << indent << "Relaxation: " << p.relaxation_sigma << std::endl;
  os << indent << "Normalisation: "
     << (p.normalisation == TensorNormalisation::Norm ? "norm" : "largest eigenvalue") << std::endl;
  os << indent << "Threshold: " << p.magnitude_sigma << std::endl;
  os << indent << "MagnitudeBeta: " << p.magnitude_beta << std::endl;
  os << indent << "EigenAlpha: " << p.eigen_alpha << std::endl;
  os << indent << "EigenBeta: " << p.eigen_beta << std::endl;
  os << indent << "Blend: " << p.blend << std::endl;
}

template <typename TInputImage, typename TOutputImage>
void AdaptiveImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(
    itk::DataObject* output) {
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage, typename TOutputImage>
void AdaptiveImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion() {
  Superclass::GenerateInputRequestedRegion();
  if (auto* input = const_cast<InputImageType*>(this->GetInput()))
    input->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage, typename TOutputImage>
void AdaptiveImageFilter<TInputImage, TOutputImage>::GenerateData() {
  if (!this->AllocateRequestedOutput())
    return;
  // The input is the whole image: nothing lies outside it, the engine applies its own boundary.
  const InputRegionType whole = this->GetInput()->GetLargestPossibleRegion();
  itk_bridge::BoundarySpec boundary;
  this->RunEngineOnPaddedInput(
      whole, boundary, [&](const ConstVolumeView& in, const VolumeView& out, Options o) {
        o.boundary = Boundary::Replicate;
        o.region = OutputRegion::Same;
        try {
          const AdaptiveReport r = adaptive_filter(in, out, m_Parameters, o);
          m_StageSeconds = r.stage_seconds;
          RunReport report = r.bank;
          report.seconds_total = r.seconds_total;
          return report;
        } catch (const InvalidArgument& error) {
          itkExceptionMacro(<< error.what());
        }
      });
}

}  // namespace ndconv

#endif
