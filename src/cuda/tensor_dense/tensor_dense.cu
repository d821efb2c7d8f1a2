// One dense filter on an 8-bit 3D volume on the tensor cores (tensor_dense_kernel.cuh): the launch,
// the checks that choose it and the run that run_dense_stored hands an 8-bit input to.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/parallel_for.h"
#include "core/seconds_since.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/device_memory.h"
#include "cuda/tensor_dense/tensor_dense.h"
#include "cuda/tensor_dense/tensor_dense_kernel.cuh"
#include "ndconv/errors.h"

namespace ndconv::cuda_tensor_dense {

namespace {

using cuda_backend::DeviceBuffer;

template <class Tile>
void launch_tile(const TensorDenseGeometry& g, const uint8_t* padded, const int32_t* fragments,
                 float scale, float* out, int planes_per_block, cudaStream_t stream) {
  const auto kernel = tensor_dense_kernel<Tile>;
  if (Tile::kSharedBytes > 48 * 1024)
    NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Tile::kSharedBytes));
  TensorDenseArgs a;
  a.padded = padded;
  a.row_bytes = g.row_bytes;
  a.plane_bytes = g.row_bytes * g.rows;
  a.n0 = static_cast<int>(g.outputs[0]);
  a.n1 = static_cast<int>(g.outputs[1]);
  a.n2 = static_cast<int>(g.outputs[2]);
  a.planes_per_block = planes_per_block;
  a.fragments = fragments;
  a.scale = scale;
  a.out = out;
  const dim3 grid(static_cast<unsigned>((g.outputs[0] + Tile::kBX - 1) / Tile::kBX),
                  static_cast<unsigned>((g.outputs[1] + Tile::kBY - 1) / Tile::kBY),
                  static_cast<unsigned>((g.outputs[2] + planes_per_block - 1) / planes_per_block));
  kernel<<<grid, Tile::kThreads, Tile::kSharedBytes, stream>>>(a);
  NDCONV_CUDA_CHECK_LAUNCH("the tensor-core dense kernel");
}

// A tile's outputs along x and y and the blocks of its kernel an SM holds at once.
struct TileFacts {
  int bx, by, blocks_per_sm;
};
template <class Tile>
TileFacts tile_facts() {
  const auto kernel = tensor_dense_kernel<Tile>;
  if (Tile::kSharedBytes > 48 * 1024)
    NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Tile::kSharedBytes));
  int per_sm = 0;
  NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Tile::kThreads,
                                                                  Tile::kSharedBytes));
  return {Tile::kBX, Tile::kBY, per_sm};
}

// A device buffer of `bytes` bytes (DeviceBuffer counts floats).
DeviceBuffer bytes_buffer(size_t bytes) {
  return DeviceBuffer((bytes + 3) / 4);
}

}  // namespace

std::string tensor_dense_unfit(int dims, const Index& filter_extent, int device,
                               const cuda_backend::TensorCoreDensePolicy& policy) {
  if (!policy.allowed)
    return "the tensor cores are off in the backend's policy";
  const std::string shape = tensor_dense_cannot_implement(dims, filter_extent);
  if (!shape.empty())
    return shape;
  const cuda_backend::DeviceAttributes& d = cuda_backend::device_attributes(device);
  if (d.cc_major * 10 + d.cc_minor < policy.min_compute_capability)
    return "the device (compute capability " + std::to_string(d.cc_major) + "." +
           std::to_string(d.cc_minor) + ") has no 8-bit mma.sync";
  return "";
}

int tensor_dense_planes_per_block(const TensorDenseGeometry& g, int device,
                                  const cuda_backend::TensorCoreDensePolicy& policy) {
  const int64_t n2 = std::max<int64_t>(1, g.outputs[2]);
  if (policy.planes_per_block > 0)
    return static_cast<int>(std::min<int64_t>(policy.planes_per_block, n2));
  const TileFacts f =
      g.taps == 7 ? tile_facts<TensorDenseTile7>() : tile_facts<TensorDenseTile11>();
  const int64_t columns = ((g.outputs[0] + f.bx - 1) / f.bx) * ((g.outputs[1] + f.by - 1) / f.by);
  const int64_t slots = int64_t{std::max(1, f.blocks_per_sm)} *
                        cuda_backend::device_attributes(device).multiprocessors;
  int64_t best = n2, best_cost = -1;
  for (int64_t planes = n2;; planes = (planes + 1) / 2) {
    const int64_t blocks = columns * ((n2 + planes - 1) / planes);
    const int64_t cost = (blocks + slots - 1) / slots * (planes + g.taps - 1);
    if (best_cost < 0 || cost < best_cost) {
      best = planes;
      best_cost = cost;
    }
    if (planes <= policy.min_planes_per_block || planes == 1)
      break;
  }
  return static_cast<int>(best);
}

