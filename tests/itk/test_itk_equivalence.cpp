// ndconv::ConvolutionImageFilter against itk::ConvolutionImageFilter itself: dimensions 2, 3, 4;
// every supported boundary condition; `same` and `valid`; normalised and not; odd and mixed
// odd/even kernel sizes; random non-unit spacing, rotated direction, non-zero origin and start
// index. Pixels must agree within a relative L2 error of 1e-5 and the output geometry exactly.
// The ndconv filter runs with UseGPU on: on the GPU where one is usable, else on the CPU backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "itkConstantBoundaryCondition.h"
#include "itkConvolutionImageFilter.h"
#include "itkPeriodicBoundaryCondition.h"
#include "itkZeroFluxNeumannBoundaryCondition.h"
#include "ndconv/engine.h"
#include "ndconvConvolutionImageFilter.h"

#include "itk_test_util.h"

namespace {

enum class Bc { ZeroFluxNeumann, Constant, Periodic };

struct Case {
  unsigned int dims;
  Bc boundary;
  bool valid;
  bool normalize;
  bool even;
};

std::string Name(const Case& c) {
  static const char* bc[] = {"ZeroFluxNeumann", "Constant0", "Periodic"};
  return std::to_string(c.dims) + "D_" + bc[static_cast<int>(c.boundary)] +
         (c.valid ? "_Valid" : "_Same") + (c.normalize ? "_Normalized" : "_Raw") +
         (c.even ? "_EvenKernel" : "_OddKernel");
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (unsigned int d : {2u, 3u, 4u})
    for (Bc b : {Bc::ZeroFluxNeumann, Bc::Constant, Bc::Periodic})
      for (bool valid : {false, true})
        for (bool normalize : {false, true})
          for (bool even : {false, true})
            cases.push_back({d, b, valid, normalize, even});
  return cases;
}

template <unsigned int D>
void RunCase(const Case& c) {
  using Image = itk::Image<float, D>;
  const uint64_t seed = ndconv::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with NDCONV_TEST_SEED)");

  // Small images (the suite runs on 2 cores in CI); kernels of 3 or 5 taps, or mixed even ones.
  typename Image::SizeType size, ksize;
  const itk::SizeValueType sizes2[] = {37, 29}, sizes3[] = {17, 13, 11}, sizes4[] = {9, 8, 7, 6};
  const itk::SizeValueType* sizes = D == 2 ? sizes2 : D == 3 ? sizes3 : sizes4;
  for (unsigned int a = 0; a < D; ++a) {
    size[a] = sizes[a];
    ksize[a] = c.even ? (a % 2 == 0 ? 4 : 3) : (a == 0 ? 5 : 3);
  }
  if (c.even)
    ksize[D - 1] = 2;  // an even extent along the slowest axis too
  auto input = ndconv::test::RandomImage<Image>(size, seed);
  auto kernel = ndconv::test::RandomImage<Image>(ksize, seed + 1);
  if (c.normalize) {  // keep the sum well away from zero
    for (itk::ImageRegionIterator<Image> it(kernel, kernel->GetBufferedRegion()); !it.IsAtEnd();
         ++it)
      it.Set(0.75f + 0.5f * it.Get());
  }

  itk::ZeroFluxNeumannBoundaryCondition<Image> zero_flux;
  itk::ConstantBoundaryCondition<Image> constant;
  constant.SetConstant(0.0f);
  itk::PeriodicBoundaryCondition<Image> periodic;
  itk::ImageBoundaryCondition<Image>* bc =
      c.boundary == Bc::ZeroFluxNeumann ? &zero_flux
      : c.boundary == Bc::Constant ? static_cast<itk::ImageBoundaryCondition<Image>*>(&constant)
                                   : &periodic;

  auto reference = itk::ConvolutionImageFilter<Image>::New();
  auto filter = ndconv::ConvolutionImageFilter<Image>::New();
  for (auto* f : {static_cast<itk::ConvolutionImageFilterBase<Image>*>(reference.GetPointer()),
                  static_cast<itk::ConvolutionImageFilterBase<Image>*>(filter.GetPointer())}) {
    f->SetInput(input);
    f->SetKernelImage(kernel);
    f->SetBoundaryCondition(bc);
    f->SetNormalize(c.normalize);
    if (c.valid)
      f->SetOutputRegionModeToValid();
    else
      f->SetOutputRegionModeToSame();
  }
  reference->Update();
  filter->Update();

  EXPECT_TRUE(ndconv::test::SameGeometry(filter->GetOutput(), reference->GetOutput()))
      << "ndconv region " << filter->GetOutput()->GetBufferedRegion() << " ITK region "
      << reference->GetOutput()->GetBufferedRegion();
  const double error = ndconv::test::RelativeL2(filter->GetOutput(), reference->GetOutput());
  EXPECT_LE(error, 1e-5) << filter->GetBackendDescription();
  // The GPU where the engine's cost model chooses it (small volumes stay on the CPU), never
  // without one.
  if (!ndconv::cuda_status().usable) {
    EXPECT_FALSE(filter->GetGPUUsed()) << filter->GetBackendDescription();
  }
}

class Equivalence : public ::testing::TestWithParam<Case> {};

TEST_P(Equivalence, MatchesItkConvolutionImageFilter) {
  const Case& c = GetParam();
  switch (c.dims) {
    case 2:
      RunCase<2>(c);
      break;
    case 3:
      RunCase<3>(c);
      break;
    default:
      RunCase<4>(c);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(ItkFilter, Equivalence, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return Name(info.param);
                         });

}  // namespace
