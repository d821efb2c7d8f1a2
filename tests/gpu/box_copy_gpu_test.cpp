// copy_boxes_device (ndconv/device.h; skipped without a usable GPU): boxes of several device
// volumes copied into a target on a non-blocking stream, against the same copies on the host: 3D
// float32 and 4D uint8 (each box copied plane by plane along the 4th axis), boxes touching every
// face, empty boxes skipped, the rest of the target untouched; host memory refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ndconv/device.h"
#include "ndconv/errors.h"
#include "require_gpu.h"
#include "test_data.h"

#ifdef NDCONV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace ndconv::test {
namespace {

#ifdef NDCONV_HAVE_CUDA

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

int64_t volume_of(const Index& e) {
  return e[0] * e[1] * e[2] * e[3];
}

int64_t offset_of(const Index& e, int64_t x, int64_t y, int64_t z, int64_t t) {
  return ((t * e[2] + z) * e[1] + y) * e[0] + x;
}

// The boxes' copies on the host, value by value.
void copy_on_host(const std::vector<std::vector<unsigned char>>& sources,
                  const std::vector<Index>& extents, std::size_t value_bytes,
                  std::vector<unsigned char>& target, const Index& target_extent,
                  const std::vector<BoxCopy>& boxes) {
  for (const BoxCopy& b : boxes)
    for (int64_t t = 0; t < b.extent[3]; ++t)
      for (int64_t z = 0; z < b.extent[2]; ++z)
        for (int64_t y = 0; y < b.extent[1]; ++y)
          for (int64_t x = 0; x < b.extent[0]; ++x) {
            const Index& e = extents[static_cast<std::size_t>(b.source)];
            const int64_t from = offset_of(e, b.source_start[0] + x, b.source_start[1] + y,
                                           b.source_start[2] + z, b.source_start[3] + t);
            const int64_t to =
                offset_of(target_extent, b.target_start[0] + x, b.target_start[1] + y,
                          b.target_start[2] + z, b.target_start[3] + t);
            std::memcpy(&target[to * value_bytes],
                        &sources[static_cast<std::size_t>(b.source)][from * value_bytes],
                        value_bytes);
          }
}

void check_boxes(int dims, ScalarType type, const std::vector<Index>& extents,
                 const Index& target_extent, const std::vector<BoxCopy>& boxes) {
  const std::size_t value_bytes = scalar_size(type);
  const uint64_t seed = fresh_seed();
  std::vector<std::vector<unsigned char>> host;
  std::vector<void*> device;
  std::vector<StoredVolumeView> views;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    const std::vector<float> values =
        random_values(volume_of(extents[i]) * static_cast<int64_t>(value_bytes), seed + i);
    std::vector<unsigned char> bytes(values.size());
    for (std::size_t k = 0; k < bytes.size(); ++k)
      bytes[k] = static_cast<unsigned char>(values[k] * 255.0f);
    void* d = nullptr;
    CHECK_CUDA(cudaMalloc(&d, bytes.size()));
    CHECK_CUDA(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    host.push_back(bytes);
    device.push_back(d);
    views.push_back(make_stored_view(d, type, dims, extents[i]));
  }
  // The target starts as 0xAB bytes: what no box covers must stay so.
  std::vector<unsigned char> expected(volume_of(target_extent) * value_bytes, 0xAB);
  void* target = nullptr;
  CHECK_CUDA(cudaMalloc(&target, expected.size()));
  CHECK_CUDA(cudaMemcpy(target, expected.data(), expected.size(), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  copy_boxes_device(views, target, target_extent, boxes, 0, stream);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<unsigned char> got(expected.size());
  CHECK_CUDA(cudaMemcpy(got.data(), target, got.size(), cudaMemcpyDeviceToHost));
  copy_on_host(host, extents, value_bytes, expected, target_extent, boxes);
  EXPECT_EQ(got, expected);
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(target));
  for (void* d : device)
    CHECK_CUDA(cudaFree(d));
}

TEST(CudaBoxCopy, ThreeDimensionalFloatBoxesEqualTheHostCopies) {
  NDCONV_REQUIRE_GPU();
  // A 12 x 9 x 7 target put together from a 7 x 9 x 7 block and a 5 x 9 x 7 neighbour, leaving a
  // margin, and a box from the far corner of a third volume, plus an empty box.
  check_boxes(3, ScalarType::Float32, {{7, 9, 7, 1}, {5, 9, 7, 1}, {4, 4, 4, 1}}, {12, 11, 9, 1},
              {BoxCopy{0, {0, 0, 0, 0}, {0, 1, 1, 0}, {7, 9, 7, 1}},
               BoxCopy{1, {0, 0, 0, 0}, {7, 1, 1, 0}, {5, 9, 7, 1}},
               BoxCopy{2, {1, 2, 3, 0}, {9, 7, 8, 0}, {3, 2, 1, 1}},
               BoxCopy{2, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 1, 1, 1}}});
}

TEST(CudaBoxCopy, FourDimensionalUint8BoxesEqualTheHostCopies) {
  NDCONV_REQUIRE_GPU();
  check_boxes(4, ScalarType::UInt8, {{5, 4, 3, 6}, {3, 4, 3, 2}}, {9, 4, 3, 7},
              {BoxCopy{0, {0, 0, 0, 1}, {0, 0, 0, 0}, {5, 4, 3, 5}},
               BoxCopy{1, {1, 0, 1, 0}, {6, 0, 0, 5}, {2, 4, 2, 2}}});
}

TEST(CudaBoxCopy, RefusesHostMemory) {
  NDCONV_REQUIRE_GPU();
  std::vector<float> a(8), target(8);
  EXPECT_THROW(
      copy_boxes_device({make_stored_view(a.data(), ScalarType::Float32, 2, {4, 2})}, target.data(),
                        {4, 2, 1, 1}, {BoxCopy{0, {0, 0, 0, 0}, {0, 0, 0, 0}, {4, 2, 1, 1}}}, 0,
                        nullptr),
      InvalidArgument);
}

#endif  // NDCONV_HAVE_CUDA

}  // namespace
}  // namespace ndconv::test
