// The filter calls' checks of a filter's shape, shared with the plan (ndconv/plan.h), which has a
// shape and no taps.
#pragma once

#include "ndconv/types.h"

namespace ndconv::detail {

/// Throws InvalidArgument unless a dense filter of `dims` axes and `extent` lies within the
/// engine's limits (validate_dense_filter without the taps).
void validate_dense_shape(int dims, const Index& extent);

/// The boundary the backends run for `options`: Boundary::Constant as Zero (the dense and the
/// separable calls add the value's terms themselves, core/constant_border.h). Throws
/// InvalidArgument when Options::boundary_value is not finite, and when `filter` (not null) is
/// given Boundary::Constant with a value other than 0, naming that filter.
Boundary backend_boundary(const Options& options, const char* filter);

}  // namespace ndconv::detail
