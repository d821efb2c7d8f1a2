// The blocking rule. A block of B outputs along the blocked axis walks k + B - 1 input rows; row
// r feeds the outputs b with 0 <= r - b < k (the kernel skips the others: TapSegment), so a block
// loads each of its k + B - 1 rows once per tap and does exactly k * B useful row-by-tap
// multiply-adds. Per tap a strip of W vectors issues W unaligned input loads per row, one weight
// broadcast and W multiply-adds per output the row feeds; the modelled cycles per useful
// multiply-add vector are
//     ((k + B - 1) * a * W + k * (0.5 * B + f * B * W)) / (k * B * W)
// with f = 0.5 (two FMA pipes) or 1 (no FMA: a multiply and an add), 0.5 per broadcast (a load
// on one of two load ports; 1 without FMA, i.e. SSE2, which has no broadcast load: a load and a
// shuffle) and a = (1 + 2 * s) / 2 per input load, s = (lanes - 1) / 16 being the share of
// unaligned loads that split a 64-byte cache line; the factor 2 on splits is fitted to the
// measurements in docs/cpu-backend.md (160^3 volume, 7^3 filter: the model's choice is the
// measured best for every instruction set: AVX-512 B = 8, AVX2 B = 4, generic B = 2).
// k = 1 always gives B = 1 (no row is shared by two outputs); B is at most k + 1, and its weight
// table at most kMaxWeightTableBytes (blocking_rule.h). W is the mean width of the strips that
// cover the row (a row of 4 vectors takes strips of 2 and 2 where W is 3).
// A ring of K = k accumulator strips (RingColumn) reads each row once for all k outputs it
// feeds: per tap W loads, K broadcasts and K * W multiply-adds, at
//     (a * W + 0.5 * K + f * K * W) / (K * W) * (n + K - 1) / n
// for a column of n outputs (its ends feed sums that are never stored); it runs where it costs
// less than the best block (for 2 to 8 taps: kernel_set.h says why not more).
#include "cpu/blocking_rule.h"

#include <algorithm>
#include <cstdio>

#include "ndconv/errors.h"

namespace ndconv::cpu {

double modelled_cost(int factor, int64_t k, double strip_vectors, int lanes, bool fma) {
  const double b = factor, w = strip_vectors;
  const double taps = static_cast<double>(k);
  const double split_share = (lanes - 1) / 16.0;
  const double load = (1 + 2 * split_share) / 2;
  const double multiply_add = fma ? 0.5 : 1.0;
  const double broadcast = fma ? 0.5 : 1.0;
  return ((taps + b - 1) * load * w + taps * (broadcast * b + multiply_add * b * w)) /
         (taps * b * w);
}

double modelled_ring_cost(int64_t k, int64_t outputs, double strip_vectors, int lanes, bool fma) {
  const double ring = static_cast<double>(k), w = strip_vectors;
  const double split_share = (lanes - 1) / 16.0;
  const double load = (1 + 2 * split_share) / 2;
  const double multiply_add = fma ? 0.5 : 1.0;
  const double broadcast = fma ? 0.5 : 1.0;
  const double n = static_cast<double>(outputs);
  return (load * w + broadcast * ring + multiply_add * ring * w) / (ring * w) * (n + ring - 1) / n;
}

double effective_strip_vectors(int64_t nx, int lanes, int strip_vectors) {
  if (nx <= 0)
    return strip_vectors;
  const int64_t vectors = (nx + lanes - 1) / lanes;
  const int64_t strips = (vectors + strip_vectors - 1) / strip_vectors;
  return static_cast<double>(vectors) / static_cast<double>(strips);
}

BlockingChoice choose_blocking(int requested, const BlockingShape& shape,
                               const KernelSet& kernels) {
  const int64_t k = shape.k;
  BlockingChoice c;
  if (requested != 0) {
    for (int i = 0; i < kBlockingFactorCount; ++i) {
      if (kBlockingFactors[i] == requested) {
        c.factor = requested;
        c.index = i;
        c.reason = "requested";
      }
    }
    if (c.reason.empty()) {
      throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                            " is not supported by the CPU backend (use 0 for automatic, or 1, 2, "
                            "4 or 8)");
    }
  }
  if (requested != 0)
    return c;
  double best = 0;
  std::string costs;
  for (int i = 0; i < kBlockingFactorCount; ++i) {
    const int b = kBlockingFactors[i];
    const double cost = modelled_cost(
        b, k, effective_strip_vectors(shape.nx, kernels.lanes, kernels.strip_vectors[i]),
        kernels.lanes, kernels.fma);
    char text[64];
    std::snprintf(text, sizeof text, "%sB=%d: %.3f", costs.empty() ? "" : ", ", b, cost);
    costs += text;
    if (b > 1 && b > shape.outputs)
      continue;  // a block longer than the axis only computes padding
    if (b > 1 &&
        b * (k + b - 1) * shape.taps_per_position * int64_t{sizeof(float)} > kMaxWeightTableBytes)
      continue;
    // No position of a block longer than k + 1 feeds more than k of its outputs, and most feed
    // fewer: its accumulators sit idle and its few busy chains wait on the FMA latency, which
    // the model leaves out (k = 3, AVX-512: B = 8 measured 1.27x the time of B = 4).
    if (b > 1 && b > k + 1)
      continue;
    if (i == 0 || cost < best) {
      best = cost;
      c.factor = b;
      c.index = i;
    }
  }
  if (shape.ring_allowed && k >= kMinRingTaps && k <= kMaxRingTaps && kernels.ring[k] != nullptr) {
    const double cost = modelled_ring_cost(
        k, shape.ring_column > 0 ? shape.ring_column : shape.outputs,
        effective_strip_vectors(shape.nx, kernels.lanes, kernels.ring_strip_vectors[k]),
        kernels.lanes, kernels.fma);
    char text[64];
    std::snprintf(text, sizeof text, ", ring of %d: %.3f", static_cast<int>(k), cost);
    costs += text;
    if (cost < best) {
      c.factor = static_cast<int>(k);
      c.ring = true;
    }
  }
  c.reason = std::string("automatic: ") +
             (c.ring ? "a ring of " + std::to_string(k) + " accumulator strips"
                     : "B = " + std::to_string(c.factor)) +
             ", the least modelled cycles per useful FMA for " + std::to_string(k) +
             " taps along the blocked axis (" + costs + ")";
  return c;
}

}  // namespace ndconv::cpu
