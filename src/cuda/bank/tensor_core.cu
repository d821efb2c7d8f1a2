// The filter bank on the tensor cores for 8-bit inputs (tensor_core_kernel.cuh): the launch, the
// checks that choose it, and the run the bank's driver (bank.cu) hands it. On a Hopper GPU (compute
// capability 9.0) with the binary's sm_90a code the policy takes the wgmma kernel (wgmma_bank.h)
// for the quadrature banks' responses, elsewhere (and for the weighted sum) the mma.sync kernel
// (sm_80 and later); the weights' layout follows the choice (tensor_core_kernel_weights).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_kernel.cuh"
#include "cuda/bank/wgmma_bank.h"
#include "cuda/bank/wgmma_layout.h"
#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"

namespace ndconv::cuda_bank {

namespace {

using cuda_backend::DeviceBuffer;
using S = TensorCoreShape;

// Blocks per SM the registers must allow: 3 of 128 threads hold the 96 accumulators (2 rows x 2 M
// tiles x 6 n tiles) without spills (167 registers); 4 blocks (128 registers) measured slower
// (1.339 against 1.244 ms, run 16); the next chunk's A fragments not prefetched (two sets do not
// fit).
constexpr int kTensorCoreMinBlocks = 3;
constexpr bool kTensorCorePrefetchA = false;
// Several tap frames (TensorCoreFramesTile): one block of 12 warps per SM, the shared memory
// holding every frame's weights (7 frames: 137 KB of the block's 216 KB).
constexpr int kTensorCoreFramesMinBlocks = 1;

// Enqueues Tile's kernel (Weighted: the weighted sum of `weights` into `sum`, else the responses
// into `outputs`); throws InvalidArgument where its block does not fit on the GPU's SMs.
template <class Tile, int MinBlocks, bool Weighted = false>
void launch_tile(const TensorCoreGeometry& g, int device, const uint8_t* padded,
                 const int32_t* fragments, const float* scales, float* outputs, cudaStream_t stream,
                 const float* weights = nullptr, float* sum = nullptr) {
  TensorCoreArgs a = tensor_core_args<Tile>(g, padded, fragments, scales, outputs);
  a.weights = weights;
  a.sum = sum;
  const int sms = cuda_backend::device_attributes(device).multiprocessors;
  if (!launch_tensor_core_kernel<Tile, MinBlocks, kTensorCorePrefetchA, 1, Weighted>(a, g.passes(),
                                                                                     sms, stream))
    throw InvalidArgument("the tensor-core filter bank's block does not fit on the GPU's SMs (" +
                          std::to_string(Tile::shared_bytes(g.frames())) +
                          " bytes of shared memory)");
  NDCONV_CUDA_CHECK_LAUNCH("the tensor-core filter bank kernel");
}

// A device buffer of `bytes` bytes (DeviceBuffer counts floats).
DeviceBuffer bytes_buffer(size_t bytes) {
  return DeviceBuffer((bytes + 3) / 4);
}

const cuda_backend::TensorCoreBankPolicy& backend_policy() {
  static const cuda_backend::TensorCoreBankPolicy policy = cuda_backend::Tuning{}.bank_tensor_cores;
  return policy;
}

// The wgmma block shape `policy` chooses for `g`.
int wgmma_shape(const TensorCoreGeometry& g, const cuda_backend::TensorCoreBankPolicy& policy) {
  return g.frames() > 1 ? policy.wgmma_shape_4d : policy.wgmma_shape_3d;
}

// Shared bytes of the mma.sync block that runs `g`.
int tensor_core_shared_bytes(const TensorCoreGeometry& g) {
  if (g.taps().groups > 2)
    return g.filter[1] == TensorCoreWideFramesTile9::kK1
               ? TensorCoreWideFramesTile9::shared_bytes(g.frames())
               : TensorCoreWideFramesTile11::shared_bytes(g.frames());
  return g.frames() > 1 ? TensorCoreFramesTile::shared_bytes(g.frames())
                        : TensorCoreDefaultTile::shared_bytes(1);
}

// Bytes of 8-bit padded rows from the FP32 bank's padded rows (pack_padded_bytes on the device):
// values past the byte row must be zeros; `not_eight_bit` raised by any value that is not an
// integer in 0..255.
__global__ void pack_bytes_kernel(const float* __restrict__ padded, int64_t rows,
                                  int64_t row_length, int64_t row_bytes,
                                  uint8_t* __restrict__ bytes, unsigned* not_eight_bit) {
  const int64_t span = row_length > row_bytes ? row_length : row_bytes;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (int64_t q = threadIdx.x; q < span; q += blockDim.x) {
      const float v = q < row_length ? padded[r * row_length + q] : 0.0f;
      // NaN fails every comparison.
      const bool fits = q < row_bytes ? v >= 0.0f && v <= 255.0f && v == floorf(v) : v == 0.0f;
      if (!fits)
        *not_eight_bit = 1u;
      if (q < row_bytes)
        bytes[r * row_bytes + q] = fits ? static_cast<uint8_t>(v) : uint8_t{0};
    }
}

std::string format_error(double e) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", e);
  return text;
}

}  // namespace

