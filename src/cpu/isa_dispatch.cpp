// Run-time instruction-set dispatch: checks the CPU once with __builtin_cpu_supports (which also
// checks that the OS saves the wide registers) and picks the widest compiled kernel set.
#include "cpu/isa_dispatch.h"

#include <cstdlib>

#include "ndconv/errors.h"

namespace ndconv::cpu {

std::vector<const KernelSet*> available_kernel_sets() {
  std::vector<const KernelSet*> sets;
#if NDCONV_CPU_X86_KERNELS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    sets.push_back(&kernels_avx512());
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    sets.push_back(&kernels_avx2());
#endif
  sets.push_back(&kernels_generic());
  return sets;
}

const KernelSet& select_kernel_set() {
  static const std::vector<const KernelSet*> sets = available_kernel_sets();
  const char* wanted = std::getenv("NDCONV_CPU_ISA");
  if (wanted == nullptr || *wanted == '\0')
    return *sets.front();
  std::string have;
  for (const KernelSet* s : sets) {
    if (std::string(wanted) == s->isa)
      return *s;
    have += std::string(have.empty() ? "" : ", ") + s->isa;
  }
  throw InvalidArgument(std::string("NDCONV_CPU_ISA=") + wanted +
                        " is not available on this CPU (available: " + have + ")");
}

}  // namespace ndconv::cpu
