// Run-time instruction-set dispatch: checks the CPU once with __builtin_cpu_supports (which also
// checks that the OS saves the wide registers) and picks the widest compiled kernel set.
#include "cpu/isa_dispatch.h"

#include <cstdlib>

#if NDCONV_CPU_X86_KERNELS
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

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

namespace {

// The documented user override NDCONV_CPU_ISA (docs/cpu-backend.md), read in this one place:
// empty when unset.
std::string forced_isa() {
  const char* wanted = std::getenv("NDCONV_CPU_ISA");
  return wanted == nullptr ? std::string() : std::string(wanted);
}

}  // namespace

const KernelSet& select_kernel_set() {
  static const std::vector<const KernelSet*> sets = available_kernel_sets();
  const std::string wanted = forced_isa();
  if (wanted.empty())
    return *sets.front();
  std::string have;
  for (const KernelSet* s : sets) {
    if (wanted == s->isa)
      return *s;
    have += std::string(have.empty() ? "" : ", ") + s->isa;
  }
  throw InvalidArgument(std::string("NDCONV_CPU_ISA=") + wanted +
                        " is not available on this CPU (available: " + have + ")");
}

bool request_amx_tile_permission() {
#if NDCONV_CPU_X86_KERNELS && defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

namespace {

AmxSupport detect_amx_int8() {
  AmxSupport s;
  const std::string wanted = forced_isa();
  if (!wanted.empty()) {
    s.why_not = "NDCONV_CPU_ISA=" + wanted + " asks for its FP32 kernels";
    return s;
  }
#if NDCONV_CPU_X86_KERNELS
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;  // CPUID.(7, 0):EDX
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || (edx & kAmxTile) == 0 ||
      (edx & kAmxInt8) == 0) {
    s.why_not = "the CPU has no AMX-INT8";
    return s;
  }
  constexpr unsigned kOsXsave = 1u << 27;  // CPUID.1:ECX
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & kOsXsave) == 0) {
    s.why_not = "the OS does not enable XSAVE";
    return s;
  }
  // The permission first: the tile data state may show in XCR0 only once it is granted.
  if (!request_amx_tile_permission()) {
    s.why_not = "the OS refused the AMX tile permission (Linux's arch_prctl ARCH_REQ_XCOMP_PERM)";
    return s;
  }
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  constexpr unsigned kTileState = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  if ((xcr0_low & kTileState) != kTileState) {
    s.why_not = "the OS does not enable the AMX tile state";
    return s;
  }
  s.usable = true;
#else
  s.why_not = "not an x86-64 build";
#endif
  return s;
}

}  // namespace

const AmxSupport& amx_int8_support() {
  static const AmxSupport support = detect_amx_int8();
  return support;
}

}  // namespace ndconv::cpu
