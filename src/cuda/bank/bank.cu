// The filter bank on the GPU (ndconv/adaptive.h: filter_bank, filter_bank_weighted_sum), kernel
// in bank_kernel.cuh: passes of four filters, each thread 8 outputs along x times KO along the
// last axis times the pass's four filters.
//
// The rule: KO 2 where the last axis has at least 2 outputs (64 accumulators of the 255 registers
// a thread may hold, 4 blocks per SM), else 1; Options::expert.outputs_per_thread may ask for 1
// or 2. A 2D image is run with its rows on axis 1 (32 per block), KO 1. Filters of 7 x 7 x 1 x k3
// taps (canonical; a 3D volume's 7^3) with KO 2 take the ring kernel (bank_ring_kernel) where the
// device holds 3 of its blocks per SM: 74.4% of the FMA peak on the bench's bank_3d problem
// against 65.8% for the plane kernel (dev/bank_sweep.cu, H100, one run).
//
// The input is padded on the host (the CPU backend's build_padded) and the whole padded volume,
// the weights and the outputs stay on the device at once; views that are contiguous travel by one
// copy, others are gathered and scattered on every core. launch_bank_device runs the passes on
// data already on the device (the bench's device time); the adaptive filter's structure tensor
// and reconstruction weights are formed on the device (run_structure_tensor,
// run_bank_with_control).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/canonical_axes.h"
#include "core/padding.h"
#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/bank_kernel.cuh"
#include "cuda/bank/bank_pad.h"
#include "cuda/bank/bank_voxels.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/filter_staging.h"
#include "cuda/staging.h"

namespace ndconv::cuda_bank {

namespace {

using cuda_backend::DeviceBuffer;

using Launch = BankKernel (*)(int, cudaStream_t, const BankGeometry&, const BankTiles&,
                              const float*, const float*, int, int64_t, int, float*, int64_t,
                              const float*, float*, bool);

// The width along x the ring kernel is compiled for (the quadrature filters' 7^3; other widths
// were not measured).
constexpr int kRingWidth = 7;

// Opts `kernel` in to `shared_bytes` of dynamic shared memory where that is above the default
// 48 KB; false where the device cannot give a block that much.
template <class Kernel>
bool allow_shared(Kernel kernel, size_t shared_bytes, int device) {
  if (shared_bytes <= 48 * 1024)
    return true;
  int most = 0;
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared_bytes > static_cast<size_t>(most))
    return false;
  NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared_bytes)));
  return true;
}

// The ring kernel where the filter and the device allow it (see the file's comment): returns
// false, launching nothing, where they do not.
template <int K0, int KO, bool kWeighted>
bool launch_ring(int device, cudaStream_t stream, const BankGeometry& g, const BankTiles& tiles,
                 const float* in, const float* taps, int passes, int64_t pass_taps, int filters,
                 float* out, int64_t stride, const float* weights, float* sum, bool accumulate) {
  if constexpr (K0 != kRingWidth || KO != 2) {
    return false;
  } else {
    using Policy = BankRingPolicy<>;
    static_assert(Policy::kBy == BankShape::kBy, "the ring walks the plane kernel's tiles");
    if (g.k1 != K0 || g.k2 != 1 || g.k3 <= KO)
      return false;
    const auto kernel = bank_ring_kernel<K0, KO, kWeighted, Policy>;
    const size_t shared_bytes =
        static_cast<size_t>(Policy::shared_floats(K0, g.k1, g.k3, KO)) * sizeof(float);
    if (!allow_shared(kernel, shared_bytes, device))
      return false;
    int per_sm = 0, sms = 0;
    NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel, Policy::kThreads, shared_bytes));
    if (per_sm < Policy::kMinBlocks)
      return false;
    NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int64_t blocks = std::min<int64_t>(tiles.count(g.n2) * passes, int64_t{per_sm} * sms);
    kernel<<<static_cast<unsigned>(blocks), Policy::kThreads, shared_bytes, stream>>>(
        g, tiles, in, taps, passes, pass_taps, filters, out, stride, weights, sum, accumulate);
    return true;
  }
}

