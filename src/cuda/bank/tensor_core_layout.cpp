// The tensor-core bank's host side (tensor_core_layout.h): the weights' split and fragments, the
// 8-bit padded input, and the host emulation of the kernel's arithmetic. Plain C++: built with or
// without CUDA, so that CI checks the scheme and the layouts without a GPU.
#include "cuda/bank/tensor_core_layout.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "core/int8_digits.h"
#include "core/parallel_for.h"
#include "ndconv/errors.h"

namespace ndconv::cuda_bank {

namespace {

using S = TensorCoreShape;

// The padded row (canonical positions q1, q2, q3) as a row index of the padded volume.
int64_t padded_row(const TensorCoreGeometry& g, int64_t q1, int64_t q2, int64_t q3) {
  return (q3 * g.padded_extent[2] + q2) * g.padded_extent[1] + q1;
}

// Tap (dx, j1, frame, j3) of a filter (correlation order, x fastest: ((j3 k2 + j2) k1 + j1) k0 +
// dx) at tap row r (j3 * k1 + j1) of tap frame j2, or 0 for the padding beyond the filter (dx up
// to 4 groups - 1).
float tap_at(const TensorCoreGeometry& g, const float* filter, int frame, int r, int dx) {
  const int k0 = static_cast<int>(g.filter[0]), k1 = static_cast<int>(g.filter[1]);
  if (dx >= k0 || r >= k1 * g.filter[3])
    return 0.0f;
  const int64_t j3 = r / k1, j1 = r % k1;
  return filter[((j3 * g.filter[2] + frame) * k1 + j1) * k0 + dx];
}

// Calls visit(x, m1, m2, m3, voxel index) for every output voxel of `g`.
template <class Visit>
void for_each_output(const TensorCoreGeometry& g, Visit visit) {
  int64_t v = 0;
  for (int64_t m3 = 0; m3 < g.outputs[3]; ++m3)
    for (int64_t m2 = 0; m2 < g.outputs[2]; ++m2)
      for (int64_t m1 = 0; m1 < g.outputs[1]; ++m1)
        for (int64_t x = 0; x < g.outputs[0]; ++x, ++v)
          visit(x, m1, m2, m3, v);
}

// The input bytes that tap row r (j3 * k1 + j1) of tap frame j2 of output (m1, m2, m3) meets,
// from x = 0.
const uint8_t* tap_row_input(const TensorCoreGeometry& g, const uint8_t* padded, int frame, int r,
                             int64_t m1, int64_t m2, int64_t m3) {
  const int k1 = static_cast<int>(g.filter[1]);
  return padded + padded_row(g, m1 + r % k1, m2 + frame, m3 + r / k1) * g.row_bytes;
}

}  // namespace

std::string tensor_core_cannot_implement(const Index& k, bool weighted) {
  if (weighted) {
    using W = TensorCoreReconstructionTaps11;
    static_assert(W::kGroups == TensorCoreReconstructionTaps9::kGroups, "one width");
    const bool rows11 = k[1] == W::kK1 && k[3] == W::kK3 && k[2] <= W::kMaxFrames;
    const bool rows9 = k[1] == TensorCoreReconstructionTaps9::kK1 &&
                       k[3] == TensorCoreReconstructionTaps9::kK3 &&
                       k[2] <= TensorCoreReconstructionTaps9::kMaxFrames;
    if (k[0] <= 4 * (W::kGroups - 1) || k[0] > 4 * W::kGroups || !(rows11 || rows9))
      return "the tensor-core weighted sum is compiled for filters of 9 to 12 taps along x by 11 x "
             "11 (x up to 11) or 9 x 9 (x up to 9) (the filter is " +
             std::to_string(k[0]) + " x " + std::to_string(k[1]) + " x " + std::to_string(k[3]) +
             (k[2] != 1 ? " x " + std::to_string(k[2]) : std::string()) + ", canonical axes)";
    return {};
  }
  if (k[0] > S::kRowTaps || k[1] != S::kK1 || k[2] < 1 || k[2] > S::kMaxFrames || k[3] != S::kK3)
    return "the tensor-core filter bank is compiled for filters of up to 8 x 7 x 7 taps in 3D and "
           "8 x 7 x 7 x 7 in 4D (the filter is " +
           std::to_string(k[0]) + " x " + std::to_string(k[1]) + " x " + std::to_string(k[3]) +
           (k[2] != 1 ? " x " + std::to_string(k[2]) : std::string()) + ", canonical axes)";
  return {};
}

int weight_chunks(int rows, const TensorCoreTaps& taps) {
  return rows == 1 ? taps.chunks() : 2 * taps.k3 * rows;
}

int weight_group(int chunk, int j, int rows, const TensorCoreTaps& taps) {
  if (rows == 1)
    return chunk * S::kChunkGroups + j;  // past the filter's rows: the zeros of the split rows
  const int c = chunk / rows, v = chunk % rows;
  const int j1 = S::kChunkRows * (c % 2) + j / 2 - v;
  return j1 < 0 || j1 >= taps.k1 ? -1 : (c / 2 * taps.k1 + j1) * taps.groups + j % 2;
}

TensorCoreWeights tensor_core_weights(const TensorCoreGeometry& g, const float* taps, int rows) {
  const TensorCoreTaps shape = g.taps();
  if (rows != 1 && (rows != 2 || shape.groups != 2))
    throw InvalidArgument(
        "the tensor-core weights take one or two output rows per warp (one for wide filters)");
  const int64_t filter_taps = g.filter[0] * g.filter[1] * g.filter[2] * g.filter[3];
  const int passes = g.passes(), frames = g.frames();
  const int chunks = weight_chunks(rows, shape);
  const int64_t frame_words = int64_t{chunks} * S::kNTiles * 32 * 2;
  // Each frame's groups, zeros past the taps.
  const int groups = shape.chunks() * S::kChunkGroups;
  const int64_t frame_taps = int64_t{groups} * 4;
  TensorCoreWeights w;
  w.fragments.assign(static_cast<size_t>(passes * frames * frame_words), 0);
  w.scales.assign(static_cast<size_t>(passes) * S::kFilters, 0.0f);
  for (int f = 0; f < g.count; ++f) {
    const float* filter = taps + f * filter_taps;
    // The filter's taps as [frame][group][4] (zeros past the filter), split with one scale.
    std::vector<float> tap_rows(static_cast<size_t>(frames * frame_taps), 0.0f);
    for (int frame = 0; frame < frames; ++frame)
      for (int group = 0; group < groups; ++group)
        for (int i = 0; i < 4; ++i)
          tap_rows[static_cast<size_t>(frame * frame_taps + group * 4 + i)] =
              tap_at(g, filter, frame, group / shape.groups, 4 * (group % shape.groups) + i);
    const detail::SplitFilter split =
        detail::split_filter(tap_rows.data(), static_cast<int64_t>(tap_rows.size()), S::kSlices);
    w.scales[static_cast<size_t>(f)] = split.scale;
    const int pass = f / S::kFilters, local = f % S::kFilters;
    for (int frame = 0; frame < frames; ++frame) {
      int32_t* fragments =
          w.fragments.data() + static_cast<size_t>((pass * frames + frame) * frame_words);
      const int8_t* frame_digits = split.digits.data() + frame * frame_taps;
      for (int c = 0; c < chunks; ++c)
        for (int n = 0; n < S::kNTiles; ++n)
          for (int lane = 0; lane < 32; ++lane) {
            const int column = b_fragment_column(lane);
            if (column_filter(n, column) != local)
              continue;
            const int slice = column_digit(n, column);
            for (int q = 0; q < 2; ++q) {
              uint32_t word = 0;
              for (int i = 0; i < 4; ++i) {
                const int k = b_fragment_k(lane, q, i);
                const int group = weight_group(c, k / 4, rows, shape);
                const int8_t d =
                    group < 0
                        ? int8_t{0}
                        : frame_digits[static_cast<size_t>(
                              slice * static_cast<int64_t>(tap_rows.size()) + group * 4 + k % 4)];
                word |= uint32_t{static_cast<uint8_t>(d)} << (8 * i);
              }
              fragments[fragment_word(c, n, lane, q)] = static_cast<int32_t>(word);
            }
          }
    }
  }
  return w;
}

int64_t tensor_core_weights_bytes(const TensorCoreGeometry& g, int rows) {
  const int64_t frame_words = int64_t{weight_chunks(rows, g.taps())} * S::kNTiles * 32 * 2;
  return (g.passes() * g.frames() * frame_words + int64_t{g.passes()} * S::kFilters) * 4;
}

double worst_split_error(const TensorCoreGeometry& g, const float* taps, int slices) {
  const int64_t filter_taps = g.filter[0] * g.filter[1] * g.filter[2] * g.filter[3];
  double worst = 0;
  for (int f = 0; f < g.count; ++f) {
    const float* filter = taps + f * filter_taps;
    worst = std::max(
        worst, detail::split_error(filter, filter_taps,
                                   detail::split_filter(filter, filter_taps, slices), slices));
  }
  return worst;
}

bool pack_padded_bytes(const TensorCoreGeometry& g, const float* padded, int64_t float_row_length,
                       uint8_t* bytes, int threads) {
  const int64_t rows = g.padded_extent[1] * g.padded_extent[2] * g.padded_extent[3];
  const int64_t copied = std::min(float_row_length, g.row_bytes);
  std::atomic<bool> eight_bit{true};
  core::parallel_for(
      threads, rows,
      [&](int64_t begin, int64_t end, int) {
        for (int64_t r = begin; r < end && eight_bit.load(std::memory_order_relaxed); ++r) {
          const float* in = padded + r * float_row_length;
          uint8_t* out = bytes + r * g.row_bytes;
          for (int64_t q = 0; q < copied; ++q) {
            const float v = in[q];
            // NaN fails every comparison.
            if (!(v >= 0.0f && v <= 255.0f) || v != std::floor(v)) {
              eight_bit = false;
              return;
            }
            out[q] = static_cast<uint8_t>(v);
          }
          for (int64_t q = copied; q < float_row_length; ++q)
            if (in[q] != 0.0f) {  // beyond the 8-bit row: only the float row's zero tail
              eight_bit = false;
              return;
            }
          std::fill(out + copied, out + g.row_bytes, uint8_t{0});
        }
      },
      {});
  return eight_bit;
}

void shift_padded_copies(const TensorCoreGeometry& g, uint8_t* bytes) {
  const int64_t n = g.padded_bytes();
  for (int s = 1; s < 4; ++s) {
    uint8_t* copy = bytes + s * n;
    std::copy(bytes + s, bytes + n, copy);
    std::fill(copy + n - s, copy + n, uint8_t{0});
  }
}

bool padded_input_image(const TensorCoreGeometry& g, const float* padded, int64_t float_row_length,
                        int copies, int threads, std::vector<uint8_t>& image) {
  image.resize(static_cast<size_t>(g.padded_bytes() * copies));
  if (!pack_padded_bytes(g, padded, float_row_length, image.data(), threads))
    return false;
  if (copies > 1)
    shift_padded_copies(g, image.data());
  return true;
}

namespace {

// The responses of pass `pass` at every output, through the fragment layout: visit(v, filter
// within the pass, response) for the pass's real filters.
template <class Visit>
void emulate_pass(const TensorCoreGeometry& g, const uint8_t* padded,
                  const TensorCoreWeights& weights, int pass, Visit visit) {
  constexpr int kK = S::kChunkRows * S::kRowTaps;  // 32
  const TensorCoreTaps shape = g.taps();
  const int frame_chunks = shape.chunks();
  const int frames = g.frames(), chunks = frames * frame_chunks;  // the frames' chunks in turn
  {
    // The pass's B operand, [frame chunk][k][column], read back through the fragment layout.
    std::vector<int32_t> b(static_cast<size_t>(chunks) * kK * S::kColumns, 0);
    const int32_t* fragments =
        weights.fragments.data() + static_cast<size_t>(pass) * frames * shape.fragment_words();
    for (int c = 0; c < chunks; ++c)
      for (int n = 0; n < S::kNTiles; ++n)
        for (int lane = 0; lane < 32; ++lane)
          for (int q = 0; q < 2; ++q) {
            const uint32_t word = static_cast<uint32_t>(fragments[fragment_word(c, n, lane, q)]);
            for (int i = 0; i < 4; ++i)
              b[static_cast<size_t>((c * kK + b_fragment_k(lane, q, i)) * S::kColumns + 8 * n +
                                    b_fragment_column(lane))] =
                  static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * i)));
          }
    for_each_output(g, [&](int64_t x, int64_t m1, int64_t m2, int64_t m3, int64_t v) {
      std::array<int32_t, S::kColumns> acc{};
      for (int c = 0; c < chunks; ++c)
        for (int k = 0; k < kK; ++k) {
          const int frame = c / frame_chunks;
          const int group = c % frame_chunks * S::kChunkGroups + k / 4;
          const int r = group / shape.groups, dx = 4 * (group % shape.groups) + k % 4;
          // Rows past the filter meet zero weights; the kernel reads some row there, any value
          // gives the same sums.
          if (r >= g.filter[1] * g.filter[3])
            continue;
          const int32_t a = tap_row_input(g, padded, frame, r, m1, m2, m3)[x + dx];
          const int32_t* row = &b[static_cast<size_t>((c * kK + k) * S::kColumns)];
          for (int col = 0; col < S::kColumns; ++col)
            acc[static_cast<size_t>(col)] += a * row[col];
        }
      // Each filter's digits, gathered from their columns.
      int32_t digits[S::kFilters][S::kSlices] = {};
      for (int n = 0; n < S::kNTiles; ++n)
        for (int j = 0; j < 8; ++j)
          digits[column_filter(n, j)][column_digit(n, j)] = acc[static_cast<size_t>(8 * n + j)];
      for (int local = 0; local < S::kFilters; ++local) {
        const int f = pass * S::kFilters + local;
        if (f < g.count)
          visit(v, local,
                detail::combine_slices(digits[local], S::kSlices,
                                       weights.scales[static_cast<size_t>(f)]));
      }
    });
  }
}

}  // namespace

