// An ITK pipeline with ndconv: read a 3D image (NIfTI, MetaImage, ...), filter it on the GPU
// (or the CPU when there is none), write the result.
//
// Usage:
//   ndconv_itk_example IN OUT           a 5x5x5 box mean (ConvolutionImageFilter)
//   ndconv_itk_example IN OUT SIGMA_MM  Gaussian smoothing of SIGMA_MM mm (GaussianImageFilter)
#include <cstdlib>
#include <iostream>
#include <string>

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "ndconvConvolutionImageFilter.h"
#include "ndconvGaussianImageFilter.h"

using ImageType = itk::Image<float, 3>;

// A 5x5x5 kernel of ones; Normalize makes it a mean.
ImageType::Pointer BoxKernel() {
  auto kernel = ImageType::New();
  ImageType::SizeType size;
  size.Fill(5);
  kernel->SetRegions(ImageType::RegionType(size));
  kernel->Allocate();
  kernel->FillBuffer(1.0f);
  return kernel;
}

int main(int argc, char* argv[]) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: " << argv[0] << " INPUT OUTPUT [SIGMA_MM]\n";
    return EXIT_FAILURE;
  }
  try {
    auto reader = itk::ImageFileReader<ImageType>::New();
    reader->SetFileName(argv[1]);
    auto writer = itk::ImageFileWriter<ImageType>::New();
    writer->SetFileName(argv[2]);
    std::string ran_on;

    if (argc == 3) {
      // The one line that differs from an itk::ConvolutionImageFilter pipeline:
      using FilterType = ndconv::ConvolutionImageFilter<ImageType>;
      auto filter = FilterType::New();
      filter->SetInput(reader->GetOutput());
      filter->SetKernelImage(BoxKernel());
      filter->NormalizeOn();
      writer->SetInput(filter->GetOutput());
      writer->Update();
      ran_on = filter->GetBackendDescription();
    } else {
      auto filter = ndconv::GaussianImageFilter<ImageType>::New();
      filter->SetInput(reader->GetOutput());
      filter->SetSigma(std::stod(argv[3]));  // in millimetres (the image's physical units)
      writer->SetInput(filter->GetOutput());
      writer->Update();
      ran_on = filter->GetBackendDescription();
    }
    std::cout << "wrote " << argv[2] << " (" << ran_on << ")\n";
  } catch (const itk::ExceptionObject& e) {
    std::cerr << "error: " << e.GetDescription() << "\n";
    return EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