// Launches `passes` passes with as many blocks as the device holds at once (at most one per tile):
// the ring kernel where it applies, else the plane kernel.
template <int K0, int KO, bool kWeighted>
BankKernel launch(int device, cudaStream_t stream, const BankGeometry& g, const BankTiles& tiles,
                  const float* in, const float* taps, int passes, int64_t pass_taps, int filters,
                  float* out, int64_t stride, const float* weights, float* sum, bool accumulate) {
  if (launch_ring<K0, KO, kWeighted>(device, stream, g, tiles, in, taps, passes, pass_taps, filters,
                                     out, stride, weights, sum, accumulate))
    return BankKernel::Ring;
  // The weighted sum takes the rows one at a time: its stores already spill a few registers
  // (ptxas: 8-24 bytes), rows prefetched spill more (up to 84 bytes), and only the bank without
  // weights was measured faster with them (dev/bank_sweep.cu).
  using Policy = BankPolicy</*PrefetchRows=*/!kWeighted, 4, 3>;
  const auto kernel = bank_kernel<K0, KO, kWeighted, Policy>;
  const size_t shared_bytes =
      static_cast<size_t>(BankShape::shared_floats(K0, g.k1, KO, Policy::kStages)) * sizeof(float);
  int per_sm = 0, sms = 0;
  if (allow_shared(kernel, shared_bytes, device))  // above the default: opt in, for tall filters
    NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel, BankShape::kThreads, shared_bytes));
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1)
    throw InvalidArgument("the filter bank's tile does not fit in the GPU's shared memory (" +
                          std::to_string(shared_bytes) + " bytes)");
  const int64_t blocks = std::min<int64_t>(tiles.count(g.n2) * passes, int64_t{per_sm} * sms);
  kernel<<<static_cast<unsigned>(blocks), BankShape::kThreads, shared_bytes, stream>>>(
      g, tiles, in, taps, passes, pass_taps, filters, out, stride, weights, sum, accumulate);
  return BankKernel::Planes;
}

template <int K0, bool kWeighted>
Launch pick_ko(int ko) {
  return ko == 1 ? &launch<K0, 1, kWeighted> : &launch<K0, 2, kWeighted>;
}

// The widths along x the kernel is compiled for.
using CompiledWidths = std::integer_sequence<int, 3, 5, 7, 9, 11, 13, 15>;

template <bool kWeighted, int... K>
Launch pick_width(int k0, int ko, std::integer_sequence<int, K...>) {
  Launch chosen = nullptr;
  ((k0 == K ? (chosen = pick_ko<K, kWeighted>(ko), true) : false) || ...);
  return chosen;
}

template <int... K>
bool compiled_width(int64_t k0, std::integer_sequence<int, K...>) {
  return ((k0 == K) || ...);
}

}  // namespace

int bank_outputs_per_thread(int requested, int64_t outputs_along_axis) {
  if (requested != 0) {
    if (requested != 1 && requested != 2)
      throw InvalidArgument("outputs per thread " + std::to_string(requested) +
                            " is not supported by the GPU filter bank (use 0 for automatic, 1 "
                            "or 2)");
    return requested;
  }
  return outputs_along_axis >= 2 ? 2 : 1;
}

std::string bank_cannot_implement(const Index& filter_extent, int dims) {
  const Index k = core::to_canonical(dims, filter_extent, 1);
  if (!compiled_width(k[0], CompiledWidths{}))
    return "the GPU filter bank takes 3, 5, 7, 9, 11, 13 or 15 taps along x (the filter has " +
           std::to_string(k[0]) + ")";
  return {};
}

BankLaunch plan_bank(const detail::BankProblem& p, int requested_outputs_per_thread) {
  const std::string unfit = bank_cannot_implement(p.filter_extent, p.input.dims);
  if (!unfit.empty())
    throw InvalidArgument(unfit);
  const int dims = p.input.dims;
  BankLaunch l;
  l.count = p.count;
  l.outputs = core::to_canonical(dims, p.output_extent, 1);
  l.filter = core::to_canonical(dims, p.filter_extent, 1);
  const Index& n_out = l.outputs;
  const Index& k = l.filter;
  l.filter_taps = k[0] * k[1] * k[2] * k[3];
  l.voxels = n_out[0] * n_out[1] * n_out[2] * n_out[3];
  // A 2D image's rows (canonical axis 3) go on axis 1, where a block takes 32 of them; the padded
  // volume's layout is the same either way.
  const bool rows_on_axis1 = n_out[1] == 1 && n_out[2] == 1 && k[1] == 1 && k[2] == 1;
  l.outputs_per_thread =
      rows_on_axis1 ? 1 : bank_outputs_per_thread(requested_outputs_per_thread, n_out[3]);
  const int ko = l.outputs_per_thread;
  l.outputs_per_thread_reason =
      requested_outputs_per_thread != 0 ? std::string("requested")
      : rows_on_axis1 ? std::string("automatic: 1 for a 2D image (rows on axis 1)")
                      : "automatic: 2 where the last axis has 2 outputs or more (4 filters x "
                        "2 outputs x 8 along x = 64 accumulators), else 1";
  l.width = static_cast<int>(k[0]);
  l.passes = (p.count + BankShape::kFilters - 1) / BankShape::kFilters;
  l.pass_taps = k[3] * k[2] * k[1] * l.width * BankShape::kFilters;
  const int64_t blocks3 = (n_out[3] + ko - 1) / ko;
  l.padded_extent = {0, n_out[1] + k[1] - 1, n_out[2] + k[2] - 1, blocks3 * ko + k[3] - 1};
  l.row_length = BankShape::row_length(n_out[0], l.width);
  l.rows_on_axis1 = rows_on_axis1;
  return l;
}