void emulate_tensor_core_bank(const TensorCoreGeometry& g, const uint8_t* padded,
                              const TensorCoreWeights& weights, float* out) {
  const int64_t voxels = g.voxels();
  for (int pass = 0; pass < g.passes(); ++pass)
    emulate_pass(g, padded, weights, pass, [&](int64_t v, int local, float response) {
      out[(pass * S::kFilters + local) * voxels + v] = response;
    });
}

void emulate_tensor_core_weighted_sum(const TensorCoreGeometry& g, const uint8_t* padded,
                                      const TensorCoreWeights& weights, const float* filter_weights,
                                      float* sum) {
  if (g.passes() != 1)
    throw InvalidArgument("the tensor-core weighted sum takes one pass of up to 12 filters");
  const int64_t voxels = g.voxels();
  std::vector<float> responses(static_cast<size_t>(voxels * S::kFilters), 0.0f);
  emulate_pass(g, padded, weights, 0, [&](int64_t v, int local, float response) {
    responses[static_cast<size_t>(local * voxels + v)] = response;
  });
  for (int64_t v = 0; v < voxels; ++v) {
    float lanes[4];
    for (int t = 0; t < 4; ++t) {
      float s = 0.0f;
      for (int p = 0; p < S::kNTiles / 2; ++p) {
        const int f = 4 * p + t;  // tensor_core_epilogue::kept_filter
        if (f < g.count)
          s = lane_weighted_sum(s, filter_weights[f * voxels + v],
                                responses[static_cast<size_t>(f * voxels + v)]);
      }
      lanes[t] = s;
    }
    sum[v] = quad_sum(lanes);
  }
}

