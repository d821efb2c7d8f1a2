// The blocking rule. A block of B outputs along the blocked axis walks k + B - 1 input rows; row
// r feeds output b with the tap r - b, and the weight table holds zeros where that tap does not
// exist, so a block does (k + B - 1) * B row-by-tap multiply-adds of which k * B are useful:
// the waste factor is (k + B - 1) / k. In exchange, each input vector loaded from L1 feeds B
// multiply-adds instead of one. Per (row, x tap) a strip of W vectors issues W input loads plus
// B weight broadcasts and B * W FMAs; with two FMA and two load issue slots per cycle (every
// x86 core since Haswell), the cost per useful FMA vector is
//     waste * max(1, (W + B) / (B * W)) / 2.
// Example, k = 7 with AVX2 (W = 4, 4, 3, 1 for B = 1, 2, 4, 8): 0.625, 0.571, 0.714, 1.125,
// so B = 2; k = 1 always gives B = 1 (no row is shared by two outputs).
#include "cpu/blocking_rule.h"

#include <algorithm>
#include <cstdio>

#include "ndconv/errors.h"

namespace ndconv::cpu {

double modelled_cost(int factor, int strip_vectors, int64_t k) {
  const double b = factor, w = strip_vectors;
  const double waste = (static_cast<double>(k) + b - 1) / static_cast<double>(k);
  const double loads_per_fma = (w + b) / (b * w);
  return waste * std::max(1.0, loads_per_fma) / 2.0;
}

BlockingChoice choose_blocking(int requested, int64_t k, int64_t outputs_along_axis,
                               const KernelSet& kernels) {
  BlockingChoice c;
  if (requested != 0) {
    for (int i = 0; i < kBlockingFactorCount; ++i) {
      if (kBlockingFactors[i] == requested) {
        c.factor = requested;
        c.index = i;
        c.reason = "requested";
        return c;
      }
    }
    throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                          " is not supported by the CPU backend (use 0 for automatic, or 1, 2, "
                          "4 or 8)");
  }
  double best = 0;
  std::string costs;
  for (int i = 0; i < kBlockingFactorCount; ++i) {
    const int b = kBlockingFactors[i];
    const double cost = modelled_cost(b, kernels.strip_vectors[i], k);
    char text[64];
    std::snprintf(text, sizeof text, "%sB=%d: %.3f", costs.empty() ? "" : ", ", b, cost);
    costs += text;
    if (b > 1 && b > outputs_along_axis)
      continue;  // a block longer than the axis only computes padding
    if (i == 0 || cost < best) {
      best = cost;
      c.factor = b;
      c.index = i;
    }
  }
  c.reason = "automatic: least modelled cycles per useful FMA for " + std::to_string(k) +
             " taps along the blocked axis (" + costs + ")";
  return c;
}

}  // namespace ndconv::cpu
