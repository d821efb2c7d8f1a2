// The filter calls' checks of a filter's shape, shared with the plan (ndconv/plan.h), which has a
// shape and no taps.
#pragma once

#include "ndconv/types.h"

namespace ndconv::detail {

/// Throws InvalidArgument unless a dense filter of `dims` axes and `extent` lies within the
/// engine's limits (validate_dense_filter without the taps).
void validate_dense_shape(int dims, const Index& extent);

}  // namespace ndconv::detail
