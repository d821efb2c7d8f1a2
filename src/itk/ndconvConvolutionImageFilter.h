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
 public:
  ITK_DISALLOW_COPY_AND_MOVE(ConvolutionImageFilter);

  using Self = ConvolutionImageFilter;
  using Superclass =
      EngineImageFilter<itk::ConvolutionImageFilterBase<TInputImage, TKernelImage, TOutputImage>>;
  using Pointer = itk::SmartPointer<Self>;
  using ConstPointer = itk::SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(ConvolutionImageFilter, ConvolutionImageFilterBase);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension >= 2 && ImageDimension <= 4,
                "ndconv::ConvolutionImageFilter filters 2D, 3D and 4D images");
  static_assert(TKernelImage::ImageDimension == ImageDimension &&
                    TOutputImage::ImageDimension == ImageDimension,
                "the kernel and output images must have the input's dimension");
  static_assert(std::is_arithmetic_v<typename TInputImage::PixelType> &&
                    std::is_arithmetic_v<typename TKernelImage::PixelType> &&
                    std::is_arithmetic_v<typename TOutputImage::PixelType>,
                "ndconv::ConvolutionImageFilter filters images of scalar pixel types");

  using typename Superclass::InputImageType;
  using typename Superclass::InputRegionType;
  using typename Superclass::KernelImageType;
  using typename Superclass::KernelSizeType;
  using typename Superclass::OutputImageType;
  using typename Superclass::OutputRegionType;

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
