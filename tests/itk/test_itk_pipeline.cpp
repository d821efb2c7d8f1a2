// ndconv's ITK filters inside ITK pipelines: exact streaming (1, 3 and 7 pieces), two filters in
// a row, integer input with float output, the CPU fallback, errors and aborts, progress, and the
// Gaussian filter against the float64 reference.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "itkCommand.h"
#include "itkConstantBoundaryCondition.h"
#include "itkConvolutionImageFilter.h"
#include "itkImageRegionSplitterMultidimensional.h"
#include "itkPeriodicBoundaryCondition.h"
#include "itkStreamingImageFilter.h"
#include "itkZeroFluxNeumannBoundaryCondition.h"
#include "ndconv/engine.h"
#include "ndconv/gaussian.h"
#include "ndconvConvolutionImageFilter.h"
#include "ndconvGaussianImageFilter.h"

#include "itk_test_util.h"
#include "reference.h"

namespace {

using Image3 = itk::Image<float, 3>;
using Conv3 = ndconv::ConvolutionImageFilter<Image3>;

std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with NDCONV_TEST_SEED)";
}

Image3::SizeType Size3(itk::SizeValueType x, itk::SizeValueType y, itk::SizeValueType z) {
  Image3::SizeType s;
  s[0] = x;
  s[1] = y;
  s[2] = z;
  return s;
}

// Runs `filter` under a StreamingImageFilter with `pieces` divisions and returns the output.
template <typename TFilter>
typename TFilter::OutputImageType::Pointer Streamed(TFilter* filter, unsigned int pieces,
                                                    bool multidimensional) {
  using Streamer = itk::StreamingImageFilter<typename TFilter::OutputImageType,
                                             typename TFilter::OutputImageType>;
  auto streamer = Streamer::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(pieces);
  if (multidimensional)
    streamer->SetRegionSplitter(itk::ImageRegionSplitterMultidimensional::New());
  streamer->Update();
  typename TFilter::OutputImageType::Pointer out = streamer->GetOutput();
  out->DisconnectPipeline();
  return out;
}

// ---- streaming ---------------------------------------------------------------------------------

class Streaming : public ::testing::TestWithParam<int> {};

TEST_P(Streaming, ConvolutionPiecesEqualOnePieceExactly) {
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<Image3>(Size3(19, 15, 21), seed);
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(5, 4, 3), seed + 1);
  itk::ZeroFluxNeumannBoundaryCondition<Image3> zero_flux;
  itk::ConstantBoundaryCondition<Image3> constant;
  itk::PeriodicBoundaryCondition<Image3> periodic;
  itk::ImageBoundaryCondition<Image3>* conditions[] = {&zero_flux, &constant, &periodic};
  const bool valid = GetParam() == 1;

  for (auto* bc : conditions) {
    SCOPED_TRACE(bc->GetNameOfClass());
    auto whole = Conv3::New();
    whole->SetInput(input);
    whole->SetKernelImage(kernel);
    whole->SetBoundaryCondition(bc);
    if (valid)
      whole->SetOutputRegionModeToValid();
    whole->Update();

    for (unsigned int pieces : {1u, 3u, 7u}) {
      for (bool multidimensional : {false, true}) {
        SCOPED_TRACE(std::to_string(pieces) + " pieces" + (multidimensional ? ", multi" : ""));
        auto filter = Conv3::New();
        filter->SetInput(input);
        filter->SetKernelImage(kernel);
        filter->SetBoundaryCondition(bc);
        if (valid)
          filter->SetOutputRegionModeToValid();
        auto out = Streamed(filter.GetPointer(), pieces, multidimensional);
        EXPECT_TRUE(ndconv::test::SameGeometry(out.GetPointer(), whole->GetOutput()));
        EXPECT_TRUE(ndconv::test::IdenticalPixels(out.GetPointer(), whole->GetOutput()));
      }
    }
  }
}

