// ndconv::AdaptiveImageFilter: the same result as the engine's adaptive_filter, also under a
// streaming filter (it always computes the whole image), for an integer input with a float
// output, in 2D and 4D; its parameters in PrintSelf; bad parameters become itk::ExceptionObject.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "itkImageRegionIterator.h"
#include "itkStreamingImageFilter.h"
#include "ndconv/adaptive.h"
#include "ndconvAdaptiveImageFilter.h"
#include "test_data.h"

namespace {

template <typename TImage>
typename TImage::Pointer MakeImage(const typename TImage::SizeType& size, uint64_t seed) {
  auto image = TImage::New();
  image->SetRegions(typename TImage::RegionType(size));
  image->Allocate();
  const std::vector<float> noise = ndconv::test::random_values(
      static_cast<int64_t>(image->GetLargestPossibleRegion().GetNumberOfPixels()), seed);
  itk::ImageRegionIterator<TImage> it(image, image->GetLargestPossibleRegion());
  for (size_t i = 0; !it.IsAtEnd(); ++it, ++i) {
    const double v = 100 + 40 * std::sin(0.6 * it.GetIndex()[0]) + 20 * noise[i];
    it.Set(static_cast<typename TImage::PixelType>(v));
  }
  return image;
}

// The engine's result on the image's values (as float).
template <typename TImage>
std::vector<float> EngineResult(const TImage* image, const ndconv::AdaptiveParameters& p) {
  constexpr int dims = TImage::ImageDimension;
  const auto size = image->GetLargestPossibleRegion().GetSize();
  ndconv::Index extent{1, 1, 1, 1};
  for (int a = 0; a < dims; ++a)
    extent[a] = static_cast<int64_t>(size[a]);
  const auto* buffer = image->GetBufferPointer();
  std::vector<float> in(buffer, buffer + image->GetLargestPossibleRegion().GetNumberOfPixels());
  std::vector<float> out(in.size());
  ndconv::Options options;
  options.backend = ndconv::Backend::Cpu;
  ndconv::adaptive_filter(ndconv::as_const(ndconv::make_view(in.data(), dims, extent)),
                          ndconv::make_view(out.data(), dims, extent), p, options);
  return out;
}

template <typename TImage>
double MaxDifference(const TImage* image, const std::vector<float>& expected) {
  const auto* p = image->GetBufferPointer();
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(double{p[i]} - expected[i]) / (1 + std::abs(expected[i])));
  return worst;
}

TEST(ItkAdaptive, MatchesTheEngineAndStreamsAsOnePiece) {
  using Image = itk::Image<float, 3>;
  using Filter = ndconv::AdaptiveImageFilter<Image>;
  const uint64_t seed = ndconv::test::fresh_seed();
  Image::SizeType size;
  size[0] = 17;
  size[1] = 14;
  size[2] = 12;
  auto image = MakeImage<Image>(size, seed);
  auto filter = Filter::New();
  filter->SetInput(image);
  filter->UseGPUOff();
  filter->SetSmoothing(1.2);
  filter->SetThreshold(0.2);
  ndconv::AdaptiveParameters p = filter->GetParameters();
  p.reconstruction.size = 7;
  filter->SetParameters(p);
  filter->Update();
  const std::vector<float> expected = EngineResult(image.GetPointer(), p);
  EXPECT_LT(MaxDifference(filter->GetOutput(), expected), 1e-6);
  EXPECT_EQ(filter->GetStageSeconds().size(), 6u);
  EXPECT_FALSE(filter->GetGPUUsed());

  auto streamer = itk::StreamingImageFilter<Image, Image>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(3);
  streamer->Update();
  EXPECT_LT(MaxDifference(streamer->GetOutput(), expected), 1e-6);

  std::ostringstream text;
  filter->Print(text);
  EXPECT_NE(text.str().find("Threshold: 0.2"), std::string::npos) << text.str();
}

TEST(ItkAdaptive, EchoPresetIsTheLibrarysAndParametersOverrideIt) {
  using Image = itk::Image<float, 3>;
  Image::SizeType size;
  size[0] = 15;
  size[1] = 13;
  size[2] = 11;
  auto image = MakeImage<Image>(size, ndconv::test::fresh_seed());
  auto filter = ndconv::AdaptiveImageFilter<Image>::New();
  filter->SetInput(image);
  filter->UseGPUOff();
  filter->SetPreset(ndconv::AdaptivePreset::Echo);
  const ndconv::AdaptiveParameters echo = ndconv::adaptive_preset(ndconv::AdaptivePreset::Echo);
  EXPECT_EQ(filter->GetSmoothing(), echo.reconstruction.lowpass_sigma);
  EXPECT_EQ(filter->GetRelaxation(), echo.relaxation_sigma);
  EXPECT_EQ(filter->GetParameters().reconstruction.size, echo.reconstruction.size);
  EXPECT_NE(echo.reconstruction.lowpass_sigma,
            ndconv::AdaptiveParameters{}.reconstruction.lowpass_sigma);
  filter->SetBlend(0.25);
  ndconv::AdaptiveParameters expected_parameters = echo;
  expected_parameters.blend = 0.25;
  filter->Update();
  EXPECT_LT(
      MaxDifference(filter->GetOutput(), EngineResult(image.GetPointer(), expected_parameters)),
      1e-6);
  // The library's ranges hold for the filter too.
  filter->SetSmoothing(std::nan(""));
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(ItkAdaptive, IntegerInputFloatOutputIn2DAnd4D) {
  using In2 = itk::Image<short, 2>;
  using Out2 = itk::Image<float, 2>;
  In2::SizeType s2;
  s2[0] = 23;
  s2[1] = 19;
  auto image2 = MakeImage<In2>(s2, ndconv::test::fresh_seed());
  auto f2 = ndconv::AdaptiveImageFilter<In2, Out2>::New();
  f2->SetInput(image2);
  f2->UseGPUOff();
  f2->Update();
  auto as_float = MakeImage<Out2>(s2, 0);
  for (size_t i = 0; i < image2->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    as_float->GetBufferPointer()[i] = image2->GetBufferPointer()[i];
  EXPECT_LT(
      MaxDifference(f2->GetOutput(), EngineResult(as_float.GetPointer(), f2->GetParameters())),
      1e-6);

  using Image4 = itk::Image<float, 4>;
  Image4::SizeType s4;
  s4[0] = 8;
  s4[1] = 7;
  s4[2] = 6;
  s4[3] = 4;
  auto image4 = MakeImage<Image4>(s4, ndconv::test::fresh_seed());
  auto f4 = ndconv::AdaptiveImageFilter<Image4>::New();
  f4->SetInput(image4);
  f4->UseGPUOff();
  f4->SetTimeAsAxis(false);
  ndconv::AdaptiveParameters p = f4->GetParameters();
  p.reconstruction.size = 5;
  p.quadrature.size = 5;
  f4->SetParameters(p);
  f4->Update();
  EXPECT_LT(MaxDifference(f4->GetOutput(), EngineResult(image4.GetPointer(), p)), 1e-6);
}

TEST(ItkAdaptive, BadParametersThrowItkExceptions) {
  using Image = itk::Image<float, 2>;
  Image::SizeType size;
  size[0] = 12;
  size[1] = 10;
  auto filter = ndconv::AdaptiveImageFilter<Image>::New();
  filter->SetInput(MakeImage<Image>(size, 1));
  filter->UseGPUOff();
  filter->SetBlend(2.0);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

}  // namespace
