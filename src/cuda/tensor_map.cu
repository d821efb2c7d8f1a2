// Encoding of the bulk copies' tensor maps (tensor_map.h). The encoder is a driver function;
// the runtime hands out its address (cudaGetDriverEntryPointByVersion), so the library links only
// the runtime and a machine without a driver never gets here (the backend is unusable there).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>

#include "cuda/check.h"
#include "cuda/tensor_map.h"

namespace ndconv::cuda_backend {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Copied byte for byte (the driver aligns its type to 128 bytes; the copy instruction needs 64).
static_assert(sizeof(CUtensorMap) == sizeof(kernels::TensorMap),
              "kernels::TensorMap must hold a CUtensorMap");

// The driver's encoder, or null when the driver has none (older than CUDA 12.0). A failed lookup
// is an answer, not an error: the launch then copies its planes thread by thread.
EncodeTiled encoder() {
  static const EncodeTiled fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                           cudaEnableDefault, &found);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // clear it: the lookup's failure is handled here
      return EncodeTiled{nullptr};
    }
    return found == cudaDriverEntryPointSuccess ? reinterpret_cast<EncodeTiled>(f) : nullptr;
  }();
  return fn;
}

}  // namespace

std::string encode_box_map(int device, const kernels::Geometry& g, const float* in,
                           const uint32_t (&box)[kernels::kAxes], kernels::TensorMap& map) {
  int major = 0;
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    return "the device has no bulk tensor copy (compute capability below 9.0)";
  const EncodeTiled encode = encoder();
  if (encode == nullptr)
    return "the driver has no tensor map encoder";
  cuuint64_t dims[kernels::kAxes];
  cuuint64_t strides[kernels::kAxes - 1];  // bytes, axes 1..3
  for (int a = 0; a < kernels::kAxes; ++a)
    dims[a] = static_cast<cuuint64_t>(g.in_extent[a]);
  for (int a = 1; a < kernels::kAxes; ++a) {
    // A unit axis is only ever read at index 0: any stride the encoder accepts will do.
    const cuuint64_t packed =
        a == 1 ? (dims[0] * sizeof(float) + 15) / 16 * 16 : strides[a - 2] * dims[a - 1];
    strides[a - 1] =
        g.in_extent[a] > 1 ? static_cast<cuuint64_t>(g.in_stride[a]) * sizeof(float) : packed;
  }
  const cuuint32_t element_strides[kernels::kAxes] = {1, 1, 1, 1};
  CUtensorMap encoded;
  const CUresult r = encode(&encoded, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, kernels::kAxes,
                            const_cast<float*>(in), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return "the driver could not encode a tensor map for this layout (CUresult " +
           std::to_string(static_cast<int>(r)) + ")";
  std::memcpy(&map, &encoded, sizeof(map));
  return "";
}

}  // namespace ndconv::cuda_backend