std::vector<float> bank_device_taps(const BankLaunch& l, const float* taps) {
  // The taps of each pass as [j3][j2][j1][jx][filter]; a last pass of fewer than FP filters has
  // zeros for the missing ones (computed, never written).
  constexpr int FP = BankShape::kFilters;
  std::vector<float> laid_out(static_cast<size_t>(l.passes * l.pass_taps), 0.0f);
  for (int f = 0; f < l.count; ++f)
    for (int64_t j = 0; j < l.filter_taps; ++j) {
      const int64_t jx = j % l.filter[0], rest = j / l.filter[0];  // (j3 * k2 + j2) * k1 + j1
      laid_out[(f / FP) * l.pass_taps + (rest * l.width + jx) * FP + f % FP] =
          taps[f * l.filter_taps + j];
    }
  return laid_out;
}

void pad_bank_input(const detail::BankProblem& p, const BankLaunch& l, int threads,
                    const core::ProgressSpan& progress, core::PaddedVolume& padded) {
  const int dims = p.input.dims;
  core::build_padded(p.input.data, core::to_canonical(dims, p.input.extent, 1),
                     core::to_canonical(dims, p.input.stride, 0),
                     core::to_canonical(dims, p.offset, 0), l.padded_extent,
                     l.outputs[0] + l.width - 1, l.row_length, p.boundary, threads, progress,
                     padded);
}

BankKernel launch_bank_device(const BankLaunch& l, int device, const float* padded,
                              const float* taps, float* outputs, const float* weights, float* sum,
                              void* stream) {
  constexpr int FP = BankShape::kFilters;
  const bool weighted = weights != nullptr;
  const int ko = l.outputs_per_thread;
  const Index& n_out = l.outputs;
  const Index& k = l.filter;
  BankGeometry g{l.row_length,
                 l.padded_extent[1],
                 l.padded_extent[2],
                 static_cast<int>(k[1]),
                 static_cast<int>(k[2]),
                 static_cast<int>(k[3]),
                 n_out[0],
                 n_out[1],
                 n_out[2],
                 n_out[3]};
  if (l.rows_on_axis1) {
    g.e1 = l.padded_extent[3];
    g.k1 = g.k3;
    g.k3 = 1;
    g.n1 = g.n3;
    g.n3 = 1;
  }
  const BankTiles tiles{
      (g.n0 + BankShape::kBx * BankShape::kTx - 1) / (BankShape::kBx * BankShape::kTx),
      (g.n1 + BankShape::kBy - 1) / BankShape::kBy, (g.n3 + ko - 1) / ko};
  const Launch launch = weighted ? pick_width<true>(l.width, ko, CompiledWidths{})
                                 : pick_width<false>(l.width, ko, CompiledWidths{});
  if (!weighted) {  // every pass in one launch
    const BankKernel kernel =
        launch(device, static_cast<cudaStream_t>(stream), g, tiles, padded, taps, l.passes,
               l.pass_taps, l.count, outputs, l.voxels, nullptr, nullptr, false);
    NDCONV_CUDA_CHECK_LAUNCH("the filter bank kernel");
    return kernel;
  }
  // The weighted sum adds each pass to the last one's: one launch per pass.
  BankKernel kernel = BankKernel::Planes;
  for (int i = 0; i < l.passes; ++i) {
    const int first = i * FP, valid = std::min(FP, l.count - first);
    kernel =
        launch(device, static_cast<cudaStream_t>(stream), g, tiles, padded, taps + i * l.pass_taps,
               1, l.pass_taps, valid, nullptr, l.voxels, weights + first * l.voxels, sum, i > 0);
    NDCONV_CUDA_CHECK_LAUNCH("the filter bank kernel");
  }
  return kernel;
}

