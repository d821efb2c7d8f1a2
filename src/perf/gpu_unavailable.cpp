// The perf library's GPU layer in a build without CUDA: every entry point says so and throws
// GpuUnavailable, so that the GPU modes exit non-zero with a clear message and no numbers.
#include "perf/fft_breakdown.h"
#include "perf/gpu.h"

namespace ndconv::perf::gpu {

namespace {
[[noreturn]] void unavailable() {
  throw GpuUnavailable("no usable GPU: ndconv was built without CUDA support");
}
}  // namespace

void require(int) {
  unavailable();
}
DeviceFacts facts(int) {
  unavailable();
}
Ceilings measure_ceilings(int, int) {
  unavailable();
}
Buffer::Buffer(std::size_t) {
  unavailable();
}
Buffer::~Buffer() = default;
Buffer::Buffer(Buffer&& o) noexcept : data_(o.data_), count_(o.count_) {}
Buffer& Buffer::operator=(Buffer&&) noexcept {
  return *this;
}
void Buffer::upload(const float*, std::size_t) {
  unavailable();
}
void Buffer::download(float*, std::size_t) const {
  unavailable();
}
void Buffer::poison() {
  unavailable();
}
PinnedHostBuffer::PinnedHostBuffer(std::size_t) {
  unavailable();
}
PinnedHostBuffer::~PinnedHostBuffer() = default;
struct Timer::Impl {};
Timer::Timer(int) {
  unavailable();
}
Timer::~Timer() = default;
void* Timer::stream() const {
  return nullptr;
}
Timing Timer::time(const std::function<void(void*)>&, int, int, bool) {
  unavailable();
}
void Timer::synchronize() {
  unavailable();
}

}  // namespace ndconv::perf::gpu

namespace ndconv::perf {

Json fft_breakdown(const detail::CorrelationProblem&, const cuda_backend::FftPolicy&, int, void*,
                   int) {
  gpu::unavailable();
}

}  // namespace ndconv::perf
