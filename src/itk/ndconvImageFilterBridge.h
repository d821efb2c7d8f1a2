// The bridge between ITK images and the ndconv engine, shared by ndconv::ConvolutionImageFilter
// and ndconv::GaussianImageFilter.
//
// Design: the engine never sees ITK. A filter copies the input pixels it needs (its output
// requested region padded by the filter's footprint) into one contiguous float buffer, applying
// the ITK boundary condition itself for the part of the padded region that lies outside the
// input's largest possible region, and inside it reading real neighbours from the input buffer.
// The engine then runs once in `valid` mode on that buffer, so its own boundary handling is never
// used. This makes every streamed piece compute exactly the voxels a single piece would: the
// values in the buffer do not depend on where the piece was cut, and the engine's arithmetic per
// output voxel does not depend on the piece either.
#ifndef ndconvImageFilterBridge_h
#define ndconvImageFilterBridge_h

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "itkConstantBoundaryCondition.h"
#include "itkImageBoundaryCondition.h"
#include "itkImageRegion.h"
#include "itkMultiThreaderBase.h"
#include "itkPeriodicBoundaryCondition.h"
#include "itkProcessObject.h"
#include "itkZeroFluxNeumannBoundaryCondition.h"

#include "ndconv/engine.h"

namespace ndconv {
namespace itk_bridge {

/// What lies outside the input's largest possible region.
struct BoundarySpec {
  enum class Kind { Constant, Replicate, Periodic };
  Kind kind = Kind::Replicate;
  float constant = 0.0f;
};

/// Maps an ITK boundary condition object onto a BoundarySpec. Only the exact ITK classes are
/// accepted (a subclass may change the behaviour); anything else throws itk::ExceptionObject.
template <typename TImage>
BoundarySpec DescribeBoundary(const itk::ImageBoundaryCondition<TImage>* condition,
                              const char* filter_name) {
  BoundarySpec spec;
  if (condition == nullptr ||
      typeid(*condition) == typeid(itk::ZeroFluxNeumannBoundaryCondition<TImage>)) {
    spec.kind = BoundarySpec::Kind::Replicate;
    return spec;
  }
  if (typeid(*condition) == typeid(itk::ConstantBoundaryCondition<TImage>)) {
    spec.kind = BoundarySpec::Kind::Constant;
    spec.constant = static_cast<float>(
        static_cast<const itk::ConstantBoundaryCondition<TImage>*>(condition)->GetConstant());
    return spec;
  }
  if (typeid(*condition) == typeid(itk::PeriodicBoundaryCondition<TImage>)) {
    spec.kind = BoundarySpec::Kind::Periodic;
    return spec;
  }
  itkGenericExceptionMacro(<< filter_name << ": the boundary condition "
                           << condition->GetNameOfClass()
                           << " is not supported; use itk::ZeroFluxNeumannBoundaryCondition, "
                              "itk::ConstantBoundaryCondition or itk::PeriodicBoundaryCondition");
}

inline const char* BoundaryName(const BoundarySpec& spec) {
  switch (spec.kind) {
    case BoundarySpec::Kind::Constant:
      return "constant";
    case BoundarySpec::Kind::Replicate:
      return "zero-flux Neumann";
    case BoundarySpec::Kind::Periodic:
      return "periodic";
  }
  return "?";
}

/// The index (relative to `first`) that the boundary condition reads for absolute index `i`
/// along an axis whose largest possible region is [first, first + n); -1 for the constant.
inline int64_t MapBoundaryIndex(int64_t i, int64_t first, int64_t n, BoundarySpec::Kind kind) {
  const int64_t r = i - first;
  if (r >= 0 && r < n)
    return r;
  switch (kind) {
    case BoundarySpec::Kind::Constant:
      return -1;
    case BoundarySpec::Kind::Replicate:
      return r < 0 ? 0 : n - 1;
    case BoundarySpec::Kind::Periodic: {
      const int64_t m = r % n;
      return m < 0 ? m + n : m;
    }
  }
  return -1;
}

/// Converts a float result to an output pixel: floating types by a cast; integer types clamped
/// to their range first (so that an overflow is saturated instead of undefined) and truncated as
/// itk::ConvolutionImageFilter does.
template <typename TPixel>
TPixel FromFloat(float v) {
  if constexpr (std::is_integral_v<TPixel>) {
    const double lo = static_cast<double>(std::numeric_limits<TPixel>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<TPixel>::max());
    const double d = static_cast<double>(v);
    if (!(d >= lo))  // also NaN
      return std::numeric_limits<TPixel>::lowest();
    if (d >= hi)
      return std::numeric_limits<TPixel>::max();
    return static_cast<TPixel>(d);
  } else {
    return static_cast<TPixel>(v);
  }
}

/// Visits every line along x of `size` (an N-D box), in parallel through ITK's threader: calls
/// line(index) with index[0] == 0 and index[1..N-1] the line's position.
template <unsigned int VDimension, typename TLine>
void ForEachLine(const itk::Size<VDimension>& size, TLine&& line) {
  itk::SizeValueType lines = 1;
  for (unsigned int a = 1; a < VDimension; ++a)
    lines *= size[a];
  itk::MultiThreaderBase::Pointer threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(
      0, lines,
      [&](itk::SizeValueType l) {
        std::array<int64_t, VDimension> index{};
        for (unsigned int a = 1; a < VDimension; ++a) {
          index[a] = static_cast<int64_t>(l % size[a]);
          l /= size[a];
        }
        line(index);
      },
      nullptr);
}

/// Fills `buffer` (contiguous, x fastest, the size of `padded`) with the input's pixels over
/// `padded`, a region that may extend beyond the input's largest possible region: inside it the
/// real pixels are read from the input's buffer (which must cover them), outside it `boundary`
/// applies.
template <typename TImage>
void CopyPaddedRegion(const TImage* image, const typename TImage::RegionType& padded,
                      const BoundarySpec& boundary, std::vector<float>& buffer) {
  constexpr unsigned int D = TImage::ImageDimension;
  const auto largest = image->GetLargestPossibleRegion();
  const auto buffered = image->GetBufferedRegion();

  // Per axis: the buffer-relative input index each padded position reads, or -1 (constant).
  std::array<std::vector<int64_t>, D> lookup;
  for (unsigned int a = 0; a < D; ++a) {
    lookup[a].resize(padded.GetSize(a));
    for (itk::SizeValueType p = 0; p < padded.GetSize(a); ++p) {
      const int64_t abs_index = padded.GetIndex(a) + static_cast<int64_t>(p);
      const int64_t r = MapBoundaryIndex(abs_index, largest.GetIndex(a),
                                         static_cast<int64_t>(largest.GetSize(a)), boundary.kind);
      if (r < 0) {
        lookup[a][p] = -1;
        continue;
      }
      const int64_t b = r + largest.GetIndex(a) - buffered.GetIndex(a);
      if (b < 0 || b >= static_cast<int64_t>(buffered.GetSize(a))) {
        itkGenericExceptionMacro(<< "ndconv: the input's buffered region " << buffered
                                 << " does not cover the pixels the filter needs (axis " << a
                                 << ", index " << r + largest.GetIndex(a) << ")");
      }
      lookup[a][p] = b;
    }
  }

  buffer.resize(padded.GetNumberOfPixels());
  const auto* pixels = image->GetBufferPointer();
  const auto* offsets = image->GetOffsetTable();  // offsets[a]: elements between neighbours
  const auto size = padded.GetSize();
  const int64_t width = static_cast<int64_t>(size[0]);
  ForEachLine<D>(size, [&](const std::array<int64_t, D>& index) {
    int64_t dst = 0, dst_stride = width, src = 0;
    bool constant_line = false;
    for (unsigned int a = 1; a < D; ++a) {
      dst += index[a] * dst_stride;
      dst_stride *= static_cast<int64_t>(size[a]);
      const int64_t b = lookup[a][index[a]];
      if (b < 0)
        constant_line = true;
      else
        src += b * static_cast<int64_t>(offsets[a]);
    }
    float* out = buffer.data() + dst;
    if (constant_line) {
      std::fill(out, out + width, boundary.constant);
      return;
    }
    const auto* row = pixels + src;
    for (int64_t x = 0; x < width; ++x) {
      const int64_t b = lookup[0][x];
      out[x] = b < 0 ? boundary.constant : static_cast<float>(row[b]);
    }
  });
}

/// A strided float view of `region` inside a float image's buffer.
template <typename TImage>
VolumeView ViewOfRegion(TImage* image, const typename TImage::RegionType& region) {
  constexpr unsigned int D = TImage::ImageDimension;
  static_assert(std::is_same_v<typename TImage::PixelType, float>);
  VolumeView v;
  v.dims = static_cast<int>(D);
  const auto* offsets = image->GetOffsetTable();
  for (unsigned int a = 0; a < D; ++a) {
    v.extent[a] = static_cast<int64_t>(region.GetSize(a));
    v.stride[a] = static_cast<int64_t>(offsets[a]);
  }
  v.data = image->GetBufferPointer() + image->ComputeOffset(region.GetIndex());
  return v;
}

/// Writes `values` (contiguous, x fastest, the size of `region`) into the image over `region`.
template <typename TImage>
void WriteRegion(const std::vector<float>& values, TImage* image,
                 const typename TImage::RegionType& region) {
  constexpr unsigned int D = TImage::ImageDimension;
  using Pixel = typename TImage::PixelType;
  auto* base = image->GetBufferPointer() + image->ComputeOffset(region.GetIndex());
  const auto* offsets = image->GetOffsetTable();
  const auto size = region.GetSize();
  const int64_t width = static_cast<int64_t>(size[0]);
  ForEachLine<D>(size, [&](const std::array<int64_t, D>& index) {
    int64_t src = 0, src_stride = width, dst = 0;
    for (unsigned int a = 1; a < D; ++a) {
      src += index[a] * src_stride;
      src_stride *= static_cast<int64_t>(size[a]);
      dst += index[a] * static_cast<int64_t>(offsets[a]);
    }
    const float* in = values.data() + src;
    Pixel* out = base + dst;
    for (int64_t x = 0; x < width; ++x)
      out[x] = FromFloat<Pixel>(in[x]);
  });
}

/// The engine options for the filters' settings. The engine always runs `valid` on the padded
/// buffer, so its boundary setting is irrelevant.
inline Options MakeOptions(bool use_gpu, int device_index, unsigned int outputs_per_thread,
                           int threads) {
  Options options;
  options.operation = Operation::Convolution;
  options.region = OutputRegion::Valid;
  options.boundary = Boundary::Zero;
  options.backend = use_gpu ? Backend::Auto : Backend::Cpu;
  options.cuda_device = device_index;
  options.expert.outputs_per_thread = static_cast<int>(outputs_per_thread);
  options.threads = threads;
  return options;
}

/// CPU worker threads for the engine: ITK's thread count for this filter (its multi-threader's
/// maximum, i.e. ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS when set), capped by its NumberOfWorkUnits
/// so that SetNumberOfWorkUnits(1) gives a single-threaded run as with ITK's own filters.
inline int CpuThreads(itk::ProcessObject* filter) {
  const auto threads = filter->GetMultiThreader()->GetMaximumNumberOfThreads();
  const auto units = filter->GetNumberOfWorkUnits();
  return static_cast<int>(std::max<itk::ThreadIdType>(1, std::min(threads, units)));
}

/// A one-line description of what the engine did, for GetBackendDescription().
inline std::string DescribeRun(const RunReport& report) {
  std::ostringstream s;
  s << to_string(report.backend);
  if (!report.device_name.empty())
    s << " on " << report.device_name;
  if (report.backend == Backend::Cpu && report.threads > 0)
    s << ", " << report.threads << (report.threads == 1 ? " worker thread" : " worker threads");
  if (report.outputs_per_thread > 0)
    s << ", " << report.outputs_per_thread << " outputs per thread";
  if (report.slabs > 1)
    s << ", " << report.slabs << " slabs";
  if (!report.backend_reason.empty())
    s << " (" << report.backend_reason << ")";
  return s.str();
}

/// Runs `engine_call(options)` with the filter's progress reporting mapped onto
/// [progress_from, progress_to] and its AbortGenerateData flag honoured between the engine's
/// pieces of work. Engine errors become itk::ExceptionObject (itk::ProcessAborted for an abort)
/// whose description starts with the filter's name.
template <typename TCall>
RunReport RunEngine(itk::ProcessObject* filter, Options options, float progress_from,
                    float progress_to, TCall&& engine_call) {
  options.progress = [filter, progress_from, progress_to](double fraction) {
    filter->UpdateProgress(progress_from +
                           static_cast<float>(fraction) * (progress_to - progress_from));
    return !filter->GetAbortGenerateData();
  };
  const std::string name = filter->GetNameOfClass();
  try {
    return engine_call(options);
  } catch (const Aborted&) {
    itk::ProcessAborted e(__FILE__, __LINE__);
    e.SetDescription("ndconv::" + name + ": aborted by AbortGenerateData");
    e.SetLocation(ITK_LOCATION);
    throw e;
  } catch (const std::bad_alloc&) {
    throw itk::ExceptionObject(__FILE__, __LINE__, "ndconv::" + name + ": out of memory",
                               ITK_LOCATION);
  } catch (const std::exception& error) {
    throw itk::ExceptionObject(__FILE__, __LINE__, "ndconv::" + name + ": " + error.what(),
                               ITK_LOCATION);
  }
}

/// Throws itk::ProcessAborted when the filter has been asked to stop.
inline void CheckAbort(itk::ProcessObject* filter) {
  if (filter->GetAbortGenerateData()) {
    itk::ProcessAborted e(__FILE__, __LINE__);
    e.SetDescription(std::string("ndconv::") + filter->GetNameOfClass() +
                     ": aborted by AbortGenerateData");
    e.SetLocation(ITK_LOCATION);
    throw e;
  }
}

}  // namespace itk_bridge
}  // namespace ndconv

#endif
