#include "cpu/bank_rule.h"

#include <cstdio>

#include "ndconv/errors.h"

namespace ndconv::cpu {

namespace {

std::vector<BankPass> split_into_passes(int filters, int b_index, int w_index,
                                        const BankKernelSet& kernels) {
  std::vector<BankPass> passes;
  int first = 0;
  while (first < filters) {
    BankPass pass;
    for (int i = 0; i < kBankFiltersPerPassCount; ++i) {
      const int fp = kBankFiltersPerPass[i];
      if (fp <= filters - first && kernels.block[i][b_index][w_index] != nullptr) {
        pass.filters = fp;
        pass.filters_index = i;
      }
    }
    if (pass.filters == 0)
      return {};  // not even FP = 1 fits: this B and W are not compiled
    pass.first_filter = first;
    first += pass.filters;
    passes.push_back(pass);
  }
  return passes;
}

double pass_cycles(int fp, int b, int w, int64_t k, const BankKernelSet& kernels) {
  const double waste = (static_cast<double>(k) + b - 1) / static_cast<double>(k);
  const double load = (1 + 2 * (kernels.lanes - 1) / 16.0) / 2;
  const double multiply_add = kernels.fma ? 0.5 : 1.0;
  return waste * (load * w + 0.5 * fp * b + multiply_add * fp * b * w) / (b * w);
}

}  // namespace

BankShape choose_bank_shape(int filters, int requested, int64_t k, int64_t outputs_along_axis,
                            const BankKernelSet& kernels, bool non_finite_input) {
  if (requested != 0 && requested != 1 && requested != 2 && requested != 4) {
    throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                          " is not supported by the CPU filter bank (use 0 for automatic, or 1, "
                          "2 or 4)");
  }
  BankShape best;
  double best_cost = 0;
  std::string costs;
  for (int bi = 0; bi < kBankBlockFactorCount; ++bi) {
    const int b = kBankBlockFactors[bi];
    if (non_finite_input && b != 1)
      continue;
    if (!non_finite_input && requested != 0 && b != requested)
      continue;
    if (requested == 0 && b > 1 && b > outputs_along_axis)
      continue;  // a block longer than the axis only computes padding
    for (int wi = 0; wi < kBankStripVectorCount; ++wi) {
      const int w = kBankStripVectors[wi];
      std::vector<BankPass> passes = split_into_passes(filters, bi, wi, kernels);
      if (passes.empty())
        continue;
      double cycles = 0;
      for (const BankPass& p : passes)
        cycles += pass_cycles(p.filters, b, w, k, kernels);
      const double cost = cycles / filters;
      char text[64];
      std::snprintf(text, sizeof text, "%sB=%d W=%d: %.3f", costs.empty() ? "" : ", ", b, w, cost);
      costs += text;
      if (best.passes.empty() || cost < best_cost - 1e-12) {
        best_cost = cost;
        best.factor = b;
        best.factor_index = bi;
        best.strip_vectors = w;
        best.strip_index = wi;
        best.passes = std::move(passes);
      }
    }
  }
  if (best.passes.empty())
    throw InvalidArgument("no CPU filter bank kernel fits this instruction set");
  std::string fps;
  for (const BankPass& p : best.passes)
    fps += (fps.empty() ? "" : "+") + std::to_string(p.filters);
  best.reason = std::string(non_finite_input ? "the input holds NaN or Inf: B = 1; "
                            : requested != 0 ? "requested B; "
                                             : "automatic: ") +
                "least modelled cycles per useful FMA for " + std::to_string(filters) +
                " filters, " + std::to_string(k) + " taps along the blocked axis (" + costs +
                "); filters per pass " + fps;
  return best;
}

}  // namespace ndconv::cpu
