// The kernels' host/device helpers (NDCONV_HD and the unrolling macros come from
// core/host_device.h): the __host__ __device__ twin of detail::boundary_index (core/problem.h).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/boundary_index.h"
#include "core/host_device.h"

namespace ndconv::kernels {

// The boundary map of core/boundary_index.h under the kernels' names.
using detail::boundary_index_hd;
using detail::boundary_index_t;
using detail::BoundaryCode;
using detail::kConstant;
using detail::kMirror;
using detail::kPeriodic;
using detail::kReflect;
using detail::kReplicate;
using detail::kZero;

}  // namespace ndconv::kernels
