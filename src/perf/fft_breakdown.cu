// The fft rows' per-stage breakdown (fft_breakdown.h).
#include "perf/fft_breakdown.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/fft/fft_launch.h"
#include "ndconv/memory.h"

namespace ndconv::perf {

namespace {

// Events for the marks of one call (created before it, so that a mark costs only a record).
class StageEvents {
 public:
  explicit StageEvents(std::size_t count) : events_(count, nullptr) {
    for (cudaEvent_t& e : events_)
      NDCONV_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~StageEvents() {
    for (cudaEvent_t e : events_)
      if (e != nullptr)
        (void)cudaEventDestroy(e);
  }
  StageEvents(const StageEvents&) = delete;
  StageEvents& operator=(const StageEvents&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_.at(i); }

 private:
  std::vector<cudaEvent_t> events_;
};

struct Stage {
  std::string name;
  double device_ms = 0;
  double host_ms = 0;
};

// One call, stage by stage: "choose", then the launcher's stages.
std::vector<Stage> timed_call(const detail::CorrelationProblem& p,
                              const cuda_backend::FftPolicy& policy, int device,
                              cudaStream_t stream) {
  constexpr std::size_t kMarks = 12;  // "start", "choose" and the launcher's eight stages
  const StageEvents events(kMarks);
  std::vector<std::string> names;
  std::vector<std::chrono::steady_clock::time_point> host;
  auto mark = [&](const char* stage) {
    NDCONV_CUDA_CHECK(cudaEventRecord(events[names.size()], stream));
    host.push_back(std::chrono::steady_clock::now());
    names.emplace_back(stage);
  };
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  mark("start");
  const cuda_backend::DenseMethodChoice choice = cuda_backend::choose_dense_method_on_device(
      p, device, cuda_backend::forced_fft_policy(policy));
  if (!choice.fft)
    throw Error("the FFT cannot serve the breakdown's problem (" + choice.reason + ")");
  mark("choose");
  if (!cuda_backend::launch_fft_dense(p, device, stream, choice, mark))
    throw Error("no stream-ordered device memory for the FFT's buffer");
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<Stage> stages;
  for (std::size_t i = 1; i < names.size(); ++i) {
    float ms = 0;
    NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, events[i - 1], events[i]));
    stages.push_back(
        {names[i], ms, std::chrono::duration<double, std::milli>(host[i] - host[i - 1]).count()});
  }
  return stages;
}

Json stages_json(const std::vector<Stage>& stages) {
  Json j = Json::object();
  double device = 0, host = 0;
  for (const Stage& s : stages) {
    j[s.name] = {{"device_ms", s.device_ms}, {"host_ms", s.host_ms}};
    device += s.device_ms;
    host += s.host_ms;
  }
  j["total"] = {{"device_ms", device}, {"host_ms", host}};
  return j;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

Json fft_breakdown(const detail::CorrelationProblem& p, const cuda_backend::FftPolicy& policy,
                   int device, void* stream_handle, int repetitions) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  release_cached_memory();
  const std::vector<Stage> first = timed_call(p, policy, device, stream);
  std::vector<std::vector<Stage>> repeats;
  for (int r = 0; r < std::max(1, repetitions); ++r)
    repeats.push_back(timed_call(p, policy, device, stream));
  std::vector<Stage> repeat = repeats.front();
  for (std::size_t i = 0; i < repeat.size(); ++i) {
    std::vector<double> device_ms, host_ms;
    for (const std::vector<Stage>& call : repeats) {
      device_ms.push_back(call.at(i).device_ms);
      host_ms.push_back(call.at(i).host_ms);
    }
    repeat[i].device_ms = median(device_ms);
    repeat[i].host_ms = median(host_ms);
  }
  const cuda_backend::FftShape shape =
      cuda_backend::fft_shape(p.input.dims, p.output.extent, p.filter_extent, policy);
  return {{"transform", cuda_backend::extent_text(shape.dims, shape.transform)},
          {"largest_prime", policy.largest_prime},
          {"first", stages_json(first)},
          {"repeat", stages_json(repeat)}};
}

}  // namespace ndconv::perf
