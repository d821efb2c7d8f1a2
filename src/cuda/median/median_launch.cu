// The GPU median's launcher: the sorted-columns kernel for the 3D radius-1 window (its outputs per
// thread from Tuning), else the block shape whose staged input box fits the device's shared memory
// and the selection (forgetful for the other small isotropic windows, else counting, compiled per
// radius along the last axis); stages the volume on the device and back; every CUDA call checked.
#include <chrono>
#include <string>
#include <utility>

#include "cuda/check.h"
#include "cuda/filter_staging.h"
#include "cuda/host_call.h"
#include "cuda/median/median.h"
#include "cuda/median/median_kernel.cuh"
#include "cuda/median/median_select.h"
#include "cuda/tuning.h"
#include "ndconv/errors.h"
#include "ndconv/filters.h"

namespace ndconv::cuda_median {

namespace {

static_assert(kMaxLastRadius == kMaxMedianRadius, "a kernel for every radius the API takes");

// Block shapes (threads along x, threads along y), widest first: a warp along x reads
// consecutive shared-memory words; narrower blocks only for windows whose box is too large.
constexpr int kShapes[][2] = {{32, 4}, {32, 2}, {16, 4}, {16, 2}, {8, 4}, {8, 2}};

// Shared memory every GPU ndconv runs on gives a block (the opt-in limit of compute
// capability 8.6 and 8.9; 9.0 gives 227 KiB).
constexpr int64_t kPortableSharedBytes = 99 * 1024;

int64_t tile_bytes(const MedianGrid& g) {
  return int64_t{g.tile_keys()} * 4;
}

// The widest shape whose tile fits in `limit` bytes; false when none does.
bool plan(int dims, const Index& extent, const Index& radius, Boundary boundary, float outside,
          int64_t limit, MedianGrid& grid) {
  for (const auto& shape : kShapes) {
    grid = median_grid(dims, extent.data(), radius.data(), static_cast<int>(boundary), outside,
                       shape[0], shape[1]);
    if (tile_bytes(grid) <= limit)
      return true;
  }
  return false;
}

template <typename Select>
void launch(const float* in, float* out, const MedianGrid& g, cudaStream_t stream) {
  const auto kernel = median_kernel<Select>;
  const size_t bytes = static_cast<size_t>(tile_bytes(g));
  if (bytes > 48 * 1024)  // above the default: opt in
    NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
  kernel<<<static_cast<unsigned>(g.block_count()), dim3(g.threads_x, g.threads_y), bytes, stream>>>(
      in, out, g);
  NDCONV_CUDA_CHECK_LAUNCH("median_kernel");
}

// The sorted-columns kernel of Shape; false where it cannot run (its 32-bit offsets inside a
// block's input box would overflow, or too many blocks).
template <typename Shape>
bool launch_columns(const float* in, float* out, const Index& extent, Boundary boundary,
                    float outside, cudaStream_t stream) {
  const MedianGrid g = column_grid<Shape>(extent.data(), static_cast<int>(boundary), outside);
  if (!column_offsets_fit<Shape>(extent.data()) || g.block_count() > int64_t{0x7fffffff})
    return false;
  const auto kernel = median_columns_kernel<Shape>;
  constexpr size_t kBytes = size_t{Shape::kKeys} * 4;
  static_assert(kBytes <= kPortableSharedBytes, "fits every GPU ndconv runs on");
  if (kBytes > 48 * 1024)  // above the default: opt in
    NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kBytes)));
  kernel<<<static_cast<unsigned>(g.block_count()), dim3(Shape::kX, Shape::kY), kBytes, stream>>>(
      in, out, g);
  NDCONV_CUDA_CHECK_LAUNCH("median_columns_kernel");
  return true;
}