namespace {

// One block per padded row at a time (a grid-stride loop over the rows), its threads along the
// row (bank_pad.h).
__global__ void pad_bank_kernel(BankPadGeometry g, const float* __restrict__ in,
                                float* __restrict__ padded) {
  const int64_t rows = g.e1 * g.e2 * g.e3;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* src = bank_pad_source(g, in, r);
    float* line = padded + r * g.row_length;
    for (int64_t q0 = threadIdx.x; q0 < g.row_length; q0 += blockDim.x)
      line[q0] = bank_pad_element(g, src, q0);
  }
}

// The control tensor and the coefficients of the weights computed from it on the device.
struct ControlWeights {
  const std::vector<const float*>* control;
  const std::vector<double>* coefficients;
};

void run_bank_impl(const detail::BankProblem& p, const ControlWeights* control,
                   const Options& options, RunReport& report) {
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  const BankLaunch l = plan_bank(p, options.expert.outputs_per_thread);
  const int64_t voxels = l.voxels;
  const bool weighted = p.outputs.empty();
  const int threads = core::resolve_thread_count(options.threads);
  const std::vector<float> laid_out = bank_device_taps(l, p.taps);
  core::PaddedVolume padded;
  pad_bank_input(p, l, threads, core::ProgressSpan{&options.progress, 0, 0.05}, padded);
  std::string tensor_cores_not;  // why the tensor-core kernel did not take the bank
  if (!weighted &&
      run_tensor_core_bank(p, l, padded.storage.get(), options, report, tensor_cores_not))
    return;
  // The weighted sum on the tensor cores where they take its filters and the padded input is
  // 8-bit: the kernel reads the bytes and the weights' digits instead of the floats and taps.
  std::vector<uint8_t> bytes;
  TensorCoreWeights digits;
  const TensorCoreGeometry geometry = tensor_core_geometry(l);
  if (weighted) {
    tensor_cores_not = tensor_core_unfit(l, p.taps, options, /*weighted=*/true);
    if (tensor_cores_not.empty() &&
        !padded_input_image(geometry, padded.storage.get(), l.row_length, 1, threads, bytes))
      tensor_cores_not = "the input is not 8-bit (a value that is not an integer in 0..255)";
    if (tensor_cores_not.empty())
      digits = tensor_core_weights(geometry, p.taps, tensor_core_tile_rows(geometry));
  }
  const bool on_tensor_cores = weighted && tensor_cores_not.empty();
  const size_t padded_count = static_cast<size_t>(l.padded_count());

  const auto t_upload = std::chrono::steady_clock::now();
  // The input: the floats, or the bytes (DeviceBuffer counts floats).
  DeviceBuffer d_in(on_tensor_cores ? (bytes.size() + 3) / 4 : padded_count);
  DeviceBuffer d_taps(on_tensor_cores ? digits.fragments.size() : laid_out.size());
  DeviceBuffer d_scales(on_tensor_cores ? digits.scales.size() : 1);
  DeviceBuffer d_out(weighted ? voxels : voxels * p.count);
  DeviceBuffer d_weights(weighted ? voxels * p.count : 1);
  if (on_tensor_cores) {
    NDCONV_CUDA_CHECK(cudaMemcpy(d_in.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    NDCONV_CUDA_CHECK(cudaMemcpy(d_taps.get(), digits.fragments.data(),
                                 digits.fragments.size() * sizeof(int32_t),
                                 cudaMemcpyHostToDevice));
    NDCONV_CUDA_CHECK(cudaMemcpy(d_scales.get(), digits.scales.data(),
                                 digits.scales.size() * sizeof(float), cudaMemcpyHostToDevice));
  } else {
    NDCONV_CUDA_CHECK(cudaMemcpy(d_in.get(), padded.storage.get(), padded_count * sizeof(float),
                                 cudaMemcpyHostToDevice));
    NDCONV_CUDA_CHECK(cudaMemcpy(d_taps.get(), laid_out.data(), laid_out.size() * sizeof(float),
                                 cudaMemcpyHostToDevice));
  }
  if (weighted && control != nullptr) {  // the weights from the control tensor, on the device
    const int components = static_cast<int>(control->control->size());
    DeviceBuffer d_control(static_cast<size_t>(voxels * components));
    for (int c = 0; c < components; ++c)
      NDCONV_CUDA_CHECK(cudaMemcpy(d_control.get() + c * voxels, (*control->control)[c],
                                   voxels * sizeof(float), cudaMemcpyHostToDevice));
    launch_control_weights(d_control.get(), components, *control->coefficients, voxels,
                           d_weights.get(), nullptr);
    NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  } else if (weighted) {
    for (int f = 0; f < p.count; ++f)
      upload_volume(p.weights[f], d_weights.get() + f * voxels, nullptr);
  }
  report.seconds_upload = detail::seconds_since(t_upload);

  const auto t_compute = std::chrono::steady_clock::now();
  BankKernel kernel = BankKernel::Planes;
  if (on_tensor_cores)
    launch_tensor_core_weighted_sum(geometry, options.cuda_device,
                                    reinterpret_cast<const uint8_t*>(d_in.get()),
                                    reinterpret_cast<const int32_t*>(d_taps.get()), d_scales.get(),
                                    d_weights.get(), d_out.get(), nullptr);
  else
    kernel = launch_bank_device(
        l, options.cuda_device, d_in.get(), d_taps.get(), weighted ? nullptr : d_out.get(),
        weighted ? d_weights.get() : nullptr, weighted ? d_out.get() : nullptr, nullptr);
  if (options.progress && !options.progress(0.5))
    throw Aborted();
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute = detail::seconds_since(t_compute);

  const auto t_download = std::chrono::steady_clock::now();
  const int outputs = weighted ? 1 : p.count;
  for (int f = 0; f < outputs; ++f)
    download_volume(d_out.get() + f * voxels, weighted ? p.sum_output : p.outputs[f], nullptr);
  report.seconds_download = detail::seconds_since(t_download);
  if (on_tensor_cores) {
    report.backend = Backend::Cuda;
    report.outputs_per_thread = l.outputs_per_thread;
    report.outputs_per_thread_reason = l.outputs_per_thread_reason;
    report.notes.push_back("GPU filter bank's weighted sum " +
                           tensor_core_note(l, options.cuda_device) +
                           ", the weighted sum in the epilogue: the input is 8-bit");
    return;
  }
  report_bank_launch(l, kernel, "; not on the tensor cores: " + tensor_cores_not, report);
}

}  // namespace

void upload_volume(const ConstVolumeView& view, float* device, void* stream) {
  cuda_filters::upload(view, device, static_cast<cudaStream_t>(stream));
}

void download_volume(const float* device, const VolumeView& view, void* stream) {
  cuda_filters::download(device, view, static_cast<cudaStream_t>(stream));
}

void report_bank_launch(const BankLaunch& l, BankKernel kernel, const std::string& detail,
                        RunReport& report) {
  report.backend = Backend::Cuda;
  report.outputs_per_thread = l.outputs_per_thread;
  report.outputs_per_thread_reason = l.outputs_per_thread_reason;
  report.notes.push_back("GPU filter bank: " + std::to_string(l.passes) +
                         " passes of 4 filters over " + std::to_string(l.count) + " filters, " +
                         (kernel == BankKernel::Ring
                              ? "the planes kept as a ring along the last axis"
                              : "the planes staged per tile") +
                         detail);
}

void pad_bank_input_device(const detail::BankProblem& p, const BankLaunch& l, float* padded,
                           void* stream) {
  const int dims = p.input.dims;
  const BankPadGeometry g = bank_pad_geometry(
      core::to_canonical(dims, p.input.extent, 1), core::to_canonical(dims, p.input.stride, 0),
      core::to_canonical(dims, p.offset, 0), l.padded_extent, l.outputs[0] + l.width - 1,
      l.row_length, p.boundary);
  // One block per row up to 2^20 blocks (a grid-stride loop beyond); 64 threads cover a row of
  // up to a few hundred floats in a few steps.
  const int64_t rows = g.e1 * g.e2 * g.e3;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
  pad_bank_kernel<<<blocks, 64, 0, static_cast<cudaStream_t>(stream)>>>(g, p.input.data, padded);
  NDCONV_CUDA_CHECK_LAUNCH("the bank's padding kernel");
}

void run_bank(const detail::BankProblem& p, const Options& options, RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  run_bank_impl(p, nullptr, options, report);
}

void run_bank_with_control(const detail::BankProblem& p, const std::vector<const float*>& control,
                           const std::vector<double>& coefficients, const Options& options,
                           RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  const int highpass = p.count - 1, components = static_cast<int>(control.size());
  if (!p.outputs.empty() || highpass < 1 || highpass > kMaxHighpass || components < 1 ||
      components > kMaxComponents ||
      static_cast<int64_t>(coefficients.size()) != int64_t{highpass} * components)
    throw InvalidArgument(
        "the GPU reconstruction takes a lowpass and 1 to 10 highpass filters "
        "weighted by 1 to 10 control tensor components");
  const ControlWeights weights{&control, &coefficients};
  run_bank_impl(p, &weights, options, report);
}

}  // namespace ndconv::cuda_bank
