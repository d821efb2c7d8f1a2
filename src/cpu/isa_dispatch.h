// Run-time choice of the instruction set for the row kernels (kernel_set.h). The widest set the
// CPU and the operating system support is used, unless the environment variable NDCONV_CPU_ISA
// (generic, avx2 or avx512) asks for another one, e.g. to compare them or to test each.
#pragma once

#include <string>
#include <vector>

#include "cpu/kernel_set.h"

namespace ndconv::cpu {

/// Every kernel set this binary holds and this CPU can run, widest first.
std::vector<const KernelSet*> available_kernel_sets();

/// The kernel set to use now (honours NDCONV_CPU_ISA; throws InvalidArgument when it names a set
/// that is unknown or not supported here).
const KernelSet& select_kernel_set();

}  // namespace ndconv::cpu
