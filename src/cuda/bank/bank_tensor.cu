// The adaptive filter's structure tensor on the GPU (bank_backend.h: run_structure_tensor;
// bank_gpu.h: plan_tensor_slabs, launch_tensor_slab): the quadrature bank's responses and the
// tensor T = sum_q |q_q| M_q formed from them on the device, in slabs along the last axis, only the
// tensor's components coming back.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/canonical_axes.h"
#include "core/padding.h"
#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/bank_kernel.cuh"
#include "cuda/bank/bank_voxels.h"
#include "cuda/bank/tensor_core_bank.h"
#include "cuda/bank/tensor_core_tile.h"
#include "cuda/check.h"
#include "cuda/device_memory.h"

namespace ndconv::cuda_bank {

namespace {

using cuda_backend::DeviceBuffer;
using detail::seconds_since;

struct TensorDuals {
  double value[kMaxQuadrature * kMaxComponents];
  int filters;     // quadrature filters K (2K responses)
  int components;  // d (d + 1) / 2
};

// T = sum_q |q_q| M_q per voxel, in double as the CPU computes it; responses 2q and 2q + 1 are
// filter q's real and imaginary parts, each a contiguous volume of `voxels` values; component c
// goes to tensor[c * component_stride + v].
__global__ void structure_tensor_kernel(const float* __restrict__ responses, int64_t voxels,
                                        TensorDuals d, float* __restrict__ tensor,
                                        int64_t component_stride) {
  const int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= voxels)
    return;
  double t[kMaxComponents];
#pragma unroll
  for (int c = 0; c < kMaxComponents; ++c)
    t[c] = 0.0;
  for (int q = 0; q < d.filters; ++q) {
    const double magnitude = hypot(static_cast<double>(responses[2 * q * voxels + v]),
                                   static_cast<double>(responses[(2 * q + 1) * voxels + v]));
#pragma unroll
    for (int c = 0; c < kMaxComponents; ++c)
      if (c < d.components)
        t[c] += magnitude * d.value[q * d.components + c];
  }
#pragma unroll
  for (int c = 0; c < kMaxComponents; ++c)
    if (c < d.components)
      tensor[c * component_stride + v] = static_cast<float>(t[c]);
}

}  // namespace

TensorSlabs plan_tensor_slabs(const detail::BankProblem& p, double budget_bytes,
                              int extra_floats_per_voxel, int requested_outputs_per_thread) {
  const int dims = p.input.dims;
  const int last = dims - 1;
  const Index n = core::to_canonical(dims, p.output_extent, 1);
  const Index k = core::to_canonical(dims, p.filter_extent, 1);
  TensorSlabs s;
  s.plane = n[0] * n[1] * n[2];
  // Per output plane: the responses, the extra floats and a plane of the padded input; once: the
  // padded input's halo along the last axis (and the KO rounding).
  const double padded_plane = static_cast<double>(
      BankShape::row_length(n[0], static_cast<int>(k[0])) * (n[1] + k[1] - 1) * (n[2] + k[2] - 1));
  const double plane_bytes =
      (static_cast<double>(p.count + extra_floats_per_voxel) * static_cast<double>(s.plane) +
       padded_plane) *
      sizeof(float);
  const double halo_bytes = padded_plane * sizeof(float) * static_cast<double>(k[3] + 1);
  s.planes =
      std::clamp<int64_t>(static_cast<int64_t>((budget_bytes - halo_bytes) / plane_bytes), 1, n[3]);
  for (int64_t first = 0; first < n[3]; first += s.planes) {
    detail::BankProblem slab = p;
    slab.output_extent[last] = std::min(s.planes, n[3] - first);
    slab.offset[last] = p.offset[last] + first;
    s.launches.push_back(plan_bank(slab, requested_outputs_per_thread));
    s.padded_max = std::max(s.padded_max, s.launches.back().padded_count());
    s.problems.push_back(slab);
  }
  return s;
}