TEST_P(Streaming, GaussianPiecesEqualOnePieceExactly) {
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<Image3>(Size3(17, 13, 23), seed);
  using Gaussian = ndconv::GaussianImageFilter<Image3>;
  itk::PeriodicBoundaryCondition<Image3> periodic;
  auto whole = Gaussian::New();
  whole->SetInput(input);
  whole->SetSigma(1.3);
  if (GetParam() == 1)
    whole->SetBoundaryCondition(&periodic);
  whole->Update();
  for (unsigned int pieces : {1u, 3u, 7u}) {
    SCOPED_TRACE(std::to_string(pieces) + " pieces");
    auto filter = Gaussian::New();
    filter->SetInput(input);
    filter->SetSigma(1.3);
    if (GetParam() == 1)
      filter->SetBoundaryCondition(&periodic);
    auto out = Streamed(filter.GetPointer(), pieces, pieces == 7);
    EXPECT_TRUE(ndconv::test::SameGeometry(out.GetPointer(), whole->GetOutput()));
    EXPECT_TRUE(ndconv::test::IdenticalPixels(out.GetPointer(), whole->GetOutput()));
  }
}

// 2D and 4D: pieces along y and t (slowest axes) and multidimensional ones, periodic boundary
// (the one whose values come from the far side of the image) and an even kernel.
template <unsigned int D>
void CheckStreamingExact() {
  using Image = itk::Image<float, D>;
  using Conv = ndconv::ConvolutionImageFilter<Image>;
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed) + ", " + std::to_string(D) + "D");
  typename Image::SizeType size, ksize;
  for (unsigned int a = 0; a < D; ++a) {
    size[a] = D == 2 ? 31 + 4 * a : 9 + a;
    ksize[a] = a == 0 ? 4 : 3;
  }
  auto input = ndconv::test::RandomImage<Image>(size, seed);
  auto kernel = ndconv::test::RandomImage<Image>(ksize, seed + 1);
  itk::PeriodicBoundaryCondition<Image> periodic;
  auto whole = Conv::New();
  whole->SetInput(input);
  whole->SetKernelImage(kernel);
  whole->SetBoundaryCondition(&periodic);
  whole->Update();
  for (unsigned int pieces : {3u, 7u}) {
    for (bool multidimensional : {false, true}) {
      SCOPED_TRACE(std::to_string(pieces) + " pieces" + (multidimensional ? ", multi" : ""));
      auto filter = Conv::New();
      filter->SetInput(input);
      filter->SetKernelImage(kernel);
      filter->SetBoundaryCondition(&periodic);
      auto out = Streamed(filter.GetPointer(), pieces, multidimensional);
      EXPECT_TRUE(ndconv::test::IdenticalPixels(out.GetPointer(), whole->GetOutput()));
    }
  }
}

TEST(ItkFilter, StreamingIn2DAnd4DIsExact) {
  CheckStreamingExact<2>();
  CheckStreamingExact<4>();
}

INSTANTIATE_TEST_SUITE_P(ItkFilter, Streaming, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == 1 ? "ValidOrPeriodic" : "Same");
                         });

// ---- pipelines and pixel types -----------------------------------------------------------------

