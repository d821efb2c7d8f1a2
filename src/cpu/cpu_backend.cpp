// The CPU backend's entry points that are not a driver: the blocking factors it is compiled
// for. The drivers are dense.cpp and separable.cpp; the design is in docs/cpu-backend.md.
#include "engine/cpu_backend.h"

#include "cpu/kernel_set.h"

namespace ndconv::cpu_backend {

const std::vector<int>& supported_blocking_factors() {
  static const std::vector<int> factors(std::begin(cpu::kBlockingFactors),
                                        std::end(cpu::kBlockingFactors));
  return factors;
}

}  // namespace ndconv::cpu_backend
