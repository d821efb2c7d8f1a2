// The FFT family's launcher (fft_launch.h): cuFFT plans kept per device and transform shape (a
// launch holds a plan pair only while it enqueues: the work area is the launch's own
// stream-ordered scratch, so another launch may take the pair at once), the filter's spectrum
// cached per device (the last few filters and shapes; a launch waits on the event of its upload),
// and the kernels of kernels/fft_kernels.cuh. Every CUDA and cuFFT call is checked.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"
#include "cuda/fft/cufft_library.h"
#include "cuda/fft/fft_launch.h"
#include "cuda/fft/kernels/fft_kernels.cuh"
#include "cuda/launch_common.h"
#include "cuda/stream_scratch.h"

namespace ndconv::cuda_backend {
namespace {

const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    default:
      return "CUFFT_ERROR";
  }
}

[[noreturn]] void throw_cufft_error(const char* call, cufftResult r, const char* file, int line) {
  throw CudaError(call, static_cast<int>(r), cufft_error_name(r), "cuFFT call failed", file, line);
}

#define NDCONV_CUFFT_CHECK(call)                                          \
  do {                                                                    \
    const cufftResult ndconv_cufft_status_ = (call);                      \
    if (ndconv_cufft_status_ != CUFFT_SUCCESS)                            \
      throw_cufft_error(#call, ndconv_cufft_status_, __FILE__, __LINE__); \
  } while (0)

// Plans of one transform shape on one device.
using PlanKey = std::tuple<int, int, int64_t, int64_t, int64_t>;  // device, dims, N0, N1, N2

PlanKey plan_key(int device, const FftShape& s) {
  return {device, s.dims, s.transform[0], s.transform[1], s.transform[2]};
}

// A forward (D2Z) and an inverse (Z2D) plan without work areas of their own.
struct PlanPair {
  cufftHandle forward = 0;
  cufftHandle inverse = 0;
  std::size_t work_bytes = 0;
};

void destroy(PlanPair& pair) noexcept {
  if (const CufftLibrary* library = cufft_library()) {  // plans exist only once it is loaded
    if (pair.forward != 0)
      (void)library->destroy(pair.forward);
    if (pair.inverse != 0)
      (void)library->destroy(pair.inverse);
  }
  pair = PlanPair{};
}

// cuFFT's dims are slowest first: (N2, N1, N0) in 3D, (N1, N0) in 2D.
std::size_t make_plan(cufftHandle plan, const FftShape& s, cufftType type) {
  std::size_t work = 0;
  NDCONV_CUFFT_CHECK(cufft().set_auto_allocation(plan, 0));
  if (s.dims == 3) {
    NDCONV_CUFFT_CHECK(cufft().make_plan_3d(plan, static_cast<int>(s.transform[2]),
                                            static_cast<int>(s.transform[1]),
                                            static_cast<int>(s.transform[0]), type, &work));
  } else {
    NDCONV_CUFFT_CHECK(cufft().make_plan_2d(plan, static_cast<int>(s.transform[1]),
                                            static_cast<int>(s.transform[0]), type, &work));
  }
  return work;
}

PlanPair create_plans(const FftShape& s) {
  PlanPair pair;
  try {
    NDCONV_CUFFT_CHECK(cufft().create(&pair.forward));
    const std::size_t forward = make_plan(pair.forward, s, CUFFT_D2Z);
    NDCONV_CUFFT_CHECK(cufft().create(&pair.inverse));
    const std::size_t inverse = make_plan(pair.inverse, s, CUFFT_Z2D);
    pair.work_bytes = std::max(forward, inverse);
  } catch (...) {
    destroy(pair);
    throw;
  }
  return pair;
}

// A filter's spectrum on one device, ready once `ready` has passed on the stream that made it.
struct Spectrum {
  PlanKey key;
  std::vector<float> taps;
  Index filter{1, 1, 1, 1};
  DeviceBuffer data;
  cudaEvent_t ready = nullptr;
  uint64_t last_use = 0;
  // Launches on any stream may still read it when it is evicted or released: the device finishes
  // them before its memory is freed (the members are destroyed after this body).
  ~Spectrum() {
    const CallerDevice caller_device;
    if (cudaSetDevice(std::get<0>(key)) == cudaSuccess)
      (void)cudaDeviceSynchronize();
    if (ready != nullptr)
      (void)cudaEventDestroy(ready);
  }
};

// A shape and filter the choice was asked for.
struct Asked {
  PlanKey key;
  Index filter{1, 1, 1, 1};
  std::vector<float> taps;
};
constexpr std::size_t kKeptAsked = 8;

// Plan pairs kept idle per shape, and spectra kept per device: a few shapes and filters used in
// turn stay on the device (a 288³ spectrum is 190 MiB, so only a few).
constexpr std::size_t kKeptPlansPerShape = 4;
constexpr std::size_t kKeptSpectraPerDevice = 2;

struct Caches {
  std::mutex mutex;
  std::map<PlanKey, std::vector<PlanPair>> idle_plans;
  // cuFFT's work area per shape, known once its plans were made: a launch's choice needs it
  // every call, its plans may all be in use.
  std::map<PlanKey, std::size_t> work_bytes;
  std::vector<std::shared_ptr<Spectrum>> spectra;
  uint64_t uses = 0;
  // The shapes and filters the choice was asked for lately, oldest first (FftCached::repeated).
  std::deque<Asked> asked;
};

Caches& caches() {
  static auto* c = new Caches();  // never destroyed: plans outlive static destruction order issues
  return *c;
}

// A plan pair taken for one launch's enqueue, given back on scope exit.
class PlanLease {
 public:
  PlanLease(int device, const FftShape& s) : key_(plan_key(device, s)) {
    {
      Caches& c = caches();
      std::lock_guard<std::mutex> lock(c.mutex);
      std::vector<PlanPair>& idle = c.idle_plans[key_];
      if (!idle.empty()) {
        pair_ = idle.back();
        idle.pop_back();
        return;
      }
    }
    pair_ = create_plans(s);
    Caches& c = caches();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.work_bytes[key_] = pair_.work_bytes;
  }
  ~PlanLease() {
    Caches& c = caches();
    std::lock_guard<std::mutex> lock(c.mutex);
    std::vector<PlanPair>& idle = c.idle_plans[key_];
    if (idle.size() < kKeptPlansPerShape)
      idle.push_back(pair_);
    else
      destroy(pair_);
  }
  PlanLease(const PlanLease&) = delete;
  PlanLease& operator=(const PlanLease&) = delete;
  const PlanPair& get() const { return pair_; }

 private:
  PlanKey key_;
  PlanPair pair_;
};

// The work area of the shape's plans on `device` (current), for the choice's memory check: known
// once plans of the shape were made; else they are made now and kept idle for the launch that
// follows (the model's first call pays for them; cufftEstimate3d plans on the host about as long
// as making them, so asking it would pay twice).
std::size_t work_bytes_of(int device, const FftShape& s) {
  const PlanKey key = plan_key(device, s);
  Caches& c = caches();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    const auto known = c.work_bytes.find(key);
    if (known != c.work_bytes.end())
      return known->second;
  }
  PlanLease made(device, s);  // given back idle at scope exit
  return made.get().work_bytes;
}