int64_t TensorSlabs::device_floats(int extra_floats_per_voxel) const {
  return padded_max + planes * plane * (problems[0].count + extra_floats_per_voxel);
}

void launch_structure_tensor(const BankLaunch& l, const float* responses,
                             const std::vector<double>& duals, int components, float* tensor,
                             int64_t component_stride, void* stream) {
  const int filters = l.count / 2;
  if (l.count % 2 != 0 || filters > kMaxQuadrature || components < 1 ||
      components > kMaxComponents ||
      static_cast<int64_t>(duals.size()) != int64_t{filters} * components)
    throw InvalidArgument(
        "the GPU structure tensor takes up to 12 complex quadrature filters and "
        "1 to 10 tensor components");
  TensorDuals d{};
  std::copy(duals.begin(), duals.end(), d.value);
  d.filters = filters;
  d.components = components;
  structure_tensor_kernel<<<voxel_blocks(l.voxels), kVoxelThreads, 0,
                            static_cast<cudaStream_t>(stream)>>>(responses, l.voxels, d, tensor,
                                                                 component_stride);
  NDCONV_CUDA_CHECK_LAUNCH("the structure tensor kernel");
}

void launch_tensor_slab(const BankLaunch& l, int device, const float* padded, const float* taps,
                        float* responses, const std::vector<double>& duals, int components,
                        float* tensor, int64_t component_stride, void* stream) {
  launch_bank_device(l, device, padded, taps, responses, nullptr, nullptr, stream);
  launch_structure_tensor(l, responses, duals, components, tensor, component_stride, stream);
}

SlabBank plan_slab_bank(const TensorSlabs& slabs, const detail::BankProblem& p, const float* taps,
                        const Options& options, void* stream) {
  SlabBank b;
  b.taps = taps;
  b.device = options.cuda_device;
  b.tensor_cores_not = tensor_core_unfit(slabs.launches[0], p.taps, options);
  if (b.tensor_cores_not.empty()) {
    int64_t bytes = 0;
    for (const BankLaunch& l : slabs.launches)
      bytes = std::max(bytes, tensor_core_geometry(l).padded_bytes());
    b.tensor_cores = upload_tensor_core_operands(slabs.launches[0], p.taps, bytes,
                                                 options.cuda_device, false, stream);
  }
  return b;
}

int64_t slab_bank_extra_bytes(const TensorSlabs& slabs, const detail::BankProblem& p,
                              const Options& options) {
  if (!tensor_core_unfit(slabs.launches[0], p.taps, options).empty())
    return 0;
  int64_t bytes = 0;
  for (const BankLaunch& l : slabs.launches)
    bytes = std::max(bytes, tensor_core_geometry(l).padded_bytes());
  const TensorCoreGeometry g = tensor_core_geometry(slabs.launches[0]);
  return bytes + tensor_core_kernel_weights_bytes(g, options.cuda_device);
}

void launch_tensor_slab(const BankLaunch& l, int device, const float* padded, SlabBank& b,
                        float* responses, const std::vector<double>& duals, int components,
                        float* tensor, int64_t component_stride, void* stream) {
  // Once a slab is not 8-bit, the FP32 kernels take the rest.
  if (b.tensor_cores_not.empty() && !pack_padded_bytes_device(l, padded, b.tensor_cores, stream))
    b.tensor_cores_not = "the input is not 8-bit (a value that is not an integer in 0..255)";
  if (!b.tensor_cores_not.empty()) {
    launch_tensor_slab(l, device, padded, b.taps, responses, duals, components, tensor,
                       component_stride, stream);
    ++b.on_fp32;
    return;
  }
  launch_tensor_core_slab(l, device, b.tensor_cores, responses, stream);
  launch_structure_tensor(l, responses, duals, components, tensor, component_stride, stream);
  ++b.on_tensor_cores;
}

