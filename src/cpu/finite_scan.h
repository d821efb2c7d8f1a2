// A quick scan for NaN and Inf in the input. The filter bank's row kernels multiply every source
// row by a weight table that holds zeros where a blocked output has no tap (bank_row_kernel.h);
// 0 * NaN is NaN, so with B > 1 a non-finite input voxel would reach outputs whose footprint does
// not contain it. The bank therefore uses B = 1 (no zero weights of its own) for such inputs,
// which then behave exactly like the float64 reference: NaN and Inf reach the outputs whose
// footprint holds them, and only those. (The dense and separable kernels skip the rows an output
// has no tap in, kernel_set.h, and need no scan.)
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