TensorCoreGeometry tensor_core_geometry(const BankLaunch& l) {
  TensorCoreGeometry g;
  g.outputs = l.outputs;
  g.filter = l.filter;
  g.count = l.count;
  g.padded_extent = l.padded_extent;
  g.row_bytes = tensor_core_row_bytes(l.outputs[0], g.taps().groups);
  return g;
}

std::string tensor_core_unfit(const BankLaunch& l, const float* taps, int device,
                              const cuda_backend::TensorCoreBankPolicy& policy, bool weighted) {
  if (!policy.allowed)
    return "the tensor cores are off in the backend's policy";
  if (weighted && l.count > S::kFilters)
    return "the tensor-core weighted sum takes one pass of up to " + std::to_string(S::kFilters) +
           " filters (the bank has " + std::to_string(l.count) + ")";
  const cuda_backend::DeviceAttributes& d = cuda_backend::device_attributes(device);
  if (d.cc_major * 10 + d.cc_minor < policy.min_compute_capability)
    return "the device (compute capability " + std::to_string(d.cc_major) + "." +
           std::to_string(d.cc_minor) + ") has no 8-bit mma.sync";
  if (l.rows_on_axis1)
    return "a 2D image";
  std::string shape = tensor_core_cannot_implement(l.filter, weighted);
  if (!shape.empty())
    return shape;
  const TensorCoreGeometry g = tensor_core_geometry(l);
  int shared = 0;
  NDCONV_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int needed = !weighted && tensor_core_takes_wgmma(g, device, policy)
                         ? wgmma_bank_shared_bytes(g, wgmma_shape(g, policy))
                         : tensor_core_shared_bytes(g);
  if (needed > shared)
    return "the kernel's block needs " + std::to_string(needed) + " bytes of shared memory for " +
           std::to_string(g.frames()) + " tap frame(s), the device gives a block " +
           std::to_string(shared);
  const double e = worst_split_error(g, taps, S::kSlices);
  if (!(e <= policy.max_split_error))
    return "the weights' " + std::to_string(S::kSlices) + " digits lose " + format_error(e) +
           " of a filter's largest tap (the slice test allows " +
           format_error(policy.max_split_error) + ")";
  return {};
}

std::string tensor_core_unfit(const BankLaunch& l, const float* taps, const Options& options,
                              bool weighted) {
  if (!options.expert.tensor_cores)
    return "the tensor cores are off in the options (expert.tensor_cores)";
  return tensor_core_unfit(l, taps, options.cuda_device, cuda_backend::Tuning{}.bank_tensor_cores,
                           weighted);
}

bool tensor_core_takes_wgmma(const TensorCoreGeometry& g, int device,
                             const cuda_backend::TensorCoreBankPolicy& policy) {
  return policy.wgmma && g.taps().groups == 2 && g.filter[1] == S::kK1 && g.filter[3] == S::kK3 &&
         g.frames() <= S::kMaxFrames && wgmma_runs_on(device);
}

TensorCoreWeights tensor_core_kernel_weights(const TensorCoreGeometry& g, const float* taps,
                                             int device) {
  return tensor_core_kernel_weights(g, taps, device, backend_policy());
}

TensorCoreWeights tensor_core_kernel_weights(const TensorCoreGeometry& g, const float* taps,
                                             int device,
                                             const cuda_backend::TensorCoreBankPolicy& policy) {
  if (!tensor_core_takes_wgmma(g, device, policy))
    return tensor_core_weights(g, taps, tensor_core_tile_rows(g));
  const int shape = wgmma_shape(g, policy), rows = wgmma_bank_rows(g, shape);
  TensorCoreWeights w = tensor_core_weights(g, taps, rows);
  WgmmaWeights b = wgmma_weights(g, w, rows);
  if (wgmma_bank_pair_tails(g, shape))
    wgmma_pair_tails(g, b);
  w.fragments.assign((b.b.size() + 3) / 4, 0);
  std::memcpy(w.fragments.data(), b.b.data(), b.b.size());
  return w;
}

