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
/// has `k` taps along the blocked axis, for a kernel set with strips of W vectors (on average:
/// effective_strip_vectors) of `lanes` floats, with or without fused multiply-add.
double modelled_cost(int factor, int64_t k, double strip_vectors, int lanes, bool fma);

/// The same for a ring of K = k accumulator strips over a column of `outputs` outputs, with
/// strips of W vectors.
double modelled_ring_cost(int64_t k, int64_t outputs, double strip_vectors, int lanes, bool fma);

/// The mean strip width, in vectors, that cover_row (row_kernel.h) gives a row of `nx` outputs
/// with strips of at most `strip_vectors` (`nx` = 0: long rows, full strips).
double effective_strip_vectors(int64_t nx, int lanes, int strip_vectors);

/// What the rule chooses for.
struct BlockingShape {
  int64_t k = 1;                  ///< the filter's taps along the blocked axis
  int64_t outputs = 1;            ///< outputs along the blocked axis
  int64_t nx = 0;                 ///< outputs along x (0: long rows)
  int64_t taps_per_position = 1;  ///< the filter's taps per position along the blocked axis
  bool ring_allowed = false;      ///< contiguous output rows (RingColumn)
  int64_t ring_column = 0;        ///< a ring's outputs per column (0: the whole axis)
};

/// A block's weight table (kernel_set.h, [tap][B] over its k + B - 1 positions) is streamed once
/// per strip: blocks whose table outgrows the L1 cache wait on the L2 for their broadcasts and
/// are not chosen (4D, 7^4, 64^3 x 20 on the AVX-512 VM: B = 8's 150 KiB table 120 ms, B = 4's
/// 54 KiB 76 ms, on 2 threads).
inline constexpr int64_t kMaxWeightTableBytes = int64_t{64} << 10;

/// `requested` = 0: the factor of least modelled cost (ties go to the smaller factor), capped so
/// that a block is not longer than the output along the blocked axis nor than k + 1, and its
/// weight table within kMaxWeightTableBytes, or, where `ring_allowed` and it costs less, a ring
/// of k. Otherwise `requested` must be one of kBlockingFactors (else InvalidArgument). Every
/// choice multiplies only the filter's own taps (kernel_set.h), so NaN and Inf inputs need none of
/// their own.
BlockingChoice choose_blocking(int requested, const BlockingShape& shape, const KernelSet& kernels);

}  // namespace ndconv::cpu
