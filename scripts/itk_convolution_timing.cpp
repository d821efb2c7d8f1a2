// Throwaway timing of itk::ConvolutionImageFilter (ITK 5.2) on the problem of
// scripts/cpu_timing.cpp: a 160^3 float volume, a 7^3 kernel, ITK's default threads (all cores),
// zero-flux Neumann boundary (ITK's default, ndconv's `replicate`), best of N runs. Not part of
// the build or CI. Build it with a throwaway CMake project:
//   cmake_minimum_required(VERSION 3.16)
//   project(t C CXX)              # C too: ITK's HDF5 lookup needs it
//   find_package(ITK REQUIRED)
//   include(${ITK_USE_FILE})
//   add_executable(t /path/to/scripts/itk_convolution_timing.cpp)
//   target_link_libraries(t ${ITK_LIBRARIES})
// then run: t [n=160] [k=7] [repeats=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "itkConvolutionImageFilter.h"
#include "itkImage.h"
#include "itkImageRegionIterator.h"
#include "itkMultiThreaderBase.h"

using Image = itk::Image<float, 3>;

static Image::Pointer random_image(int n, unsigned seed) {
  auto image = Image::New();
  Image::SizeType size;
  size.Fill(n);
  image->SetRegions(Image::RegionType(size));
  image->Allocate();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (itk::ImageRegionIterator<Image> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd();
       ++it)
    it.Set(dist(rng));
  return image;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 160;
  const int k = argc > 2 ? std::atoi(argv[2]) : 7;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const auto input = random_image(n, 1);
  const auto kernel = random_image(k, 2);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto filter = itk::ConvolutionImageFilter<Image>::New();
    filter->SetInput(input);
    filter->SetKernelImage(kernel);
    const auto t0 = std::chrono::steady_clock::now();
    filter->Update();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("itk::ConvolutionImageFilter %d^3 float, %d^3 kernel, %u threads: best %.3f s\n", n,
              k, itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads(), best);
  return 0;
}
