// The adaptive filter's GPU stages with the data on the device throughout (bank_gpu.h:
// ResidentAdaptive), called by the engine's resident_stages.cpp when both banks run on the GPU and
// the working set fits.
//
// Device memory, in volumes of N = the input's voxels and m = d(d+1)/2 tensor components:
//  - held from the first stage to the last: the input (N) and the tensor buffer ((m + 1) N, one
//    slot more than the components);
//  - the quadrature stage: the padded input and the 2K responses of a slab along the last axis
//    (slabs as large as the memory left allows; one for 160^3 x 20 on an H100), and where the
//    tensor cores take the bank (tensor_core_unfit empty, the padded input 8-bit), the slab's
//    8-bit padded input and the weights' digits;
//  - the relaxation: the separable passes' scratch (and the padded copy a tiled pass may take);
//  - the control tensor: the magnitudes, in the tensor buffer's free slot;
//  - the reconstruction: the padded input for the reconstruction filters and the output, and where
//    the tensor cores take the weighted sum (tensor_core_unfit(..., true) empty, the padded input
//    8-bit), its 8-bit padded input and the weights' digits.
// The tensor's slots: the structure tensor writes component c to slot c + 1; the relaxation
// smooths component c from slot c + 1 into slot c, so that the components end up in slots 0 to
// m - 1; the weights (1 for the lowpass, then one per highpass filter) are then written over the
// whole buffer in place, slot k for filter k, as the weighted bank reads them.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/seconds_since.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/launch.h"
#include "cuda/staging.h"

namespace ndconv::cuda_bank {

namespace {

using cuda_backend::DeviceBuffer;

using detail::seconds_since;

// A CUDA event with timing (from the device's pool, device_memory.h) and the time since another.
class TimingEvent {
 public:
  void record(cudaStream_t stream) { event_.record(stream); }
  /// Seconds from `start` to this event, once this event has completed.
  double seconds_after(const TimingEvent& start) const {
    event_.synchronize();
    float ms = 0;
    NDCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_.get(), event_.get()));
    return ms / 1e3;
  }

 private:
  cuda_backend::Event event_{cuda_backend::EventTiming::On};
};

// out = (1 - blend) out + blend in, in double as the CPU blends.
__global__ void blend_kernel(float* __restrict__ out, const float* __restrict__ in, int64_t voxels,
                             double blend) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < voxels)
    out[v] = static_cast<float>((1 - blend) * out[v] + blend * in[v]);
}

// `problem` reading the contiguous device copy of its input.
detail::BankProblem on_device(const detail::BankProblem& problem, const float* input) {
  detail::BankProblem p = problem;
  p.input = make_view(input, problem.input.dims, problem.input.extent);
  p.outputs.clear();
  p.weights.clear();
  p.sum_output = VolumeView{};
  return p;
}

void upload_taps(const std::vector<float>& taps, DeviceBuffer& device, cudaStream_t stream) {
  device.allocate(taps.size());
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(device.get(), taps.data(), taps.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream));
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `taps` may go
}

double mebibytes(double bytes) {
  return bytes / static_cast<double>(1 << 20);
}

}  // namespace

struct ResidentAdaptive::State {
  ResidentProblem problem;
  Options options;
  int64_t voxels = 0;  // N
  int components = 0;  // m
  TensorSlabs slabs;
  BankLaunch reconstruction;
  std::string reconstruction_tensor_cores_not;  // why the tensor cores do not take the sum
  int64_t relax_scratch = 0;                    // floats
  bool fits = false;
  std::string note;
  int first_slot = 1;  // the tensor's component 0
  // The stream before the buffers, so that it outlives them; ~State waits for the work on it.
  cuda_backend::Stream stream;
  DeviceBuffer input, tensor;

  State(const ResidentProblem& p, const Options& o) : problem(p), options(o) {}
  ~State() {
    if (stream.get() != nullptr)
      cudaStreamSynchronize(stream.get());  // no error to report from a destructor
  }
  float* slot(int s) const { return tensor.get() + s * voxels; }
  ConstVolumeView volume(const float* data) const {
    return make_view(data, problem.quadrature.input.dims, problem.quadrature.input.extent);
  }
  VolumeView volume(float* data) const {
    return make_view(data, problem.quadrature.input.dims, problem.quadrature.input.extent);
  }
};

