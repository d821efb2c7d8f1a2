// ndconv::EngineImageFilter: what ndconv's ITK filters share on top of the ITK filter whose API
// they keep: the image types they accept, the engine settings (UseGPU, DeviceIndex,
// OutputsPerThread), what the last Update ran on (GPUUsed, BackendDescription), the input
// requested region padded by the filter's footprint, and the one engine call per Update.
//
// Design: a class template over the parent filter, like ITK's own itk::GPUImageToImageFilter, so
// that ndconv::ConvolutionImageFilter stays an itk::ConvolutionImageFilterBase and
// ndconv::GaussianImageFilter an itk::ImageToImageFilter. Each filter computes only what is its
// own (its taps and its footprint) and hands the rest to RunEngineOnPaddedInput().
#ifndef ndconvEngineImageFilter_h
#define ndconvEngineImageFilter_h

#include <string>
#include <type_traits>

#include "ndconvImageFilterBridge.h"

/** Opens the public section of an ndconv ITK filter with the declarations every one makes: ITK's
 * Self, Superclass, Pointer, ConstPointer, New() and GetNameOfClass(), and the image dimension and
 * types of ndconv::EngineImageFilter. The superclass is the last argument because its template
 * arguments hold commas. */
#define ndconvFilterMacro(thisClass, ...)                       \
 public:                                                        \
  ITK_DISALLOW_COPY_AND_MOVE(thisClass);                        \
  using Self = thisClass;                                       \
  using Superclass = __VA_ARGS__;                               \
  using Pointer = itk::SmartPointer<Self>;                      \
  using ConstPointer = itk::SmartPointer<const Self>;           \
  itkNewMacro(Self);                                            \
  itkTypeMacro(thisClass, Superclass);                          \
  using Superclass::ImageDimension;                             \
  using InputImageType = typename Superclass::InputImageType;   \
  using OutputImageType = typename Superclass::OutputImageType; \
  using InputRegionType = typename Superclass::InputRegionType; \
  using OutputRegionType = typename Superclass::OutputRegionType

namespace ndconv {

/** \class EngineImageFilter
 * \brief Base of ndconv's ITK filters: the engine settings and one engine call per Update.
 *
 * TParentImageFilter is the ITK filter whose API the ndconv filter keeps; its images are 2D, 3D
 * or 4D, of one dimension, with scalar pixels. Without a usable GPU (or with UseGPU off) the
 * engine runs on its multi-threaded CPU backend and GetGPUUsed() says false;
 * GetBackendDescription() says what ran and why.
 *
 * \ingroup ndconv
 */
template <typename TParentImageFilter>
class ITK_TEMPLATE_EXPORT EngineImageFilter : public TParentImageFilter {
 public:
  ITK_DISALLOW_COPY_AND_MOVE(EngineImageFilter);

  using Self = EngineImageFilter;
  using Superclass = TParentImageFilter;
  using Pointer = itk::SmartPointer<Self>;
  using ConstPointer = itk::SmartPointer<const Self>;

  itkTypeMacro(EngineImageFilter, TParentImageFilter);

  using typename Superclass::InputImageRegionType;
  using typename Superclass::InputImageType;
  using typename Superclass::OutputImageRegionType;
  using typename Superclass::OutputImageType;
  using InputRegionType = InputImageRegionType;
  using OutputRegionType = OutputImageRegionType;

  static constexpr unsigned int ImageDimension = InputImageType::ImageDimension;
  static_assert(ImageDimension >= 2 && ImageDimension <= 4,
                "ndconv's ITK filters take 2D, 3D and 4D images");
  static_assert(OutputImageType::ImageDimension == ImageDimension,
                "the output image must have the input's dimension");
  static_assert(std::is_arithmetic_v<typename InputImageType::PixelType> &&
                    std::is_arithmetic_v<typename OutputImageType::PixelType>,
                "ndconv's ITK filters take images of scalar pixel types");

  /** Use the GPU when one is usable (default on); otherwise, or when off, the CPU backend. */
  itkSetMacro(UseGPU, bool);
  itkGetConstMacro(UseGPU, bool);
  itkBooleanMacro(UseGPU);

  /** The CUDA device to run on (default 0). */
  itkSetMacro(DeviceIndex, int);
  itkGetConstMacro(DeviceIndex, int);

  /** Outputs each GPU thread computes along the last axis; 0 (default) chooses automatically. */
  itkSetMacro(OutputsPerThread, unsigned int);
  itkGetConstMacro(OutputsPerThread, unsigned int);

  /** Whether the last Update ran on the GPU. */
  itkGetConstMacro(GPUUsed, bool);

  /** What the last Update ran on and why, e.g. "cpu, 8 threads (no usable GPU (...))". */
  itkGetStringMacro(BackendDescription);

 protected:
  EngineImageFilter() = default;
  ~EngineImageFilter() override = default;

  void PrintSelf(std::ostream& os, itk::Indent indent) const override;

  /** The start of GenerateData: allocates the outputs and reports progress 0. False when the
   * output requested region is empty (nothing to compute). */
  bool AllocateRequestedOutput();

  /** Asks the input for the output requested region padded by `radius`, cropped to the input's
   * largest possible region; throws itk::InvalidRequestedRegionError when nothing is left. */
  void RequestPaddedInputRegion(const typename InputImageType::SizeType& radius);

  /** The GenerateData step both filters share: copies the input over `padded` (the output
   * requested region grown by the filter's footprint; `boundary` applies outside the input),
   * calls `engine_call(in_view, out_view, options)` once with this filter's settings, writes the
   * result into the output requested region and records GPUUsed and BackendDescription.
   * Progress: 0.05 after the copy, 1 at the end. */
  template <typename TEngineCall>
  void RunEngineOnPaddedInput(const InputImageRegionType& padded,
                              const itk_bridge::BoundarySpec& boundary, TEngineCall&& engine_call);

 private:
  bool m_UseGPU{true};
  int m_DeviceIndex{0};
  unsigned int m_OutputsPerThread{0};
  bool m_GPUUsed{false};
  std::string m_BackendDescription{"not run yet"};
};

/** The engine filter over itk::ImageToImageFilter, the parent of the filters that keep only ITK's
 * basic filter API (ndconv::GaussianImageFilter, ndconv::AdaptiveImageFilter). */
template <typename TInputImage, typename TOutputImage>
using EngineImageToImageFilter =
    EngineImageFilter<itk::ImageToImageFilter<TInputImage, TOutputImage>>;

}  // namespace ndconv

#ifndef ITK_MANUAL_INSTANTIATION
#include "ndconvEngineImageFilter.hxx"
#endif

#endif
