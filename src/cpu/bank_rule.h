// The CPU filter bank's shape: outputs per block B along the blocked axis, vectors per strip W,
// and how the F filters are split into passes of FP filters each (bank_kernel_set.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpu/bank_kernel_set.h"

namespace ndconv::cpu {

struct BankPass {
  int first_filter = 0;
  int filters = 0;        ///< FP
  int filters_index = 0;  ///< index into kBankFiltersPerPass
};

struct BankShape {
  int factor = 1;  ///< B
  int factor_index = 0;
  int strip_vectors = 1;  ///< W
  int strip_index = 0;
  std::vector<BankPass> passes;
  std::string reason;
};

/// The rule. For each B and W the filters are split greedily into passes of the largest compiled
/// FP that fits the register file (FP * B * W accumulators + W inputs + 1 weight <= registers)
/// and is not more than the filters left. A pass over one tap row costs, per output vector,
///   waste * (a * W + 0.5 * FP * B + f * FP * B * W) / (B * W)    cycles
/// (waste = (k + B - 1) / k, a = (1 + 2 (lanes - 1) / 16) / 2 per unaligned input load, 0.5 per
/// weight broadcast, f = 0.5 per fused multiply-add or 1 without FMA; the single-filter model of
/// blocking_rule.h with FP * B outputs per load). The shape of least total cost per useful
/// multiply-add wins (ties: smaller B, then smaller W). `requested` B (0 = automatic) must be 1, 2
/// or 4; `non_finite_input` forces B = 1 (finite_scan.h).
BankShape choose_bank_shape(int filters, int requested, int64_t k, int64_t outputs_along_axis,
                            const BankKernelSet& kernels, bool non_finite_input);

}  // namespace ndconv::cpu