void emulate_sliced_bank(const TensorCoreGeometry& g, const uint8_t* padded, const float* taps,
                         int slices, float* out) {
  const int64_t filter_taps = g.filter[0] * g.filter[1] * g.filter[2] * g.filter[3];
  const int64_t voxels = g.voxels();
  const int k0 = static_cast<int>(g.filter[0]), k1 = static_cast<int>(g.filter[1]);
  const int tap_rows = static_cast<int>(g.filter[1] * g.filter[3]);
  for (int f = 0; f < g.count; ++f) {
    const detail::SplitFilter split =
        detail::split_filter(taps + f * filter_taps, filter_taps, slices);
    for_each_output(g, [&](int64_t x, int64_t m1, int64_t m2, int64_t m3, int64_t v) {
      int32_t acc[4] = {0, 0, 0, 0};
      for (int frame = 0; frame < g.frames(); ++frame)
        for (int r = 0; r < tap_rows; ++r) {
          const uint8_t* in = tap_row_input(g, padded, frame, r, m1, m2, m3) + x;
          // Tap (dx, j1, frame, j3) in correlation order.
          const int64_t row = (r / k1 * g.filter[2] + frame) * k1 + r % k1;
          for (int dx = 0; dx < k0; ++dx)
            for (int s = 0; s < slices; ++s)
              acc[s] += in[dx] * split.digits[static_cast<size_t>(s * filter_taps + row * k0 + dx)];
        }
      out[f * voxels + v] = detail::combine_slices(acc, slices, split.scale);
    });
  }
}

}  // namespace ndconv::cuda_bank
