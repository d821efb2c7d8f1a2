// The CUDA host services of a build without CUDA (cuda/cuda_host.h): nothing is pinned, nothing
// is cached, nothing starts.
#include "cuda/cuda_host.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

void* pinned_host_allocate(std::size_t) noexcept {
  return nullptr;
}

void pinned_host_free(void*) noexcept {}

bool host_range_pinned(const void*, std::size_t) noexcept {
  return false;
}

void release_cached_memory() noexcept {}

CachedMemory cached_memory() noexcept {
  return {};
}

bool compiled() noexcept {
  return false;
}

bool started(int) noexcept {
  return false;
}

void start(int) noexcept {}

}  // namespace ndconv::cuda_backend

namespace ndconv::cuda_backend {

void run_dense_device(const detail::CorrelationProblem&, const Options&, void*, RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

void run_separable_device(const detail::SeparableProblem&, const Options&, void*, RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

void add_constant_border_device(const detail::ConstantBorder&, const VolumeView&, int, void*) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

void run_dense_stored(const detail::CorrelationProblem&, const StoredVolumeView&, const Options&,
                      RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

void run_separable_stored(const detail::SeparableProblem&, const StoredVolumeView&, const Options&,
                          RunReport&) {
  throw InvalidArgument("ndconv was built without CUDA support");
}

}  // namespace ndconv::cuda_backend
