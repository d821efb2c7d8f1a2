// Programmatic dependent launch (sm_90): a kernel launched right after another on the same stream
// with the launch attribute for it (src/cuda/dependent_launch.h) may start while the previous one
// is still running, so that its launch, block scheduling and prologue (taps into shared memory,
// barriers, per-block plans) overlap the end of the previous kernel. Two instructions carry it:
//   - grid_dependency_wait: before the first global access that depends on earlier kernels, the
//     kernel waits until they have completed and their writes are visible. Without the attribute
//     (every launch that does not follow one of ours) it returns at once.
//   - grid_dependents_launch: a running kernel lets the next kernel's blocks be scheduled as soon
//   as
//     every block of its own has executed it (without it, when its blocks exit). It orders nothing
//     in memory: the dependent still waits for this kernel's completion.
// Why: a dense launch with a boundary other than zero pads its input first (pad kernel, then the
// tiled kernel); the launch gap and the tiled kernel's ramp between them are part of what that
// boundary costs over zero. The separable passes each read the whole output of the pass before, so
// an early start only makes their blocks wait on the SMs: they do not use it.
// On other architectures and on the host (the emulation in tests/gpu) both compile to nothing.
#pragma once

#include "kernels/hd.h"

namespace ndconv::kernels {

/// Waits until the kernels this launch depends on have completed (no-op without the attribute).
NDCONV_HD void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/// Allows the launch that depends on this kernel to be scheduled (see above).
NDCONV_HD void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace ndconv::kernels