bool same_filter(const Spectrum& s, const PlanKey& key, const std::vector<float>& taps,
                 const Index& filter) {
  return s.key == key && s.filter == filter && s.taps == taps;
}

std::shared_ptr<Spectrum> cached_spectrum(const PlanKey& key, const std::vector<float>& taps,
                                          const Index& filter) {
  Caches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const std::shared_ptr<Spectrum>& s : c.spectra) {
    if (same_filter(*s, key, taps, filter)) {
      s->last_use = ++c.uses;
      return s;
    }
  }
  return nullptr;
}

// What the device keeps for a launch of this shape and filter, and whether it was asked for
// before (for the cost model); remembers this one as asked.
FftCached kept_for(int device, const FftShape& shape, const std::vector<float>& taps,
                   const Index& filter) {
  const PlanKey key = plan_key(device, shape);
  Caches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  FftCached kept;
  const auto plans = c.idle_plans.find(key);
  kept.plans = plans != c.idle_plans.end() && !plans->second.empty();
  for (const std::shared_ptr<Spectrum>& s : c.spectra)
    kept.spectrum = kept.spectrum || same_filter(*s, key, taps, filter);
  for (const Asked& a : c.asked)
    kept.repeated = kept.repeated || (a.key == key && a.filter == filter && a.taps == taps);
  if (!kept.repeated) {
    if (c.asked.size() >= kKeptAsked)
      c.asked.pop_front();
    c.asked.push_back({key, filter, taps});
  }
  return kept;
}

