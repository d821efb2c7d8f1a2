// The wgmma filter bank's launch (wgmma_bank.h): the compiled block shapes and their launch. The
// one translation unit built for sm_90a (its own object library, src/cuda/bank/sources.cmake), so
// that the rest of the tree keeps its architectures and CI's build time barely grows.
#include <string>

#include "cuda/bank/wgmma_bank.h"
#include "cuda/bank/wgmma_kernel.cuh"
#include "cuda/check.h"
#include "cuda/device_facts.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_bank {

namespace {

using C = TensorCoreCopies;

// A compiled block shape: wgmma_bank_kernel<Tile, MinBlocks, Group, Stream> (wgmma_kernel.cuh).
struct Shape {
  const char* name;
  int rows;                  ///< output rows per warp: what wgmma_weights lays out
  bool pair_tails;           ///< B in wgmma_pair_tails' order
  int (*shared_bytes)(int);  ///< of a launch of that many tap frames
  bool (*launch)(const TensorCoreArgs&, int, int, cudaStream_t);
  TensorCoreArgs (*args)(const TensorCoreGeometry&, const uint8_t*, const int32_t*, const float*,
                         float*);
};

template <class Tile, int MinBlocks, int Group, bool Stream>
constexpr Shape shape(const char* name) {
  return {name,
          Tile::kRows,
          false,
          wgmma_shared_bytes<Tile, Stream>,
          launch_wgmma_kernel<Tile, MinBlocks, Group, Stream>,
          tensor_core_args<Tile>};
}
// Warp-specialised (wgmma_ws_bank_kernel): Teams teams of Tile's MMA warps and one producer
// warpgroup, Buffers staged (tile, frame)s a team, Registers per MMA thread (setmaxnreg), Overlap:
// two A register sets; the buffers passed through mbarriers; Narrow (32-bit counts) and PairTails
// (frames paired, one tail chunk a pair) as the kernel's.
template <class Tile, int Group, int Buffers, bool Stream, int Registers, bool Overlap,
          int Teams = 1, bool Narrow = false, bool PairTails = false>
constexpr Shape ws_shape(const char* name) {
  return {name,
          Tile::kRows,
          PairTails,
          wgmma_ws_shared_bytes<Tile, Stream, Buffers, Teams>,
          launch_wgmma_ws_kernel<Tile, Group, Buffers, Stream, Registers, Overlap, Teams, Narrow,
                                 PairTails>,
          tensor_core_args<Tile>};
}
constexpr bool kNarrow = true, kPairTails = true;

// The shapes the policy chooses among (TensorCoreBankPolicy::wgmma_shape_3d, _4d), timed in
// dev/wgmma_bank_sweep.cu: M tiles per warp, MMA warps per block (team), rows per warp (2: N 96),
// chunks per wgmma group, A register sets, staged buffers, weights resident or streamed per tap
// frame; the warp-specialised ones one block per SM, the others as many as fit.
const Shape kShapes3d[] = {
    ws_shape<TensorCoreTile<2, 12, C::Shared, 2>, 1, 3, false, 152, true>(
        "warp-specialised: 2 M tiles x 12 MMA warps x 2 rows, N 96, 1 chunk a group, 2 A sets, "
        "3 buffers, 152 registers"),
    shape<TensorCoreTile<4, 4, C::Shared>, 3, 2, false>(
        "4 M tiles x 4 warps, N 48, 3 blocks/SM, 2 chunks a group"),
    ws_shape<TensorCoreTile<4, 12, C::Shared>, 1, 3, false, 160, true>(
        "warp-specialised: 4 M tiles x 12 MMA warps, N 48, 1 chunk a group, 2 A sets, 3 buffers, "
        "160 registers"),
    ws_shape<TensorCoreTile<2, 8, C::Shared, 2>, 2, 3, false, 216, true>(
        "warp-specialised: 2 M tiles x 8 MMA warps x 2 rows, N 96, 2 chunks a group, 2 A sets, "
        "3 buffers, 216 registers"),
};
// 4D's first: frames paired, their one-tap-row tail chunks in one (88 K chunks a 7-frame tile
// instead of 91): 39.52-39.58 ms against 40.08-40.16 ms unpaired (the tc-bank record, round 2);
// idle warpgroups skipping their MMAs (40.2-43.3 ms), A register sets of fewer M tiles so that
// ptxas need not serialize the wgmmas (39.77, 46.4 ms) and a staggered start (39.70 ms) lost.
const Shape kShapes4d[] = {
    ws_shape<TensorCoreTile<4, 12, C::Shared>, 1, 2, false, 152, true, 1, kNarrow, kPairTails>(
        "warp-specialised: 4 M tiles x 12 MMA warps, N 48, 1 chunk a group, 2 A sets, 2 buffers, "
        "152 registers, 32-bit counts, paired tail chunks"),
    shape<TensorCoreTile<4, 12, C::Shared>, 1, 2, false>(
        "4 M tiles x 12 warps, N 48, 2 chunks a group"),
    ws_shape<TensorCoreTile<4, 12, C::Shared>, 1, 2, false, 152, true>(
        "warp-specialised: 4 M tiles x 12 MMA warps, N 48, 1 chunk a group, 2 A sets, 2 buffers, "
        "152 registers"),
    ws_shape<TensorCoreTile<2, 8, C::Shared, 2>, 2, 3, true, 0, true>(
        "warp-specialised: 2 M tiles x 8 MMA warps x 2 rows, N 96, weights streamed, 2 chunks a "
        "group, 2 A sets, 3 buffers"),
};

const Shape& shape_of(const TensorCoreGeometry& g, int shape) {
  const bool frames = g.frames() > 1;
  if (shape < 0 || shape >= wgmma_shape_count(frames))
    throw InvalidArgument("internal: no wgmma bank shape " + std::to_string(shape));
  return frames ? kShapes4d[shape] : kShapes3d[shape];
}

}  // namespace