int64_t tensor_core_kernel_weights_bytes(const TensorCoreGeometry& g, int device) {
  const cuda_backend::TensorCoreBankPolicy& policy = backend_policy();
  if (!tensor_core_takes_wgmma(g, device, policy))
    return tensor_core_weights_bytes(g, tensor_core_tile_rows(g));
  const int rows = wgmma_bank_rows(g, wgmma_shape(g, policy));
  return int64_t{g.passes()} * g.frames() * WgmmaShape::frame_bytes(rows) +
         int64_t{g.passes()} * S::kFilters * 4;
}

void launch_tensor_core_bank(const TensorCoreGeometry& g, int device, const uint8_t* padded,
                             const int32_t* fragments, const float* scales, float* outputs,
                             void* stream) {
  launch_tensor_core_bank(g, device, backend_policy(), padded, fragments, scales, outputs, stream);
}

void launch_tensor_core_bank(const TensorCoreGeometry& g, int device,
                             const cuda_backend::TensorCoreBankPolicy& policy,
                             const uint8_t* padded, const int32_t* fragments, const float* scales,
                             float* outputs, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (tensor_core_takes_wgmma(g, device, policy))
    launch_wgmma_bank(g, wgmma_shape(g, policy), device, padded,
                      reinterpret_cast<const uint8_t*>(fragments), scales, outputs, s);
  else if (g.frames() > 1)
    launch_tile<TensorCoreFramesTile, kTensorCoreFramesMinBlocks>(g, device, padded, fragments,
                                                                  scales, outputs, s);
  else
    launch_tile<TensorCoreDefaultTile, kTensorCoreMinBlocks>(g, device, padded, fragments, scales,
                                                             outputs, s);
}

void launch_tensor_core_weighted_sum(const TensorCoreGeometry& g, int device, const uint8_t* padded,
                                     const int32_t* fragments, const float* scales,
                                     const float* weights, float* sum, void* stream) {
  if (g.passes() != 1 || !tensor_core_cannot_implement(g.filter, true).empty())
    throw InvalidArgument(
        "internal: the tensor-core weighted sum runs one pass of 11^d or 9^d "
        "filters");
  const auto s = static_cast<cudaStream_t>(stream);
  if (g.filter[1] == TensorCoreWideFramesTile9::kK1)
    launch_tile<TensorCoreWideFramesTile9, kTensorCoreFramesMinBlocks, true>(
        g, device, padded, fragments, scales, nullptr, s, weights, sum);
  else
    launch_tile<TensorCoreWideFramesTile11, kTensorCoreFramesMinBlocks, true>(
        g, device, padded, fragments, scales, nullptr, s, weights, sum);
}

DeviceTensorCoreOperands upload_tensor_core_operands(const BankLaunch& l, const float* taps,
                                                     int64_t max_padded_bytes, int device,
                                                     bool weighted, void* stream) {
  const TensorCoreGeometry g = tensor_core_geometry(l);
  const TensorCoreWeights w = weighted ? tensor_core_weights(g, taps, tensor_core_tile_rows(g))
                                       : tensor_core_kernel_weights(g, taps, device);
  const auto s = static_cast<cudaStream_t>(stream);
  DeviceTensorCoreOperands o;
  o.fragments = bytes_buffer(w.fragments.size() * sizeof(int32_t));
  o.scales.allocate(w.scales.size());
  o.bytes = bytes_buffer(static_cast<size_t>(max_padded_bytes));
  o.flag.allocate(1);
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(o.fragments.get(), w.fragments.data(),
                                    w.fragments.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                    s));
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(o.scales.get(), w.scales.data(),
                                    w.scales.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(s));  // before `w` goes
  return o;
}

bool pack_padded_bytes_device(const BankLaunch& l, const float* padded, DeviceTensorCoreOperands& o,
                              void* stream) {
  const TensorCoreGeometry g = tensor_core_geometry(l);
  if (static_cast<size_t>(g.padded_bytes()) > o.bytes.size() * sizeof(float))
    throw InvalidArgument("internal: the tensor-core input buffer is too small for the slab");
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t rows = g.padded_extent[1] * g.padded_extent[2] * g.padded_extent[3];
  NDCONV_CUDA_CHECK(cudaMemsetAsync(o.flag.get(), 0, sizeof(unsigned), s));
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
  pack_bytes_kernel<<<blocks, 256, 0, s>>>(padded, rows, l.row_length, g.row_bytes,
                                           reinterpret_cast<uint8_t*>(o.bytes.get()),
                                           reinterpret_cast<unsigned*>(o.flag.get()));
  NDCONV_CUDA_CHECK_LAUNCH("the 8-bit packing kernel");
  unsigned not_eight_bit = 0;
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(&not_eight_bit, o.flag.get(), sizeof not_eight_bit,
                                    cudaMemcpyDeviceToHost, s));
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(s));
  return not_eight_bit == 0;
}