void keep_spectrum(std::shared_ptr<Spectrum> spectrum) {
  Caches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  const int device = std::get<0>(spectrum->key);
  std::vector<std::shared_ptr<Spectrum>>::iterator oldest = c.spectra.end();
  std::size_t on_device = 0;
  for (auto it = c.spectra.begin(); it != c.spectra.end(); ++it) {
    if (std::get<0>((*it)->key) != device)
      continue;
    ++on_device;
    if (oldest == c.spectra.end() || (*it)->last_use < (*oldest)->last_use)
      oldest = it;
  }
  // A launch still holding the evicted spectrum keeps it alive; its destructor waits for the
  // device.
  if (on_device >= kKeptSpectraPerDevice)
    c.spectra.erase(oldest);
  spectrum->last_use = ++c.uses;
  c.spectra.push_back(std::move(spectrum));
}

int grid_for(int device, int64_t elements) {
  const int64_t blocks = (elements + 255) / 256;
  const int64_t resident = int64_t{device_attributes(device).multiprocessors} * 8;
  return static_cast<int>(std::max<int64_t>(1, std::min(blocks, resident)));
}

// The row kernels' launch (fft_for_rows): a warp per row, 8 rows a block, as many blocks as the
// device holds at once (the rows beyond loop), fewer for few rows.
constexpr int kRowsPerBlock = 8;
dim3 fft_row_block() {
  return dim3(32, kRowsPerBlock, 1);
}
dim3 fft_row_grid(int device, int rows) {
  const int64_t blocks = (int64_t{rows} + kRowsPerBlock - 1) / kRowsPerBlock;
  const int64_t resident = int64_t{device_attributes(device).multiprocessors} * 8;
  return dim3(static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, resident))), 1, 1);
}

void set_stream_and_work(const PlanPair& plans, cudaStream_t stream, void* work) {
  NDCONV_CUFFT_CHECK(cufft().set_stream(plans.forward, stream));
  NDCONV_CUFFT_CHECK(cufft().set_stream(plans.inverse, stream));
  NDCONV_CUFFT_CHECK(cufft().set_work_area(plans.forward, work));
  NDCONV_CUFFT_CHECK(cufft().set_work_area(plans.inverse, work));
}

// The filter's spectrum for this shape: cached, or transformed now on `stream` into a new buffer.
std::shared_ptr<Spectrum> filter_spectrum(int device, const FftShape& shape, const FftBox& box,
                                          const std::vector<float>& taps, const Index& filter,
                                          const float* device_taps, const PlanPair& plans,
                                          cudaStream_t stream, int& launches) {
  const PlanKey key = plan_key(device, shape);
  if (std::shared_ptr<Spectrum> s = cached_spectrum(key, taps, filter)) {
    NDCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, s->ready, 0));
    return s;
  }
  auto s = std::make_shared<Spectrum>();
  s->key = key;
  s->taps = taps;
  s->filter = filter;
  s->data.allocate(shape.spectrum_bytes / sizeof(float));
  NDCONV_CUDA_CHECK(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
  auto* buffer = reinterpret_cast<double*>(s->data.get());
  fft_taps_kernel<<<fft_row_grid(device, fft_buffer_rows(box)), fft_row_block(), 0, stream>>>(
      device_taps, box, buffer);
  NDCONV_CUDA_CHECK_LAUNCH("fft_taps_kernel");
  NDCONV_CUFFT_CHECK(
      cufft().exec_d2z(plans.forward, buffer, reinterpret_cast<cufftDoubleComplex*>(buffer)));
  NDCONV_CUDA_CHECK(cudaEventRecord(s->ready, stream));
  launches += 2;
  keep_spectrum(s);
  return s;
}