ResidentAdaptive::ResidentAdaptive(const ResidentProblem& p, const Options& options) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  state_ = std::make_unique<State>(p, options);
  State& s = *state_;
  const ConstVolumeView& in = p.quadrature.input;
  s.voxels = in.voxel_count();
  s.components = p.reconstruction.count - 1;
  const int m = s.components;
  auto same_extent = [&in](const Index& e) {
    for (int a = 0; a < in.dims; ++a)
      if (e[a] != in.extent[a])
        return false;
    return true;
  };
  if (!same_extent(p.quadrature.output_extent) || p.reconstruction.input.data != in.data ||
      !same_extent(p.reconstruction.output_extent) ||
      (p.reconstruction.sum_output.data != nullptr &&
       (p.reconstruction.sum_output.dims != in.dims ||
        !same_extent(p.reconstruction.sum_output.extent))) ||
      p.quadrature.count % 2 != 0 || m < 1 ||
      static_cast<int64_t>(p.duals.size()) != int64_t{p.quadrature.count / 2} * m ||
      static_cast<int64_t>(p.coefficients.size()) != int64_t{m} * m ||
      (p.relaxation.dims != 0 && p.relaxation.dims != in.dims))
    throw InvalidArgument("internal: an inconsistent device-resident adaptive filter problem");

  // What is free, less a margin for the runtime, the kernels' own scratch and other users.
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double free_d = static_cast<double>(free_bytes);
  double available = free_d - std::max(256.0 * (1 << 20), 0.05 * free_d);
  const size_t cap = cuda_backend::memory_cap(options);
  if (cap > 0)
    available = std::min(available, static_cast<double>(cap));

  const double n = static_cast<double>(s.voxels) * sizeof(float);
  const double held = n * (m + 2);  // the input and the tensor's m + 1 slots
  const int ko = options.expert.outputs_per_thread;
  s.slabs = plan_tensor_slabs(p.quadrature, available - held, 0, ko);
  // The tensor cores' 8-bit input and weights come on top of a slab's FP32 buffers: where they do
  // not fit beside slabs planned without them, smaller slabs (whose own 8-bit input is no larger).
  const double tensor_core_bytes =
      static_cast<double>(slab_bank_extra_bytes(s.slabs, p.quadrature, options));
  if (tensor_core_bytes > 0 &&
      held + static_cast<double>(s.slabs.device_floats(0)) * sizeof(float) + tensor_core_bytes >
          available)
    s.slabs = plan_tensor_slabs(p.quadrature, available - held - tensor_core_bytes, 0, ko);
  const double quadrature_bytes =
      static_cast<double>(s.slabs.device_floats(0)) * sizeof(float) +
      static_cast<double>(slab_bank_extra_bytes(s.slabs, p.quadrature, options));
  double relax_bytes = 0;
  if (p.relaxation.dims != 0) {
    const detail::SeparableProblem sp = cuda_backend::same_region_separable(
        s.volume(static_cast<const float*>(nullptr)), s.volume(static_cast<float*>(nullptr)),
        p.relaxation, p.quadrature.boundary);
    s.relax_scratch = static_cast<int64_t>(cuda_backend::separable_scratch_floats(sp));
    // The scratch, and a padded copy of the component that a tiled pass may take.
    relax_bytes = static_cast<double>(s.relax_scratch) * sizeof(float) + 1.5 * n;
  }
  s.reconstruction = plan_bank(p.reconstruction, options.expert.outputs_per_thread);
  s.reconstruction_tensor_cores_not =
      tensor_core_unfit(s.reconstruction, p.reconstruction.taps, options, /*weighted=*/true);
  const double reconstruction_bytes =
      static_cast<double>(s.reconstruction.padded_count()) * sizeof(float) + n;
  double needed = held + std::max({quadrature_bytes, relax_bytes, n, reconstruction_bytes});
  // The tensor cores' packed input and weights are an option, not a need: where they do not fit
  // beside the stages, the FP32 weighted sum keeps the stages on the device.
  if (s.reconstruction_tensor_cores_not.empty()) {
    const TensorCoreGeometry g = tensor_core_geometry(s.reconstruction);
    const double with_tensor_cores =
        held + reconstruction_bytes +
        static_cast<double>(g.padded_bytes() +
                            tensor_core_weights_bytes(g, tensor_core_tile_rows(g)));
    if (with_tensor_cores <= available)
      needed = std::max(needed, with_tensor_cores);
    else
      s.reconstruction_tensor_cores_not =
          "the device memory holds the device-resident stages but not the tensor cores' packed "
          "input and weights beside them";
  }
  s.fits = needed <= available;
  const std::string sizes =
      std::to_string(static_cast<int64_t>(mebibytes(needed))) + " MiB of " +
      std::to_string(static_cast<int64_t>(mebibytes(std::max(0.0, available)))) + " MiB available";
  s.note = s.fits ? "adaptive filter: device-resident stages (" + sizes + ", " +
                        std::to_string(s.slabs.problems.size()) + " quadrature slab(s))"
                  : "adaptive filter: stages through host memory (the device-resident working "
                    "set needs " +
                        sizes + ")";
}

