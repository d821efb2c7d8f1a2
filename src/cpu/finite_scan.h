// A quick scan for NaN and Inf in the input. The row kernels multiply every source row by a
// weight table that holds zeros where a blocked output has no tap (kernel_set.h); 0 * NaN is NaN,
// so with B > 1 a non-finite input voxel would reach outputs whose footprint does not contain
// it. The drivers therefore use B = 1 (no zero weights of their own) for such inputs, which then
// behave exactly like the float64 reference: NaN and Inf reach the outputs whose footprint holds
// them, and only those.
#pragma once

#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cpu {

/// Whether any voxel of `volume` is NaN or +-Inf. Runs on `threads` threads.
bool has_non_finite(const ConstVolumeView& volume, int threads);

/// Whether stored values may convert to NaN or +-Inf (floating types; integers whose scale and
/// offset reach past float's range), told from the type alone, for inputs converted slab by slab.
bool may_be_non_finite(const StoredVolumeView& volume);

}  // namespace ndconv::cpu
