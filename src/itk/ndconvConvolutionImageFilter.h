// ndconv::ConvolutionImageFilter: a drop-in replacement for itk::ConvolutionImageFilter that runs
// on the GPU (or on ndconv's multi-threaded CPU backend when no GPU is usable).
//
// It derives from itk::ConvolutionImageFilterBase, so it has exactly ITK's API (kernel image,
// Normalize, boundary condition, output region mode) and ITK's output geometry for `valid`. Each
// Update (each streamed piece) makes one engine call: one upload and one download for an image
// that fits on the GPU. See ndconvImageFilterBridge.h for how pieces stay exact.
#ifndef ndconvConvolutionImageFilter_h
#define ndconvConvolutionImageFilter_h

#include <type_traits>

#include "itkConvolutionImageFilterBase.h"
#include "ndconvEngineImageFilter.h"

namespace ndconv {

/** \class ConvolutionImageFilter
 * \brief Convolves an image with a kernel image on the GPU, matching itk::ConvolutionImageFilter.
 *
 * Computes out(i) = sum_j k(j) in(i - j + c) with c = size / 2 per axis (the kernel is flipped,
 * as in itk::ConvolutionImageFilter, also for even kernel sizes), in float32 arithmetic, for 2-,
 * 3- and 4-dimensional images of any scalar pixel type. The kernel's spacing, origin and
 * direction are ignored. Supported boundary conditions: itk::ZeroFluxNeumannBoundaryCondition
 * (the default), itk::ConstantBoundaryCondition and itk::PeriodicBoundaryCondition; others make
 * Update() throw. Kernel sizes are limited to 31 per axis (15 for 4D images).
 *
 * Settings beyond ITK's (from ndconv::EngineImageFilter): UseGPU (on by default; without a usable
 * GPU the filter runs on the CPU and GetGPUUsed() says false), DeviceIndex and OutputsPerThread (0
 * = automatic). After an Update, GetBackendDescription() says what ran and why.
 *
 * The filter streams: under itk::StreamingImageFilter each piece reads its real neighbours from
 * the input and gives exactly the pixels of a single-piece run.
 *
 * \ingroup ndconv
 */
template <typename TInputImage, typename TKernelImage = TInputImage,
          typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT ConvolutionImageFilter
    : public EngineImageFilter<
          itk::ConvolutionImageFilterBase<TInputImage, TKernelImage, TOutputImage>> {
  ndconvFilterMacro(
      ConvolutionImageFilter,
      EngineImageFilter<itk::ConvolutionImageFilterBase<TInputImage, TKernelImage, TOutputImage>>);

  // The input's and output's dimension and pixel types are checked by EngineImageFilter.
  static_assert(TKernelImage::ImageDimension == ImageDimension,
                "the kernel image must have the input's dimension");
  static_assert(std::is_arithmetic_v<typename TKernelImage::PixelType>,
                "ndconv::ConvolutionImageFilter takes a kernel image of a scalar pixel type");

  using typename Superclass::KernelImageType;
  using typename Superclass::KernelSizeType;

 protected:
  ConvolutionImageFilter() = default;
  ~ConvolutionImageFilter() override = default;

  /** Pads the output requested region by the kernel radius, cropped to the largest possible
   * region, as itk::ConvolutionImageFilter does; requests the whole kernel. */
  void GenerateInputRequestedRegion() override;

  /** One engine call for the output requested region. */
  void GenerateData() override;
};

}  // namespace ndconv

#ifndef ITK_MANUAL_INSTANTIATION
#include "ndconvConvolutionImageFilter.hxx"
#endif

#endif