bool finite_taps(const detail::CorrelationProblem& p) {
  const int64_t count = detail::voxels_of(p.input.dims, p.filter_extent);
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(p.taps[i]))
      return false;
  }
  return true;
}

}  // namespace

DenseMethodChoice choose_dense_method_on_device(const detail::CorrelationProblem& p, int device,
                                                const FftPolicy& policy) {
  const int dims = p.input.dims;
  const bool taps_finite = finite_taps(p);
  if (dims < 2 || dims > 3 || !taps_finite || !policy.allowed)
    return choose_dense_method(dims, p.output.extent, p.filter_extent, policy, taps_finite);
  const FftCached cached =
      kept_for(device, fft_shape(dims, p.output.extent, p.filter_extent, policy),
               std::vector<float>(p.taps, p.taps + detail::voxels_of(dims, p.filter_extent)),
               p.filter_extent);
  DenseMethodChoice c = choose_dense_method(dims, p.output.extent, p.filter_extent, policy,
                                            taps_finite, -1, 0, cached);
  if (!c.fft)
    return c;
  std::string why;
  if (cufft_library(&why) == nullptr) {
    c.fft = false;
    c.reason = "direct: cuFFT not loadable (" + why + ")";
    return c;
  }
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // The backend's own reserve (host_call.h's budget): 90% of the free memory less 64 MiB.
  const double usable = std::max(0.0, 0.9 * static_cast<double>(free_bytes) - (64 << 20));
  // The buffers first, then cuFFT's work area, which its plans say (made here unless kept).
  c = choose_dense_method(dims, p.output.extent, p.filter_extent, policy, taps_finite, usable, 0,
                          cached);
  if (!c.fft)
    return c;
  std::size_t work_bytes = 0;
  try {
    work_bytes = work_bytes_of(device, c.shape);
  } catch (const CudaError& e) {
    if (e.code() != CUFFT_ALLOC_FAILED)
      throw;
    c.fft = false;
    c.reason =
        "direct: no device memory for cuFFT's plans of " + extent_text(dims, c.shape.transform);
    return c;
  }
  return choose_dense_method(dims, p.output.extent, p.filter_extent, policy, taps_finite, usable,
                             static_cast<double>(work_bytes), cached);
}