// launch_columns with Tuning::median_column_outputs outputs a thread.
bool try_columns(const float* in, float* out, const Index& extent, Boundary boundary, float outside,
                 cudaStream_t stream, int outputs) {
  auto run = [&](auto shape) {
    return launch_columns<decltype(shape)>(in, out, extent, boundary, outside, stream);
  };
  switch (outputs) {
    case 8:
      return run(ColumnShape<32, 4, 8>{});
    case 12:
      return run(ColumnShape<32, 4, 12>{});
    case 14:
      return run(ColumnShape<32, 4, 14>{});
    case 16:
      return run(ColumnShape<32, 4, 16>{});
    default:
      throw InvalidArgument("Tuning::median_column_outputs must be 8, 12, 14 or 16");
  }
}

template <int... kRadii>
void launch_counting(std::integer_sequence<int, kRadii...>, const float* in, float* out,
                     const MedianGrid& g, cudaStream_t stream) {
  ((kRadii == g.radius[g.last] ? launch<CountingSelect<kRadii>>(in, out, g, stream) : void()), ...);
}

}  // namespace

bool can_implement(int dims, const Index& radius, std::string& why) {
  const Index extent{1, 1, 1, 1};
  MedianGrid g;
  if (radius[dims - 1] > kMaxLastRadius) {
    why = "the GPU median takes a radius of at most " + std::to_string(kMaxLastRadius) +
          " along the last axis";
    return false;
  }
  if (!plan(dims, extent, radius, Boundary::Replicate, 0.0f, kPortableSharedBytes, g)) {
    why = "the GPU median's window is too large for a block's shared memory (" +
          std::to_string(tile_bytes(g)) + " bytes)";
    return false;
  }
  return true;
}

void launch_device(const float* input, float* output, int dims, const Index& extent,
                   const Index& radius, Boundary boundary, float outside, void* stream,
                   const cuda_backend::Tuning& tuning) {
  std::string why;
  if (!can_implement(dims, radius, why))
    throw InvalidArgument(why);
  int device = 0;
  NDCONV_CUDA_CHECK(cudaGetDevice(&device));
  int limit = 0;
  NDCONV_CUDA_CHECK(
      cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  MedianGrid g;
  if (!plan(dims, extent, radius, boundary, outside, limit, g))
    throw InvalidArgument("the GPU median's window is too large for this GPU's shared memory (" +
                          std::to_string(tile_bytes(g)) + " bytes)");
  if (g.block_count() > int64_t{0x7fffffff})
    throw InvalidArgument("the volume is too large for the GPU median's grid");
  const auto s = static_cast<cudaStream_t>(stream);
  const int r = forgetful_radius(g);
  if (dims == 2 && r == 1)
    launch<ForgetfulSelect<2, 1>>(input, output, g, s);
  else if (dims == 2 && r == 2)
    launch<ForgetfulSelect<2, 2>>(input, output, g, s);
  else if (dims == 2 && r == 3)
    launch<ForgetfulSelect<2, 3>>(input, output, g, s);
  else if (dims == 3 && r == 1 &&
           try_columns(input, output, extent, boundary, outside, s, tuning.median_column_outputs))
    return;
  else
    launch_counting(std::make_integer_sequence<int, kMaxLastRadius + 1>{}, input, output, g, s);
}

void run(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
         Boundary boundary, float outside, int device, RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  using namespace cuda_filters;
  std::string why;
  if (!can_implement(input.dims, radius, why))
    throw InvalidArgument(why);
  report.device_name = select_device(device);
  const int64_t voxels = input.voxel_count();

  auto t0 = std::chrono::steady_clock::now();
  DeviceBuffer<float> d_in(static_cast<size_t>(voxels)), d_out(static_cast<size_t>(voxels));
  upload(input, d_in.data);
  report.seconds_upload = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  launch_device(d_in.data, d_out.data, input.dims, input.extent, radius, boundary, outside,
                nullptr);
  finish_and_download(d_out.data, output, t0, report);
}

void run_device(const ConstVolumeView& input, const VolumeView& output, const Index& radius,
                Boundary boundary, float outside, const Options& options, void* stream,
                RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  cuda_backend::prepare_device_call(input, output, options, report);
  launch_device(input.data, output.data, input.dims, input.extent, radius, boundary, outside,
                stream);
}

}  // namespace ndconv::cuda_median
