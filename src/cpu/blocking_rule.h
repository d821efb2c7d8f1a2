// The automatic choice of the CPU blocking factor B (outputs per inner iteration along the
// blocked axis). See docs/cpu-backend.md for the derivation and the measurements behind it.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/kernel_set.h"

namespace ndconv::cpu {

struct BlockingChoice {
  int factor = 1;      ///< B, or K for a ring
  int index = 0;       ///< index into kBlockingFactors (a block's)
  bool ring = false;   ///< a ring of K = k accumulator strips (RingColumn) instead of blocks
  std::string reason;  ///< for RunReport::outputs_per_thread_reason
};

/// Modelled cost, in cycles per useful multiply-add vector, of blocking factor B when the filter
/// has `k` taps along the blocked axis, for a kernel set with strips of W vectors of `lanes`
/// floats, with or without fused multiply-add.
double modelled_cost(int factor, int64_t k, int strip_vectors, int lanes, bool fma);

/// The same for a ring of K = k accumulator strips over a column of `outputs` outputs, with
/// strips of W vectors.
double modelled_ring_cost(int64_t k, int64_t outputs, int strip_vectors, int lanes, bool fma);

/// `requested` = 0: the factor of least modelled cost (ties go to the smaller factor), capped so
/// that a block is not longer than the output along the blocked axis, or, where `ring_allowed`
/// and it costs less, a ring of k over columns of `ring_column` outputs (0: the whole axis).
/// Otherwise `requested` must be one of kBlockingFactors (else InvalidArgument). Every choice
/// multiplies only the filter's own taps (kernel_set.h), so NaN and Inf inputs need none of their
/// own.
BlockingChoice choose_blocking(int requested, int64_t k, int64_t outputs_along_axis,
                               const KernelSet& kernels, bool ring_allowed,
                               int64_t ring_column = 0);

}  // namespace ndconv::cpu
