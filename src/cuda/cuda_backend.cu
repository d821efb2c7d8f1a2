// PLACEHOLDER (being replaced by the CUDA backend).
#include "engine/cuda_backend.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

CudaStatus probe() {
  CudaStatus s;
  s.compiled = false;
  s.usable = false;
  s.reason = "ndconv was built without CUDA support";
  return s;
}

void run_dense(const detail::CorrelationProblem&, const Options&, RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

void run_separable(const detail::SeparableProblem&, const Options&, RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

}  // namespace ndconv::cuda_backend