std::optional<LaunchPlan> launch_fft_dense(const detail::CorrelationProblem& p, int device,
                                           cudaStream_t stream, const DenseMethodChoice& choice,
                                           const FftStageMark& mark) {
  auto marked = [&mark](const char* stage) {
    if (mark)
      mark(stage);
  };
  const FftShape& shape = choice.shape;
  if (shape.dims < 2 || shape.dims > 3 || shape.dims != p.input.dims)
    throw InvalidArgument("the FFT path transforms 2D and 3D volumes; this one has " +
                          std::to_string(p.input.dims) + " axes");
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  const FftBox box = make_fft_box(p, shape);
  const std::vector<float> taps(p.taps, p.taps + detail::voxels_of(shape.dims, p.filter_extent));
  const TapLease device_taps = upload_global_taps(device, taps, stream);
  const PlanLease plans(device, shape);
  // One stream-ordered allocation: the transform buffer, cuFFT's work area, the non-finite flag.
  // Each part 256-byte aligned, as an allocation of its own would be.
  const std::size_t work_floats = (plans.get().work_bytes + 255) / 256 * 64;
  const std::size_t buffer_floats = (shape.buffer_bytes + 255) / 256 * 64;
  StreamScratch scratch(device, static_cast<int64_t>(buffer_floats + work_floats + 64), stream);
  if (scratch.get() == nullptr)
    return std::nullopt;
  auto* buffer = reinterpret_cast<double*>(scratch.get());
  auto* half_spectrum = reinterpret_cast<cufftDoubleComplex*>(buffer);
  void* work = scratch.get() + buffer_floats;
  auto* nonfinite = reinterpret_cast<int*>(scratch.get() + buffer_floats + work_floats);
  set_stream_and_work(plans.get(), stream, work);
  marked("prepare");

  LaunchPlan plan;
  const std::shared_ptr<Spectrum> spectrum =
      filter_spectrum(device, shape, box, taps, p.filter_extent, device_taps.get(), plans.get(),
                      stream, plan.launches);
  marked("spectrum");
  NDCONV_CUDA_CHECK(cudaMemsetAsync(nonfinite, 0, sizeof(int), stream));
  const dim3 grid = fft_row_grid(device, fft_buffer_rows(box));
  fft_pad_kernel<<<grid, fft_row_block(), 0, stream>>>(p.input.data, box, buffer, nonfinite);
  NDCONV_CUDA_CHECK_LAUNCH("fft_pad_kernel");
  marked("pad");
  NDCONV_CUFFT_CHECK(cufft().exec_d2z(plans.get().forward, buffer, half_spectrum));
  marked("forward");
  fft_product_kernel<<<grid_for(device, shape.complex_points), 256, 0, stream>>>(
      reinterpret_cast<double2*>(half_spectrum),
      reinterpret_cast<const double2*>(spectrum->data.get()), shape.complex_points,
      1.0 / static_cast<double>(shape.points));
  NDCONV_CUDA_CHECK_LAUNCH("fft_product_kernel");
  marked("product");
  NDCONV_CUFFT_CHECK(cufft().exec_z2d(plans.get().inverse, half_spectrum, buffer));
  marked("inverse");
  fft_crop_kernel<<<fft_row_grid(device, fft_output_rows(box)), fft_row_block(), 0, stream>>>(
      buffer, box, p.output.data);
  NDCONV_CUDA_CHECK_LAUNCH("fft_crop_kernel");
  marked("crop");
  fft_nonfinite_kernel<<<grid_for(device, box.box[0] * box.box[1] * box.box[2]), 256, 0, stream>>>(
      p.input.data, device_taps.get(), box, nonfinite, p.output.data);
  NDCONV_CUDA_CHECK_LAUNCH("fft_nonfinite_kernel");
  marked("non-finite");
  plan.launches += 6;
  plan.family = "fft";
  plan.kernel = "fft " + extent_text(shape.dims, shape.transform) + " float64 (cuFFT D2Z/Z2D)";
  plan.reason = "no KO: a transform";
  plan.method_reason = choice.reason;
  const dim3 block = fft_row_block();  // the pad kernel's shape
  plan.block[0] = static_cast<int>(block.x);
  plan.block[1] = static_cast<int>(block.y);
  plan.block[2] = 1;
  plan.grid[0] = static_cast<int>(grid.x);
  plan.grid[1] = static_cast<int>(grid.y);
  plan.grid[2] = 1;
  return plan;
}

FftCaches fft_caches() noexcept {
  FftCaches f;
  Caches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const auto& [key, idle] : c.idle_plans)
    f.idle_plans += idle.size();
  f.spectra = c.spectra.size();
  f.work_areas = c.work_bytes.size();
  for (const std::shared_ptr<Spectrum>& s : c.spectra)
    f.spectrum_bytes += s->data.size() * sizeof(float);
  return f;
}

void release_fft_caches() noexcept {
  Caches& c = caches();
  std::map<PlanKey, std::vector<PlanPair>> plans;
  std::vector<std::shared_ptr<Spectrum>> spectra;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    plans.swap(c.idle_plans);
    spectra.swap(c.spectra);
    c.work_bytes.clear();
    c.asked.clear();
  }
  const CallerDevice caller_device;  // plans are destroyed on their own devices
  for (auto& [key, idle] : plans) {
    (void)cudaSetDevice(std::get<0>(key));
    for (PlanPair& pair : idle)
      destroy(pair);
  }
  spectra.clear();  // each on its own device, after the launches that read it
}

}  // namespace ndconv::cuda_backend
