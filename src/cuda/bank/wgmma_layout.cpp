// The wgmma filter bank's host side (wgmma_layout.h): the weights in the kernel's shared-memory
// layout. Plain C++: built with or without CUDA, so that CI's host emulation checks the layout.
#include "cuda/bank/wgmma_layout.h"

#include <cstring>

#include "ndconv/errors.h"

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

void wgmma_pair_tails(const TensorCoreGeometry& g, WgmmaWeights& w) {
  using W = WgmmaShape;
  constexpr int kC = TensorCoreShape::kChunks, kB = W::chunk_bytes(1);
  const int frames = g.frames();
  if (static_cast<int64_t>(w.b.size()) != int64_t{g.passes()} * frames * kC * kB)
    throw InvalidArgument("internal: paired tails take one output row per warp");
  std::vector<uint8_t> out(w.b.size(), 0);
  for (int pass = 0; pass < g.passes(); ++pass) {
    const uint8_t* const src = w.b.data() + static_cast<size_t>(pass) * frames * kC * kB;
    uint8_t* const dst = out.data() + static_cast<size_t>(pass) * frames * kC * kB;
    auto chunk = [&](int f, int c) { return src + static_cast<size_t>(f * kC + c) * kB; };
    for (int f = 0; f < frames; ++f) {
      uint8_t* d = dst + static_cast<size_t>(wgmma_pair_chunk(f)) * kB;
      if (f % 2 == 1) {  // the pair's tail chunk first
        for (int n = 0; n < W::n(1); ++n)
          for (int k = 0; k < W::kK; ++k) {
            if (k >= 8 && (chunk(f - 1, kC - 1)[wgmma_b_offset(k, n)] != 0 ||
                           chunk(f, kC - 1)[wgmma_b_offset(k, n)] != 0))
              throw InvalidArgument("internal: a tail chunk with weights past its first tap row");
            if (k < 16)
              d[wgmma_b_offset(k, n)] = chunk(k < 8 ? f - 1 : f, kC - 1)[wgmma_b_offset(k % 8, n)];
          }
        d += kB;
      }
      const int n = f % 2 == 1 || f + 1 < frames ? kC - 1 : kC;
      std::memcpy(d, chunk(f, 0), static_cast<size_t>(n) * kB);
    }
  }
  w.b = std::move(out);
}

}  // namespace ndconv::cuda_bank