TEST(ItkFilter, TwoFiltersInARowMatchItkAndStreamExactly) {
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<Image3>(Size3(16, 14, 12), seed);
  auto k1 = ndconv::test::RandomImage<Image3>(Size3(3, 3, 3), seed + 1);
  auto k2 = ndconv::test::RandomImage<Image3>(Size3(2, 5, 3), seed + 2);

  using ItkConv = itk::ConvolutionImageFilter<Image3>;
  auto r1 = ItkConv::New();
  r1->SetInput(input);
  r1->SetKernelImage(k1);
  auto r2 = ItkConv::New();
  r2->SetInput(r1->GetOutput());
  r2->SetKernelImage(k2);
  r2->SetOutputRegionModeToValid();
  r2->Update();

  auto f1 = Conv3::New();
  f1->SetInput(input);
  f1->SetKernelImage(k1);
  auto f2 = Conv3::New();
  f2->SetInput(f1->GetOutput());
  f2->SetKernelImage(k2);
  f2->SetOutputRegionModeToValid();
  f2->Update();
  EXPECT_TRUE(ndconv::test::SameGeometry(f2->GetOutput(), r2->GetOutput()));
  EXPECT_LE(ndconv::test::RelativeL2(f2->GetOutput(), r2->GetOutput()), 1e-5);

  // Streamed, the first filter is asked for sub-regions padded by the second one's footprint.
  auto g1 = Conv3::New();
  g1->SetInput(input);
  g1->SetKernelImage(k1);
  auto g2 = Conv3::New();
  g2->SetInput(g1->GetOutput());
  g2->SetKernelImage(k2);
  g2->SetOutputRegionModeToValid();
  auto streamed = Streamed(g2.GetPointer(), 3, false);
  EXPECT_TRUE(ndconv::test::IdenticalPixels(streamed.GetPointer(), f2->GetOutput()));
}

TEST(ItkFilter, IntegerInputFloatOutputMatchesItk) {
  using ShortImage = itk::Image<short, 3>;
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<ShortImage>(Size3(15, 12, 10), seed, 1000.0f);
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 4, 3), seed + 1);

  auto reference = itk::ConvolutionImageFilter<ShortImage, Image3, Image3>::New();
  reference->SetInput(input);
  reference->SetKernelImage(kernel);
  reference->NormalizeOn();
  reference->Update();
  auto filter = ndconv::ConvolutionImageFilter<ShortImage, Image3, Image3>::New();
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  filter->NormalizeOn();
  filter->Update();
  EXPECT_TRUE(ndconv::test::SameGeometry(filter->GetOutput(), reference->GetOutput()));
  EXPECT_LE(ndconv::test::RelativeL2(filter->GetOutput(), reference->GetOutput()), 1e-5);
}

TEST(ItkFilter, FloatInputIntegerOutputTruncatesAsItk) {
  using ShortImage = itk::Image<short, 3>;
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<Image3>(Size3(12, 11, 10), seed, 500.0f);
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 3, 3), seed + 1);
  auto reference = itk::ConvolutionImageFilter<Image3, Image3, ShortImage>::New();
  reference->SetInput(input);
  reference->SetKernelImage(kernel);
  reference->Update();
  auto filter = ndconv::ConvolutionImageFilter<Image3, Image3, ShortImage>::New();
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  filter->Update();
  // float32 against ITK's double sums: a sum next to an integer may truncate the other way.
  const auto got = ndconv::test::Pixels(filter->GetOutput());
  const auto want = ndconv::test::Pixels(reference->GetOutput());
  ASSERT_EQ(got.size(), want.size());
  std::size_t off_by_one = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), 1.0) << "pixel " << i;
    off_by_one += got[i] != want[i];
  }
  EXPECT_LE(off_by_one, got.size() / 100 + 1);
}

TEST(ItkFilter, CpuFallbackWhenGpuIsOff) {
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed));
  auto input = ndconv::test::RandomImage<Image3>(Size3(13, 12, 11), seed);
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 3, 5), seed + 1);
  auto reference = itk::ConvolutionImageFilter<Image3>::New();
  reference->SetInput(input);
  reference->SetKernelImage(kernel);
  reference->Update();

  auto filter = Conv3::New();
  EXPECT_TRUE(filter->GetUseGPU());  // on by default
  filter->UseGPUOff();
  filter->SetNumberOfWorkUnits(1);  // caps the CPU backend's threads, as for ITK's filters
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  filter->Update();
  EXPECT_FALSE(filter->GetGPUUsed());
  EXPECT_NE(std::string(filter->GetBackendDescription()).find(", 1 worker thread"),
            std::string::npos)
      << filter->GetBackendDescription();
  EXPECT_EQ(std::string(filter->GetBackendDescription()).rfind("cpu", 0), 0u)
      << filter->GetBackendDescription();
  EXPECT_LE(ndconv::test::RelativeL2(filter->GetOutput(), reference->GetOutput()), 1e-5);

  // With the GPU requested but none usable, the filter falls back and says why.
  auto automatic = Conv3::New();
  automatic->SetInput(input);
  automatic->SetKernelImage(kernel);
  automatic->Update();
  const ndconv::CudaStatus status = ndconv::cuda_status();
  // A volume this small is the CPU's by the engine's cost model, GPU or not; without a GPU the
  // description says why the CPU ran.
  if (!status.usable) {
    EXPECT_FALSE(automatic->GetGPUUsed());
    const std::string description = automatic->GetBackendDescription();
    EXPECT_TRUE(description.find("no usable GPU") != std::string::npos ||
                description.find("CPU estimated faster") != std::string::npos)
        << description;
  }
  EXPECT_LE(ndconv::test::RelativeL2(automatic->GetOutput(), reference->GetOutput()), 1e-5);
}