void launch_tensor_core_slab(const BankLaunch& l, int device, const DeviceTensorCoreOperands& o,
                             float* outputs, void* stream) {
  launch_tensor_core_bank(
      tensor_core_geometry(l), device, reinterpret_cast<const uint8_t*>(o.bytes.get()),
      reinterpret_cast<const int32_t*>(o.fragments.get()), o.scales.get(), outputs, stream);
}

void launch_tensor_core_weighted_slab(const BankLaunch& l, int device,
                                      const DeviceTensorCoreOperands& o, const float* weights,
                                      float* sum, void* stream) {
  launch_tensor_core_weighted_sum(
      tensor_core_geometry(l), device, reinterpret_cast<const uint8_t*>(o.bytes.get()),
      reinterpret_cast<const int32_t*>(o.fragments.get()), o.scales.get(), weights, sum, stream);
}

std::string tensor_core_note(const BankLaunch& l, int device) {
  const TensorCoreGeometry g = tensor_core_geometry(l);
  return std::string("on the tensor cores (") +
         (tensor_core_takes_wgmma(g, device, backend_policy()) ? "wgmma" : "mma.sync") +
         " u8 x s8, " + std::to_string(S::kSlices) + " weight digits per filter, " +
         std::to_string(g.passes()) + " passes of up to " + std::to_string(S::kFilters) +
         " filters, " + std::to_string(g.frames()) + " tap frame(s)" +
         (g.taps().groups > 2 ? ", " + std::to_string(g.taps().groups) +
                                    " groups of 4 taps a tap row, the weights streamed a frame "
                                    "at a time"
                              : std::string()) +
         ")";
}

bool run_tensor_core_bank(const detail::BankProblem& p, const BankLaunch& l, const float* padded,
                          const Options& options, RunReport& report, std::string& why_not) {
  why_not =
      p.outputs.empty() ? std::string("the weighted sum") : tensor_core_unfit(l, p.taps, options);
  if (!why_not.empty())
    return false;
  const TensorCoreGeometry g = tensor_core_geometry(l);
  std::vector<uint8_t> bytes;
  if (!padded_input_image(g, padded, l.row_length, 1, core::resolve_thread_count(options.threads),
                          bytes)) {
    why_not = "the input is not 8-bit (a value that is not an integer in 0..255)";
    return false;
  }
  const TensorCoreWeights w = tensor_core_kernel_weights(g, p.taps, options.cuda_device);
  const int64_t voxels = g.voxels();

  const auto t_upload = std::chrono::steady_clock::now();
  DeviceBuffer d_in = bytes_buffer(bytes.size());
  DeviceBuffer d_fragments = bytes_buffer(w.fragments.size() * sizeof(int32_t));
  DeviceBuffer d_scales(w.scales.size());
  DeviceBuffer d_out(static_cast<size_t>(voxels * g.count));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_in.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_fragments.get(), w.fragments.data(),
                               w.fragments.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_scales.get(), w.scales.data(), w.scales.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
  report.seconds_upload = detail::seconds_since(t_upload);

  const auto t_compute = std::chrono::steady_clock::now();
  launch_tensor_core_bank(g, options.cuda_device, reinterpret_cast<const uint8_t*>(d_in.get()),
                          reinterpret_cast<const int32_t*>(d_fragments.get()), d_scales.get(),
                          d_out.get(), nullptr);
  if (options.progress && !options.progress(0.5))
    throw Aborted();
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute = detail::seconds_since(t_compute);

  const auto t_download = std::chrono::steady_clock::now();
  for (int f = 0; f < g.count; ++f)
    download_volume(d_out.get() + f * voxels, p.outputs[f], nullptr);
  report.seconds_download = detail::seconds_since(t_download);
  report.backend = Backend::Cuda;
  report.notes.push_back("GPU filter bank " + tensor_core_note(l, options.cuda_device) +
                         ": the input is 8-bit");
  return true;
}

}  // namespace ndconv::cuda_bank
