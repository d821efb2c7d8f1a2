// Helpers for the ITK filter tests: random images with non-trivial geometry (non-unit spacing,
// a rotated direction, a non-zero origin and start index), comparisons of pixels and geometry.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "itkImage.h"
#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"

#include "test_data.h"

namespace ndconv::test {

/// A rotation by `angle` in the plane of axes 0 and 1 (identity elsewhere).
template <unsigned int D>
itk::Matrix<double, D, D> RotatedDirection(double angle) {
  itk::Matrix<double, D, D> m;
  m.SetIdentity();
  m(0, 0) = std::cos(angle);
  m(0, 1) = -std::sin(angle);
  m(1, 0) = std::sin(angle);
  m(1, 1) = std::cos(angle);
  return m;
}

/// An image of `size` filled with `values` (x fastest), converted to the pixel type.
template <typename TImage>
typename TImage::Pointer MakeImage(const typename TImage::SizeType& size,
                                   const std::vector<float>& values, float scale = 1.0f) {
  auto image = TImage::New();
  typename TImage::RegionType region;
  region.SetSize(size);
  image->SetRegions(region);
  image->Allocate();
  std::size_t i = 0;
  for (itk::ImageRegionIterator<TImage> it(image, region); !it.IsAtEnd(); ++it)
    it.Set(static_cast<typename TImage::PixelType>(values.at(i++) * scale));
  return image;
}

/// A random image (values in [-1, 1) times `scale`, never zero for floats) with non-unit
/// spacing, a rotated direction, a non-zero origin and a non-zero start index.
template <typename TImage>
typename TImage::Pointer RandomImage(const typename TImage::SizeType& size, uint64_t seed,
                                     float scale = 1.0f) {
  constexpr unsigned int D = TImage::ImageDimension;
  std::size_t count = 1;
  for (unsigned int a = 0; a < D; ++a)
    count *= size[a];
  auto image = MakeImage<TImage>(size, random_values(static_cast<int64_t>(count), seed), scale);
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  typename TImage::SpacingType spacing;
  typename TImage::PointType origin;
  typename TImage::IndexType start;
  for (unsigned int a = 0; a < D; ++a) {
    spacing[a] = u(rng);
    origin[a] = 10.0 * u(rng) - 5.0;
    start[a] = static_cast<itk::IndexValueType>(a % 2 == 0 ? 3 : -2);
  }
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(RotatedDirection<D>(0.3 + u(rng) * 0.1));
  typename TImage::RegionType region = image->GetLargestPossibleRegion();
  region.SetIndex(start);
  image->SetRegions(region);  // moves the index; the buffer is unchanged
  return image;
}

/// Pixel values over the image's buffered region, as doubles, x fastest.
template <typename TImage>
std::vector<double> Pixels(const TImage* image) {
  std::vector<double> v;
  v.reserve(image->GetBufferedRegion().GetNumberOfPixels());
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd();
       ++it)
    v.push_back(static_cast<double>(it.Get()));
  return v;
}

/// ||got - ref|| / ||ref|| over the buffered regions; +Inf for a size mismatch or a non-finite
/// value in `got`.
template <typename TGot, typename TRef>
double RelativeL2(const TGot* got, const TRef* ref) {
  const std::vector<double> g = Pixels(got), r = Pixels(ref);
  if (g.size() != r.size() || g.empty())
    return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!std::isfinite(g[i]))
      return std::numeric_limits<double>::infinity();
    num += (g[i] - r[i]) * (g[i] - r[i]);
    den += r[i] * r[i];
  }
  return std::sqrt(num / den);
}

/// Whether two images have the same origin, spacing, direction, largest and buffered regions.
template <typename TA, typename TB>
bool SameGeometry(const TA* a, const TB* b) {
  return a->GetOrigin() == b->GetOrigin() && a->GetSpacing() == b->GetSpacing() &&
         a->GetDirection() == b->GetDirection() &&
         a->GetLargestPossibleRegion() == b->GetLargestPossibleRegion() &&
         a->GetBufferedRegion() == b->GetBufferedRegion();
}

/// Whether two images hold bit-identical pixels over identical buffered regions.
template <typename TImage>
bool IdenticalPixels(const TImage* a, const TImage* b) {
  if (a->GetBufferedRegion() != b->GetBufferedRegion())
    return false;
  itk::ImageRegionConstIterator<TImage> ia(a, a->GetBufferedRegion());
  itk::ImageRegionConstIterator<TImage> ib(b, b->GetBufferedRegion());
  for (; !ia.IsAtEnd(); ++ia, ++ib) {
    const auto x = ia.Get(), y = ib.Get();
    if (!(x == y))
      return false;
  }
  return true;
}

}  // namespace ndconv::test
