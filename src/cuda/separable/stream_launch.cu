// The streaming kernel's launch (stream_launch.h) and its instantiations (stream_kernel.cuh), one
// per compiled tap count (StreamTapCounts) in the product's shape (StreamShape).
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "cuda/launch_common.h"
#include "cuda/separable/stream_kernel.cuh"
#include "cuda/separable/stream_launch.h"
#include "cuda/tensor_map.h"

namespace ndconv::cuda_backend {

bool stream_device(int device) {
  return device_attributes(device).cc_major >= 9;
}

std::string launch_stream(int device, const SeparablePass& pass, const std::vector<float>& taps,
                          const float* in, float* out, void* stream_handle, const Tuning& tuning,
                          LaunchPlan& result) {
  using S = kernels::StreamShape;
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const kernels::Geometry& g = pass.geometry;
  kernels::StreamLayout l = stream_layout_for<S>(g);
  kernels::StreamTaps t{};
  const int k = pass.stream_taps;
  for (int j = 0; j < k; ++j) {
    t.z[j] = taps[g.tap_base + j];
    t.y[j] = taps[g.tap_base + k + j];
    t.x[j] = taps[g.tap_base + 2 * k + j];
  }
  kernels::TensorMap map{};
  const uint32_t box[kernels::kAxes] = {static_cast<uint32_t>(l.box_x),
                                        static_cast<uint32_t>(l.box_y), 1, 1};
  const std::string unfit = encode_box_map(device, g, in, box, map);
  if (!unfit.empty())
    throw InvalidArgument("the streaming kernel's planes cannot be copied: " + unfit);
  std::string what;
  stream_dispatch(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    const void* kernel = reinterpret_cast<const void*>(&kernels::stream_kernel<K, S>);
    const int shared_bytes = l.total_floats * static_cast<int>(sizeof(float));
    if (shared_bytes > opt_in_dynamic_shared_memory(device, kernel)) {
      throw InvalidArgument("the streaming kernel needs " + std::to_string(shared_bytes) +
                            " bytes of shared memory per block, more than this device allows");
    }
    const KernelVariant v = query_variant(device, kernel, 0, S::kThreads, shared_bytes);
    const kernels::LaunchShape s = kernels::stream_launch_shape<S>(
        g, l, resident_blocks(device, v.blocks_per_sm), tuning.stream_min_chunk);
    kernels::stream_kernel<K, S>
        <<<to_dim3(s.grid), to_dim3(s.block), s.shared_bytes, stream>>>(g, l, t, map, in, out);
    NDCONV_CUDA_CHECK_LAUNCH("stream_kernel");
    if (result.launches == 0) {
      set_plan_shape(result, s);
      set_plan_kernel(result, device, kernel, 0, s, "stream", 1);
    }
    ++result.launches;
    what = "streaming kernel, " + std::to_string(K) + " taps per axis, " +
           std::to_string(s.grid[0] * s.grid[1]) + " tiles x " + std::to_string(s.grid[2]) +
           " chunks of " + std::to_string(l.chunk) + " planes" +
           (l.halo.halo_slots > 0 ? (l.halo.halo_local ? ", halo copied within the plane"
                                                       : ", halo fetched per plane")
                                  : "");
  });
  return what;
}

}  // namespace ndconv::cuda_backend
