// The CPU backend's entry points that are not a driver: the blocking factors it is compiled
// for. The drivers are dense.cpp and separable.cpp; the design is in docs/cpu-backend.md.
#include "cpu/cpu_backend.h"

#include "cpu/blocking_rule.h"
#include "cpu/isa_dispatch.h"
#include "cpu/kernel_set.h"

namespace ndconv::cpu_backend {

const std::vector<int>& supported_blocking_factors() {
  static const std::vector<int> factors(std::begin(cpu::kBlockingFactors),
                                        std::end(cpu::kBlockingFactors));
  return factors;
}

RowsPlan plan_rows(int requested, int64_t k, int64_t outputs, int64_t nx,
                   int64_t taps_per_position) {
  const cpu::KernelSet& kernels = cpu::select_kernel_set();
  const cpu::BlockingChoice choice =
      cpu::choose_blocking(requested, {k, outputs, nx, taps_per_position, true}, kernels);
  return {kernels.isa, choice.factor, choice.reason};
}

}  // namespace ndconv::cpu_backend