bool wgmma_runs_on(int device) {
  const cuda_backend::DeviceAttributes& d = cuda_backend::device_attributes(device);
  if (d.cc_major != 9 || d.cc_minor != 0)
    return false;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, wgmma_bank_kernel<TensorCoreTile<4, 4, C::Shared>, 3>) !=
      cudaSuccess) {
    cudaGetLastError();  // no image for the device: clear the error
    return false;
  }
  return true;
}

int wgmma_shape_count(bool frames) {
  return frames ? static_cast<int>(std::size(kShapes4d)) : static_cast<int>(std::size(kShapes3d));
}

std::string wgmma_shape_name(const TensorCoreGeometry& g, int shape) {
  return shape_of(g, shape).name;
}

int wgmma_bank_rows(const TensorCoreGeometry& g, int shape) {
  return shape_of(g, shape).rows;
}

bool wgmma_bank_pair_tails(const TensorCoreGeometry& g, int shape) {
  return shape_of(g, shape).pair_tails;
}

int wgmma_bank_shared_bytes(const TensorCoreGeometry& g, int shape) {
  return shape_of(g, shape).shared_bytes(g.frames());
}

void launch_wgmma_bank(const TensorCoreGeometry& g, int shape, int device, const uint8_t* padded,
                       const uint8_t* b, const float* scales, float* outputs, cudaStream_t stream) {
  const Shape& s = shape_of(g, shape);
  const TensorCoreArgs a = s.args(g, padded, reinterpret_cast<const int32_t*>(b), scales, outputs);
  const int sms = cuda_backend::device_attributes(device).multiprocessors;
  if (!s.launch(a, g.passes(), sms, stream))
    throw InvalidArgument("the wgmma filter bank's block does not fit on the GPU's SMs (" +
                          std::to_string(s.shared_bytes(g.frames())) + " bytes of shared memory)");
  NDCONV_CUDA_CHECK_LAUNCH("the wgmma filter bank kernel");
}

}  // namespace ndconv::cuda_bank
