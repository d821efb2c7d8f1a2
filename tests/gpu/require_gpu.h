// NDCONV_REQUIRE_GPU(): the first statement of a GPU test, which skips it with the reason when no
// usable GPU exists (CI and machines without a driver), so that the suite runs everywhere.
#pragma once

#include <gtest/gtest.h>

#include "ndconv/engine.h"

#define NDCONV_REQUIRE_GPU()                                      \
  do {                                                            \
    const ::ndconv::CudaStatus status_ = ::ndconv::cuda_status(); \
    if (!status_.usable)                                          \
      GTEST_SKIP() << "no usable GPU: " << status_.reason;        \
  } while (0)