ResidentAdaptive::~ResidentAdaptive() = default;

bool ResidentAdaptive::fits() const {
  return state_->fits;
}

const std::string& ResidentAdaptive::memory_note() const {
  return state_->note;
}

void ResidentAdaptive::structure_tensor(RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  State& s = *state_;
  if (!s.fits)
    throw InvalidArgument("internal: the device-resident adaptive filter does not fit");
  const int device = s.options.cuda_device;
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t stream = s.stream.get();
  const int m = s.components;
  auto t0 = std::chrono::steady_clock::now();
  s.input.allocate(static_cast<size_t>(s.voxels));
  s.tensor.allocate(static_cast<size_t>(s.voxels * (m + 1)));
  upload_volume(s.problem.quadrature.input, s.input.get(), stream);
  DeviceBuffer taps;
  upload_taps(bank_device_taps(s.slabs.launches[0], s.problem.quadrature.taps), taps, stream);
  DeviceBuffer padded(static_cast<size_t>(s.slabs.padded_max));
  DeviceBuffer responses(
      static_cast<size_t>(s.slabs.planes * s.slabs.plane * s.problem.quadrature.count));
  SlabBank bank = plan_slab_bank(s.slabs, s.problem.quadrature, taps.get(), s.options, stream);
  report.seconds_upload = seconds_since(t0);
  report.seconds_compute = report.seconds_download = 0;
  TimingEvent start, stop;
  for (size_t i = 0; i < s.slabs.problems.size(); ++i) {
    const BankLaunch& l = s.slabs.launches[i];
    const int64_t first = static_cast<int64_t>(i) * s.slabs.planes;
    pad_bank_input_device(on_device(s.slabs.problems[i], s.input.get()), l, padded.get(), stream);
    start.record(stream);
    launch_tensor_slab(l, device, padded.get(), bank, responses.get(), s.problem.duals, m,
                       s.slot(1) + first * s.slabs.plane, s.voxels, stream);
    stop.record(stream);
    report.seconds_compute += stop.seconds_after(start);  // waits for the slab
  }
  s.stream.synchronize();
  s.first_slot = 1;
  report.backend = Backend::Cuda;
  report.outputs_per_thread = s.slabs.launches[0].outputs_per_thread;
  report.outputs_per_thread_reason = s.slabs.launches[0].outputs_per_thread_reason;
  report.slabs = static_cast<int>(s.slabs.problems.size());
  report.notes.push_back("GPU structure tensor: " + std::to_string(s.slabs.problems.size()) +
                         " slab(s), the input padded on the device, the tensor kept there");
  for (std::string& note : slab_bank_notes(bank, s.slabs.launches[0]))
    report.notes.push_back(std::move(note));
}

void ResidentAdaptive::relax() {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  State& s = *state_;
  if (s.problem.relaxation.dims == 0)
    return;
  NDCONV_CUDA_CHECK(cudaSetDevice(s.options.cuda_device));
  DeviceBuffer scratch(static_cast<size_t>(s.relax_scratch));
  for (int c = 0; c < s.components; ++c)  // slot c + 1 into slot c: see the file's comment
    cuda_backend::launch_same_separable_device(
        s.volume(static_cast<const float*>(s.slot(c + 1))), s.volume(s.slot(c)),
        s.problem.relaxation, s.problem.quadrature.boundary, scratch.get(), s.options.cuda_device,
        s.stream.get(), s.options.expert.outputs_per_thread);
  s.stream.synchronize();  // before the scratch goes
  s.first_slot = 0;
}

