// The wgmma filter bank's host side (wgmma_layout.h): the weights in the kernel's shared-memory
// layout. Plain C++: built with or without CUDA, so that CI's host emulation checks the layout.
#include "cuda/bank/wgmma_layout.h"

namespace ndconv::cuda_bank {

WgmmaWeights wgmma_weights(const TensorCoreGeometry& g, const TensorCoreWeights& mma_sync,
                           int rows) {
  using S = TensorCoreShape;
  using W = WgmmaShape;
  // The passes' and frames' chunks in turn; wgmma chunk c holds the mma.sync weight chunks
  // c rows + v, which the fragments hold in the same order.
  const int chunks = g.passes() * g.frames() * W::chunks(rows);
  WgmmaWeights w;
  w.b.assign(static_cast<size_t>(chunks) * W::chunk_bytes(rows), 0);
  w.scales = mma_sync.scales;
  const int32_t* fragments = mma_sync.fragments.data();
  for (int c = 0; c < chunks; ++c) {
    uint8_t* b = w.b.data() + static_cast<size_t>(c) * W::chunk_bytes(rows);
    for (int v = 0; v < rows; ++v)
      for (int n = 0; n < S::kNTiles; ++n)
        for (int lane = 0; lane < 32; ++lane)
          for (int q = 0; q < 2; ++q) {
            const uint32_t word =
                static_cast<uint32_t>(fragments[fragment_word(c * rows + v, n, lane, q)]);
            for (int i = 0; i < 4; ++i)
              b[wgmma_b_offset(b_fragment_k(lane, q, i),
                               v * S::kColumns + 8 * n + b_fragment_column(lane))] =
                  static_cast<uint8_t>(word >> (8 * i));
          }
  }
  return w;
}

}  // namespace ndconv::cuda_bank