// ---- errors, abort and progress ----------------------------------------------------------------

// A boundary condition ndconv does not implement (a subclass may behave differently).
class MirrorBoundaryCondition : public itk::ZeroFluxNeumannBoundaryCondition<Image3> {
 public:
  const char* GetNameOfClass() const override { return "MirrorBoundaryCondition"; }
};

template <typename TFilter>
std::string UpdateError(TFilter* filter) {
  try {
    filter->Update();
  } catch (const itk::ExceptionObject& e) {
    return e.GetDescription();
  }
  return "";
}

TEST(ItkFilter, UnsupportedBoundaryConditionThrows) {
  auto input = ndconv::test::RandomImage<Image3>(Size3(8, 8, 8), ndconv::test::fresh_seed());
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 3, 3), ndconv::test::fresh_seed());
  MirrorBoundaryCondition mirror;
  auto filter = Conv3::New();
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  filter->SetBoundaryCondition(&mirror);
  const std::string error = UpdateError(filter.GetPointer());
  EXPECT_NE(error.find("MirrorBoundaryCondition is not supported"), std::string::npos) << error;

  auto gaussian = ndconv::GaussianImageFilter<Image3>::New();
  gaussian->SetInput(input);
  gaussian->SetBoundaryCondition(&mirror);
  EXPECT_NE(UpdateError(gaussian.GetPointer()).find("not supported"), std::string::npos);
}

TEST(ItkFilter, EngineErrorsBecomeItkExceptions) {
  auto input = ndconv::test::RandomImage<Image3>(Size3(40, 8, 8), ndconv::test::fresh_seed());
  auto too_wide = ndconv::test::RandomImage<Image3>(Size3(33, 3, 3), ndconv::test::fresh_seed());
  auto filter = Conv3::New();
  filter->SetInput(input);
  filter->SetKernelImage(too_wide);
  const std::string error = UpdateError(filter.GetPointer());
  EXPECT_NE(error.find("ndconv::ConvolutionImageFilter: the filter has 33 taps"), std::string::npos)
      << error;

  // Normalising a kernel whose taps sum to zero.
  auto zero_sum = ndconv::test::RandomImage<Image3>(Size3(2, 1, 1), ndconv::test::fresh_seed());
  Image3::IndexType i0 = zero_sum->GetLargestPossibleRegion().GetIndex(), i1 = i0;
  i1[0] += 1;
  zero_sum->SetPixel(i1, -zero_sum->GetPixel(i0));
  auto normalized = Conv3::New();
  normalized->SetInput(input);
  normalized->SetKernelImage(zero_sum);
  normalized->NormalizeOn();
  EXPECT_NE(UpdateError(normalized.GetPointer()).find("cannot normalize"), std::string::npos);
}