double ResidentAdaptive::control_tensor(const detail::ControlMapping& mapping,
                                        const detail::MagnitudeRegion& region, double scale) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  State& s = *state_;
  NDCONV_CUDA_CHECK(cudaSetDevice(s.options.cuda_device));
  // The magnitudes in the slot the components leave free.
  float* magnitude = s.slot(s.first_slot == 0 ? s.components : 0);
  DeviceBuffer largest(2);  // one unsigned long long
  launch_control_tensor(mapping, s.slot(s.first_slot), s.voxels, s.components, magnitude,
                        reinterpret_cast<unsigned long long*>(largest.get()), s.stream.get(),
                        region, scale);
  if (scale >= 0) {
    s.stream.synchronize();  // before `largest` goes
    return scale;
  }
  double found = 0;
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(&found, largest.get(), sizeof(double), cudaMemcpyDeviceToHost,
                                    s.stream.get()));
  s.stream.synchronize();  // `found` arrived; before `largest` goes
  return found;
}

void ResidentAdaptive::reconstruct(double blend, RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  State& s = *state_;
  if (s.problem.reconstruction.sum_output.data == nullptr)
    throw InvalidArgument("internal: a device-resident adaptive filter problem without an output");
  const int device = s.options.cuda_device;
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t stream = s.stream.get();
  const BankLaunch& l = s.reconstruction;
  auto t0 = std::chrono::steady_clock::now();
  DeviceBuffer taps;
  upload_taps(bank_device_taps(l, s.problem.reconstruction.taps), taps, stream);
  DeviceBuffer padded(static_cast<size_t>(l.padded_count()));
  pad_bank_input_device(on_device(s.problem.reconstruction, s.input.get()), l, padded.get(),
                        stream);
  launch_control_weights(s.slot(s.first_slot), s.components, s.problem.coefficients, s.voxels,
                         s.slot(0), stream);
  DeviceBuffer output(static_cast<size_t>(s.voxels));
  // The weighted sum on the tensor cores where they take it and the padded input is 8-bit.
  std::string tensor_cores_not = s.reconstruction_tensor_cores_not;
  DeviceTensorCoreOperands operands;
  if (tensor_cores_not.empty()) {
    operands =
        upload_tensor_core_operands(l, s.problem.reconstruction.taps,
                                    tensor_core_geometry(l).padded_bytes(), device, true, stream);
    if (!pack_padded_bytes_device(l, padded.get(), operands, stream))
      tensor_cores_not = "the input is not 8-bit (a value that is not an integer in 0..255)";
  }
  s.stream.synchronize();
  report.seconds_upload = seconds_since(t0);

  TimingEvent start, stop;
  start.record(stream);
  BankKernel kernel = BankKernel::Planes;
  if (tensor_cores_not.empty())
    launch_tensor_core_weighted_slab(l, device, operands, s.slot(0), output.get(), stream);
  else
    kernel = launch_bank_device(l, device, padded.get(), taps.get(), nullptr, s.slot(0),
                                output.get(), stream);
  stop.record(stream);
  if (blend > 0) {
    blend_kernel<<<static_cast<unsigned>((s.voxels + 255) / 256), 256, 0, stream>>>(
        output.get(), s.input.get(), s.voxels, blend);
    NDCONV_CUDA_CHECK_LAUNCH("the blend kernel");
  }
  s.stream.synchronize();
  report.seconds_compute = stop.seconds_after(start);

  t0 = std::chrono::steady_clock::now();
  download_volume(output.get(), s.problem.reconstruction.sum_output, stream);
  report.seconds_download = seconds_since(t0);
  if (tensor_cores_not.empty()) {
    report.backend = Backend::Cuda;
    report.outputs_per_thread = l.outputs_per_thread;
    report.outputs_per_thread_reason = l.outputs_per_thread_reason;
    report.notes.push_back("GPU reconstruction's weighted sum " + tensor_core_note(l, device) +
                           ", the weighted sum in the epilogue: the input is 8-bit; the weights "
                           "formed in place over the control tensor");
  } else {
    report_bank_launch(l, kernel,
                       ", the weights formed in place over the control tensor; not on the tensor "
                       "cores: " +
                           tensor_cores_not,
                       report);
  }
}

}  // namespace ndconv::cuda_bank
