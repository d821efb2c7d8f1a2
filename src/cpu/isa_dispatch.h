// Run-time choice of the instruction set for the row kernels (kernel_set.h). The widest set the
// CPU and the operating system support is used, unless the environment variable NDCONV_CPU_ISA
// (generic, avx2 or avx512) asks for another one, e.g. to compare them or to test each.
#pragma once

#include <string>
#include <vector>

#include "cpu/kernel_set.h"

namespace ndconv::cpu {

struct BankKernelSet;

/// The kernel sets compiled once per instruction set (kernels_<isa>.cpp, bank_kernels_<isa>.cpp;
/// the x86 ones only where sources.cmake sets NDCONV_CPU_X86_KERNELS).
const KernelSet& kernels_generic();
const BankKernelSet& bank_kernels_generic();
#if NDCONV_CPU_X86_KERNELS
const KernelSet& kernels_avx2();
const KernelSet& kernels_avx512();
const BankKernelSet& bank_kernels_avx2();
const BankKernelSet& bank_kernels_avx512();
#endif

/// Every kernel set this binary holds and this CPU can run, widest first.
std::vector<const KernelSet*> available_kernel_sets();

/// Whether this process may run AMX-INT8 tiles (the 8-bit filter bank, bank_int8.h): CPUID leaf 7's
/// AMX-TILE and AMX-INT8 bits, the OS's tile state in XCR0, and Linux's permission for it
/// (arch_prctl ARCH_REQ_XCOMP_PERM, asked once per process); `why_not` says which is missing. Not
/// usable either when NDCONV_CPU_ISA names an instruction set: then its FP32 kernels run.
struct AmxSupport {
  bool usable = false;
  std::string why_not;
};
const AmxSupport& amx_int8_support();

/// Asks Linux for the AMX tile data permission (arch_prctl ARCH_REQ_XCOMP_PERM); true when granted
/// (false elsewhere). amx_int8_support asks once for the process; the 8-bit bank's workers ask
/// again before their first tile instruction (cheap, and harmless where the process has it).
bool request_amx_tile_permission();

/// The kernel set to use now (honours NDCONV_CPU_ISA; throws InvalidArgument when it names a set
/// that is unknown or not supported here).
const KernelSet& select_kernel_set();

}  // namespace ndconv::cpu