TEST(ItkFilter, AbortGenerateDataStopsTheFilterAndLeavesItReusable) {
  auto input = ndconv::test::RandomImage<Image3>(Size3(16, 16, 16), ndconv::test::fresh_seed());
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 3, 3), ndconv::test::fresh_seed());
  auto filter = Conv3::New();
  filter->SetInput(input);
  filter->SetKernelImage(kernel);

  int abort_events = 0;
  auto on_progress = itk::SimpleMemberCommand<Conv3>::New();
  on_progress->SetCallbackFunction(filter.GetPointer(), &Conv3::AbortGenerateDataOn);
  const auto progress_tag = filter->AddObserver(itk::ProgressEvent(), on_progress);
  auto on_abort = itk::CStyleCommand::New();
  on_abort->SetClientData(&abort_events);
  on_abort->SetCallback(
      [](itk::Object*, const itk::EventObject&, void* count) { ++*static_cast<int*>(count); });
  filter->AddObserver(itk::AbortEvent(), on_abort);
  EXPECT_THROW(filter->Update(), itk::ProcessAborted);
  EXPECT_EQ(abort_events, 1);

  // The pipeline is in ITK's usual state: without the observer the same filter runs to the end.
  filter->RemoveObserver(progress_tag);
  filter->Modified();
  EXPECT_NO_THROW(filter->Update());
  auto reference = itk::ConvolutionImageFilter<Image3>::New();
  reference->SetInput(input);
  reference->SetKernelImage(kernel);
  reference->Update();
  EXPECT_LE(ndconv::test::RelativeL2(filter->GetOutput(), reference->GetOutput()), 1e-5);
}

// An abort requested while the engine runs (progress past the filter's own 5 % for the copy-in)
// stops the engine between its pieces of work: ndconv::Aborted becomes itk::ProcessAborted.
TEST(ItkFilter, AbortDuringTheEngineRunIsHonoured) {
  auto input = ndconv::test::RandomImage<Image3>(Size3(24, 20, 40), ndconv::test::fresh_seed());
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(5, 5, 5), ndconv::test::fresh_seed());
  auto filter = Conv3::New();
  filter->UseGPUOff();  // the CPU backend reports progress between row chunks
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  auto on_progress = itk::CStyleCommand::New();
  on_progress->SetCallback([](itk::Object* caller, const itk::EventObject&, void*) {
    auto* f = static_cast<itk::ProcessObject*>(caller);
    if (f->GetProgress() > 0.05f && f->GetProgress() < 1.0f)
      f->AbortGenerateDataOn();
  });
  filter->AddObserver(itk::ProgressEvent(), on_progress);
  try {
    filter->Update();
    FAIL() << "no abort";
  } catch (const itk::ProcessAborted& e) {
    EXPECT_NE(std::string(e.GetDescription()).find("aborted"), std::string::npos);
    EXPECT_GT(filter->GetProgress(), 0.05f);
  }
}

TEST(ItkFilter, PrintSelfListsTheSettings) {
  auto filter = Conv3::New();
  filter->SetDeviceIndex(1);
  filter->SetOutputsPerThread(4);
  std::ostringstream os;
  filter->Print(os);
  EXPECT_NE(os.str().find("ConvolutionImageFilter"), std::string::npos);
  EXPECT_NE(os.str().find("DeviceIndex: 1"), std::string::npos);
  EXPECT_NE(os.str().find("OutputsPerThread: 4"), std::string::npos);
  EXPECT_NE(os.str().find("ZeroFluxNeumannBoundaryCondition"), std::string::npos);
  auto gaussian = ndconv::GaussianImageFilter<Image3>::New();
  std::ostringstream og;
  gaussian->Print(og);
  EXPECT_NE(og.str().find("Truncate: 4"), std::string::npos);
  EXPECT_NE(og.str().find("UseGPU: 1"), std::string::npos);
}