void launch_tensor_dense(const TensorDenseGeometry& g, const uint8_t* padded,
                         const int32_t* fragments, float scale, float* out, int planes_per_block,
                         void* stream) {
  if (planes_per_block < 1)
    throw InvalidArgument("internal: the tensor-core dense kernel needs a block depth");
  const auto s = static_cast<cudaStream_t>(stream);
  if (g.taps == 7)
    launch_tile<TensorDenseTile7>(g, padded, fragments, scale, out, planes_per_block, s);
  else if (g.taps == 11)
    launch_tile<TensorDenseTile11>(g, padded, fragments, scale, out, planes_per_block, s);
  else
    throw InvalidArgument("the tensor-core dense kernel takes 7^3 and 11^3 filters");
}

std::string tensor_dense_note(const TensorDenseGeometry& g, int planes_per_block) {
  const int k = g.taps == 7 ? TensorDenseShape<7>::kPlaneK : TensorDenseShape<11>::kPlaneK;
  const std::string t = std::to_string(g.taps);
  return "tensor cores: mma.sync u8 x s8, 4 weight digits, " + t +
         "^3 as a banded Toeplitz along "
         "y (N 8 = 2 outputs x 4 digits, K " +
         std::to_string(k) + " a plane, " + t + " tap planes from registers), " +
         std::to_string(planes_per_block) + " output planes a block";
}

bool run_tensor_dense(const detail::CorrelationProblem& p, const StoredVolumeView& input,
                      const Options& options, const cuda_backend::TensorCoreDensePolicy& policy,
                      RunReport& report, std::string& why_not) {
  if (input.type != ScalarType::UInt8) {
    why_not = std::string("the input is ") + to_string(input.type) + ", not uint8";
    return false;
  }
  if (input.scale != 1.0 || input.offset != 0.0) {
    why_not = "the stored values carry a scale or an offset";
    return false;
  }
  if (!options.expert.tensor_cores) {
    why_not = "options.expert.tensor_cores is false";
    return false;
  }
  why_not = tensor_dense_unfit(p.input.dims, p.filter_extent, options.cuda_device, policy);
  if (!why_not.empty())
    return false;
  const int64_t outputs[3] = {p.output.extent[0], p.output.extent[1], p.output.extent[2]};
  const TensorDenseGeometry g =
      tensor_dense_geometry(static_cast<int>(p.filter_extent[0]), outputs);
  size_t free_bytes = 0, total_bytes = 0;
  NDCONV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double needed = static_cast<double>(g.padded_bytes()) + 4.0 * g.voxels();
  if (needed > 0.8 * static_cast<double>(free_bytes)) {
    why_not = "the padded volume and the output do not fit the device's free memory at once";
    return false;
  }
  const int threads = core::resolve_thread_count(options.threads);
  const std::vector<uint8_t> bytes = tensor_dense_padded(g, input, p.offset, p.boundary, threads);
  const TensorDenseWeights w = tensor_dense_weights(g.taps, p.taps);
  const int planes = tensor_dense_planes_per_block(g, options.cuda_device, policy);

  const auto t_upload = std::chrono::steady_clock::now();
  DeviceBuffer d_in = bytes_buffer(bytes.size());
  DeviceBuffer d_fragments = bytes_buffer(w.fragments.size() * sizeof(int32_t));
  DeviceBuffer d_out(static_cast<size_t>(g.voxels()));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_in.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  NDCONV_CUDA_CHECK(cudaMemcpy(d_fragments.get(), w.fragments.data(),
                               w.fragments.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  report.seconds_upload = detail::seconds_since(t_upload);

  const auto t_compute = std::chrono::steady_clock::now();
  launch_tensor_dense(g, reinterpret_cast<const uint8_t*>(d_in.get()),
                      reinterpret_cast<const int32_t*>(d_fragments.get()), w.scale, d_out.get(),
                      planes, nullptr);
  if (options.progress && !options.progress(0.5))
    throw Aborted();
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute = detail::seconds_since(t_compute);

  const auto t_download = std::chrono::steady_clock::now();
  cuda_bank::download_volume(d_out.get(), p.output, nullptr);
  report.seconds_download = detail::seconds_since(t_download);
  report.backend = Backend::Cuda;
  report.notes.push_back("dense plan: " + tensor_dense_note(g, planes) + ": the input is 8-bit");
  return true;
}

}  // namespace ndconv::cuda_tensor_dense
