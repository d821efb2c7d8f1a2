// cuFFT, loaded on the FFT path's first use rather than linked: the library is about 290 MB of
// code, and a process that maps it at start-up (every ndconv command, CPU runs included) cannot
// start under a small address-space limit and holds a few MiB more at its peak. Only the types
// of <cufft.h> are used at compile time; the functions come from dlopen of the toolkit's soname.
#pragma once

#include <cufft.h>

#include <string>

namespace ndconv::cuda_backend {

/// The cuFFT functions the FFT path calls.
struct CufftLibrary {
  decltype(&::cufftCreate) create = nullptr;
  decltype(&::cufftDestroy) destroy = nullptr;
  decltype(&::cufftSetAutoAllocation) set_auto_allocation = nullptr;
  decltype(&::cufftMakePlan2d) make_plan_2d = nullptr;
  decltype(&::cufftMakePlan3d) make_plan_3d = nullptr;
  decltype(&::cufftSetStream) set_stream = nullptr;
  decltype(&::cufftSetWorkArea) set_work_area = nullptr;
  decltype(&::cufftExecD2Z) exec_d2z = nullptr;
  decltype(&::cufftExecZ2D) exec_z2d = nullptr;
};

/// cuFFT, loaded once (thread-safe); nullptr where it cannot be, with why in `why` when given
/// (the soname not found, a function missing). Never throws.
const CufftLibrary* cufft_library(std::string* why = nullptr) noexcept;

/// The loaded library; throws CudaError naming why where it cannot be loaded.
const CufftLibrary& cufft();

}  // namespace ndconv::cuda_backend