TEST(ItkFilter, ReportsProgressUpToOne) {
  auto input = ndconv::test::RandomImage<Image3>(Size3(12, 12, 12), ndconv::test::fresh_seed());
  auto kernel = ndconv::test::RandomImage<Image3>(Size3(3, 3, 3), ndconv::test::fresh_seed());
  auto filter = Conv3::New();
  filter->SetInput(input);
  filter->SetKernelImage(kernel);
  std::vector<float> seen;
  auto on_progress = itk::CStyleCommand::New();
  on_progress->SetClientData(&seen);
  on_progress->SetCallback([](itk::Object* caller, const itk::EventObject&, void* out) {
    static_cast<std::vector<float>*>(out)->push_back(
        static_cast<itk::ProcessObject*>(caller)->GetProgress());
  });
  filter->AddObserver(itk::ProgressEvent(), on_progress);
  filter->Update();
  ASSERT_GE(seen.size(), 2u);
  EXPECT_FLOAT_EQ(seen.back(), 1.0f);
  for (std::size_t i = 1; i < seen.size(); ++i)
    EXPECT_LE(seen[i - 1], seen[i]);
}

// ---- Gaussian against the float64 reference
// ------------------------------------------------------

template <unsigned int D>
void CheckGaussian(bool use_spacing, int boundary) {
  using Image = itk::Image<float, D>;
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE(SeedTrace(seed) + ", " + std::to_string(D) + "D, boundary " +
               std::to_string(boundary) + (use_spacing ? ", physical sigma" : ", voxel sigma"));
  typename Image::SizeType size;
  for (unsigned int a = 0; a < D; ++a)
    size[a] = D == 4 ? 7 + a : 14 + 3 * a;
  auto input = ndconv::test::RandomImage<Image>(size, seed);
  typename ndconv::GaussianImageFilter<Image>::SigmaArrayType sigma;
  std::array<double, ndconv::kMaxDims> sigma_voxels{0, 0, 0, 0};
  for (unsigned int a = 0; a < D; ++a) {
    sigma[a] = a == 1 ? 0.0 : 0.7 + 0.4 * a;  // axis 1 unfiltered
    sigma_voxels[a] = use_spacing ? sigma[a] / input->GetSpacing()[a] : sigma[a];
  }
  itk::ConstantBoundaryCondition<Image> constant;
  itk::PeriodicBoundaryCondition<Image> periodic;
  auto filter = ndconv::GaussianImageFilter<Image>::New();
  filter->SetInput(input);
  filter->SetSigmaArray(sigma);
  filter->SetUseImageSpacing(use_spacing);
  filter->SetTruncate(3.0);
  if (boundary == 1)
    filter->SetBoundaryCondition(&constant);
  if (boundary == 2)
    filter->SetBoundaryCondition(&periodic);
  filter->Update();

  std::vector<float> values;
  for (double v : ndconv::test::Pixels(input.GetPointer()))
    values.push_back(static_cast<float>(v));
  ndconv::Index extent{1, 1, 1, 1};
  for (unsigned int a = 0; a < D; ++a)
    extent[a] = static_cast<int64_t>(size[a]);
  const auto view = ndconv::make_view(static_cast<const float*>(values.data()), D, extent);
  const ndconv::Boundary b = boundary == 0   ? ndconv::Boundary::Replicate
                             : boundary == 1 ? ndconv::Boundary::Zero
                                             : ndconv::Boundary::Periodic;
  const auto want = ndconv::test::reference_separable(
      view, ndconv::gaussian_filter(D, sigma_voxels, 3.0), ndconv::Operation::Convolution, b,
      ndconv::OutputRegion::Same);
  std::vector<float> got;
  for (double v : ndconv::test::Pixels(filter->GetOutput()))
    got.push_back(static_cast<float>(v));
  EXPECT_LE(ndconv::test::relative_l2_error(got, want), 1e-5) << filter->GetBackendDescription();
  EXPECT_TRUE(ndconv::test::SameGeometry(filter->GetOutput(), input.GetPointer()));
}

TEST(ItkFilter, GaussianMatchesFloat64Reference) {
  for (int boundary : {0, 1, 2}) {
    CheckGaussian<2>(true, boundary);
    CheckGaussian<3>(boundary != 1, boundary);
    CheckGaussian<4>(boundary == 1, boundary);
  }
}

}  // namespace
