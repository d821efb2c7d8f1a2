// The conversion of one stored value to float (ndconv/stored.h), shared by the CPU conversion and
// the device conversion kernel so that both round the same way: the product and the sum are
// rounded separately in double (never fused into one FMA, which nvcc would do for a * b + c), then
// once to float. Scale 1 and offset 0 skip the arithmetic, so that a float keeps its sign of zero.
#pragma once

#include "core/host_device.h"

#ifdef __CUDA_ARCH__
#define NDCONV_CONVERT_MUL(a, b) __dmul_rn(a, b)
#define NDCONV_CONVERT_ADD(a, b) __dadd_rn(a, b)
#else
#define NDCONV_CONVERT_MUL(a, b) ((a) * (b))
#define NDCONV_CONVERT_ADD(a, b) ((a) + (b))
#endif

namespace ndconv::convert {

template <typename T>
NDCONV_HD float stored_to_float(T value, bool identity, double scale, double offset) {
  if (identity)
    return static_cast<float>(value);
  const double product = NDCONV_CONVERT_MUL(static_cast<double>(value), scale);
  return static_cast<float>(NDCONV_CONVERT_ADD(product, offset));
}

}  // namespace ndconv::convert
