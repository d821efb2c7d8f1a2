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

/// The kernel set to use now (honours NDCONV_CPU_ISA; throws InvalidArgument when it names a set
/// that is unknown or not supported here).
const KernelSet& select_kernel_set();

}  // namespace ndconv::cpu