std::vector<std::string> slab_bank_notes(const SlabBank& b, const BankLaunch& l) {
  std::vector<std::string> notes;
  if (b.on_tensor_cores > 0)
    notes.push_back("GPU quadrature bank " + tensor_core_note(l, b.device) + " in " +
                    std::to_string(b.on_tensor_cores) + " slab(s): the input is 8-bit");
  if (b.on_fp32 > 0)
    notes.push_back("GPU quadrature bank on the FP32 kernels in " + std::to_string(b.on_fp32) +
                    " slab(s); not on the tensor cores: " + b.tensor_cores_not);
  return notes;
}

void run_structure_tensor(const detail::BankProblem& p, const std::vector<double>& duals,
                          const std::vector<float*>& tensor, const Options& options,
                          RunReport& report) {
  const cuda_backend::CallerDevice caller_device;  // restored on return (check.h)
  NDCONV_CUDA_CHECK(cudaSetDevice(options.cuda_device));
  const int components = static_cast<int>(tensor.size());
  // Slabs along the last axis: each slab's responses, tensor and padded input within half of the
  // device's free memory.
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const TensorSlabs slabs = plan_tensor_slabs(p, 0.5 * static_cast<double>(free_bytes), components,
                                              options.expert.outputs_per_thread);
  const int64_t plane = slabs.plane, slab_planes = slabs.planes;
  const int64_t planes_total = core::to_canonical(p.input.dims, p.output_extent, 1)[3];
  const int threads = core::resolve_thread_count(options.threads);
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<float> taps = bank_device_taps(slabs.launches[0], p.taps);  // the same passes
  DeviceBuffer d_padded(static_cast<size_t>(slabs.padded_max)), d_taps(taps.size());
  DeviceBuffer d_responses(static_cast<size_t>(slab_planes * plane * p.count));
  DeviceBuffer d_tensor(static_cast<size_t>(slab_planes * plane * components));
  NDCONV_CUDA_CHECK(
      cudaMemcpy(d_taps.get(), taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice));
  SlabBank bank = plan_slab_bank(slabs, p, d_taps.get(), options, nullptr);
  report.seconds_upload = seconds_since(t0);
  report.seconds_compute = report.seconds_download = 0;
  for (size_t i = 0; i < slabs.problems.size(); ++i) {
    const BankLaunch& l = slabs.launches[i];
    const int64_t first = static_cast<int64_t>(i) * slab_planes;
    t0 = std::chrono::steady_clock::now();
    core::PaddedVolume padded;
    pad_bank_input(slabs.problems[i], l, threads, {}, padded);
    NDCONV_CUDA_CHECK(cudaMemcpy(d_padded.get(), padded.storage.get(),
                                 static_cast<size_t>(l.padded_count()) * sizeof(float),
                                 cudaMemcpyHostToDevice));
    report.seconds_upload += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    launch_tensor_slab(l, options.cuda_device, d_padded.get(), bank, d_responses.get(), duals,
                       components, d_tensor.get(), l.voxels, nullptr);
    NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
    report.seconds_compute += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < components; ++c)
      NDCONV_CUDA_CHECK(cudaMemcpy(tensor[c] + first * plane, d_tensor.get() + c * l.voxels,
                                   static_cast<size_t>(l.voxels) * sizeof(float),
                                   cudaMemcpyDeviceToHost));
    report.seconds_download += seconds_since(t0);
    if (options.progress && !options.progress(static_cast<double>(first + l.outputs[3]) /
                                              static_cast<double>(planes_total)))
      throw Aborted();
  }
  report.backend = Backend::Cuda;
  report.outputs_per_thread = slabs.launches[0].outputs_per_thread;
  report.outputs_per_thread_reason = slabs.launches[0].outputs_per_thread_reason;
  report.slabs = static_cast<int>(slabs.problems.size());
  report.notes.push_back("GPU structure tensor: " + std::to_string(slabs.problems.size()) +
                         " slabs, the responses kept on the device");
  for (std::string& note : slab_bank_notes(bank, slabs.launches[0]))
    report.notes.push_back(std::move(note));
}

}  // namespace ndconv::cuda_bank
