// Launcher of the fused separable kernel (kernels/separable_fused.cuh): per device and
// instantiation, the facts the can_implement check needs (SMs, the opt-in shared-memory limit, the
// registers and spills) are queried once, the kernel is allowed the opt-in shared memory once, and
// the z chunk is sized from the resident blocks so that one wave covers the volume where it can.
// Two instantiations (fused_plan.h): 32 x 32 columns per block, and 32 x 16 when
// NDCONV_CUDA_FUSED_ROWS=16 (for same-run comparisons).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cuda/check.h"
#include "cuda/device_memory.h"
#include "cuda/fused_plan.h"
#include "cuda/launch_fused.h"
#include "cuda/shared_memory.h"
#include "kernels/separable_fused.cuh"

namespace ndconv::cuda_backend {
namespace {

// What the can_implement check needs of one instantiation on one device, queried once.
struct FusedKernelFacts {
  bool known = false;
  int sms = 0;
  int shared_limit = 0;  ///< dynamic shared memory per block (opt_in_dynamic_shared_memory)
  int max_threads_per_sm = 0;
  cudaFuncAttributes attributes{};
};

std::mutex g_fused_mutex;
std::map<std::pair<int, const void*>, FusedKernelFacts> g_fused_facts;
std::map<int, DeviceBuffer> g_fused_taps;  // per device, grow-only

// Called with g_fused_mutex held.
FusedKernelFacts& kernel_facts(int device, const void* kernel) {
  FusedKernelFacts& f = g_fused_facts[std::make_pair(device, kernel)];
  if (f.known)
    return f;
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, device));
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&f.max_threads_per_sm,
                                           cudaDevAttrMaxThreadsPerMultiProcessor, device));
  NDCONV_CUDA_CHECK(cudaFuncGetAttributes(&f.attributes, kernel));
  // Blocks need more than the default 48 KiB (17-tap Gaussian: ~54 or ~100 KiB); each launch
  // checks its own size against the opt-in limit. The carveout asks for the largest shared-memory
  // split, so that as many blocks fit on an SM as the shared memory allows.
  f.shared_limit = opt_in_dynamic_shared_memory(device, kernel);
  NDCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared));
  f.known = true;
  return f;
}

template <typename S>
bool launch_shape(const FusedPlan& fp, const detail::SeparableProblem& p, int device,
                  cudaStream_t stream, LaunchPlan& plan, std::string& why_not) {
  const void* kernel = reinterpret_cast<const void*>(&kernels::fused_separable_kernel<S>);
  std::lock_guard<std::mutex> lock(g_fused_mutex);
  const FusedKernelFacts& f = kernel_facts(device, kernel);
  if (f.attributes.localSizeBytes > 0) {
    why_not = "the fused kernel spills (" + std::to_string(f.attributes.localSizeBytes) +
              " bytes of local memory per thread)";
    return false;
  }
  const kernels::Geometry& g = fp.geometry;
  // The shared memory does not depend on the chunk.
  const int64_t shared_bytes =
      static_cast<int64_t>(sizeof(float)) * kernels::fused_layout<S>(g, 1).total_floats;
  if (shared_bytes > f.shared_limit) {
    why_not = "the fused kernel needs " + std::to_string(shared_bytes) +
              " bytes of shared memory per block, more than the device allows it (" +
              std::to_string(f.shared_limit) + ")";
    return false;
  }
  int blocks_per_sm = 0;
  NDCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, kernel, S::kThreads, static_cast<size_t>(shared_bytes)));
  if (blocks_per_sm == 0) {
    why_not = "no block of the fused kernel fits on an SM";
    return false;
  }
  const kernels::FusedLayout l = kernels::fused_layout<S>(
      g, kernels::fused_chunk<S>(g, static_cast<int64_t>(blocks_per_sm) * f.sms));
  int64_t counts[3];
  kernels::fused_block_counts<S>(g, l, counts);
  const dim3 grid(static_cast<unsigned>(counts[0]),
                  static_cast<unsigned>(std::min<int64_t>(counts[1], 65535)),
                  static_cast<unsigned>(std::min<int64_t>(counts[2], 65535)));

  // Taps: grow-only device buffer; earlier launches on the stream may still read the old one.
  DeviceBuffer& taps = g_fused_taps[device];
  if (taps.size() < fp.taps.size()) {
    NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    taps.allocate(fp.taps.size());
  }
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(taps.get(), fp.taps.data(), fp.taps.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, stream));
  kernels::fused_separable_kernel<S>
      <<<grid, S::kThreads, static_cast<size_t>(shared_bytes), stream>>>(g, l, p.input.data,
                                                                         p.output.data, taps.get());
  NDCONV_CUDA_CHECK_LAUNCH("fused_separable_kernel");

  plan.kernel = "fused xyz " + std::to_string(S::BXo) + "x" + std::to_string(S::BYo);
  plan.family = "fused";
  plan.outputs_per_thread = 1;
  plan.outputs_along_x = S::kColumns;
  plan.reason = "x, y and z fused in one kernel: " + std::to_string(S::BXo) + "x" +
                std::to_string(S::BYo) + " columns x " + std::to_string(l.chunk) +
                " outputs along z per block, " + std::to_string(shared_bytes / 1024) +
                " KiB shared, " + std::to_string(blocks_per_sm) + " blocks/SM";
  plan.block[0] = S::kThreads;
  plan.block[1] = plan.block[2] = 1;
  plan.grid[0] = static_cast<int>(grid.x);
  plan.grid[1] = static_cast<int>(grid.y);
  plan.grid[2] = static_cast<int>(grid.z);
  plan.taps_in_constant = false;
  plan.launches = 1;
  plan.resources.outputs_per_thread = 1;
  plan.resources.registers_per_thread = f.attributes.numRegs;
  plan.resources.local_bytes = f.attributes.localSizeBytes;
  plan.resources.block_threads = S::kThreads;
  plan.resources.blocks_per_sm = blocks_per_sm;
  plan.resources.occupancy =
      f.max_threads_per_sm > 0 ? double(blocks_per_sm) * S::kThreads / f.max_threads_per_sm : 0.0;
  return true;
}

}  // namespace

bool launch_fused_separable(const detail::SeparableProblem& p, int device, void* stream,
                            LaunchPlan& plan, std::string& why_not) {
  const FusedPlan fp = plan_fused(p);
  if (!fp.usable) {
    why_not = fp.reason;
    return false;
  }
  const char* rows = std::getenv("NDCONV_CUDA_FUSED_ROWS");
  const auto s = static_cast<cudaStream_t>(stream);
  if (rows != nullptr && std::string(rows) == "16")
    return launch_shape<FusedShortShape>(fp, p, device, s, plan, why_not);
  return launch_shape<FusedDefaultShape>(fp, p, device, s, plan, why_not);
}

}  // namespace ndconv::cuda_backend
