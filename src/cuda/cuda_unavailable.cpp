// The CUDA backend of a build without CUDA: probe() says so, and the run and launch functions
// refuse, so that CPU-only builds link and report the reason.
#include "cuda/launch.h"
#include "engine/cuda_backend.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

namespace {
const char* const kNoCuda = "ndconv was built without CUDA support";
}

CudaStatus probe() {
  CudaStatus s;
  s.compiled = false;
  s.usable = false;
  s.reason = kNoCuda;
  return s;
}

void run_dense(const detail::CorrelationProblem&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<KernelVariant> dense_variants(int, int) {
  return {};
}

std::vector<KernelVariant> tiled_variants(int) {
  return {};
}

std::vector<KernelVariant> separable_variants(int) {
  return {};
}

void run_dense(const detail::CorrelationProblem&, const Options&, RunReport&,
               const DenseKernelRequest&, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<KernelVariant> dense_variants_global_taps(int) {
  return {};
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem&, int, int, void*, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

LaunchPlan launch_dense_device(const detail::CorrelationProblem&, const DenseKernelRequest&, int,
                               void*, const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

std::vector<DenseKernelVariant> dense_kernel_variants(int) {
  return {};
}

std::size_t separable_scratch_floats(const detail::SeparableProblem&) {
  return 0;
}

LaunchPlan launch_separable_device(const detail::SeparableProblem&, float*, int, void*, int,
                                   const Tuning&) {
  throw InvalidArgument(kNoCuda);
}

}  // namespace ndconv::cuda_backend
