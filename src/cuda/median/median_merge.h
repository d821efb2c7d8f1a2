// The 3 x 3 x 3 median by sorted planes, for the GPU and the host (NDCONV_HD), so that the CI
// machine runs the very same selection (tests/gpu/median_emulation_test.cpp); the kernel feeds it
// planes sorted from the block's sorted columns (median_columns.h).
//
// Why: forgetful selection (median_select.h) costs each output about 170 pair orderings on its 27
// keys, and neighbouring outputs along z repeat most of that work on the keys they share. Here a
// thread's outputs along z share it:
//   - each plane of 3 x 3 keys (across z) is sorted once and serves the three windows that hold it;
//   - two consecutive outputs k and k + 1 share planes k + 1 and k + 2: their two sorted planes are
//     merged once (Batcher's odd-even merge; only the ranks a median can take are kept: 48
//     min/max);
//   - each output's median is then the 14th key of its third plane (9 sorted keys) and that merged
//     pair (18 sorted keys), which for sorted lists P and M is min over i + j = 14 of
//     max(p_i, m_j) (1-based ranks, p_0 below every key): 9 max and 9 min.
// The networks' comparators are mostly independent (the forgetful selection is a chain). The keys
// are median_key's (NaN above every number), so the result is the same key any exact selection
// gives, bit for bit.
#pragma once

#include <cstdint>

#include "cuda/median/median_select.h"
#include "kernels/hd.h"

namespace ndconv::cuda_median {

/// Sorts 3 keys in place (3 comparators).
NDCONV_HD void sort_three(uint32_t& a, uint32_t& b, uint32_t& c) {
  order(a, b);
  order(b, c);
  order(a, b);
}

/// Sorts 9 keys whose triples v[0..2], v[3..5], v[6..8] are each sorted (a 3 x 3 plane held as
/// three sorted columns): the optimal 25-comparator network for 9 keys less its first 9, which
/// sort those triples, so 16 comparators.
NDCONV_HD void sort_nine_from_triples(uint32_t (&v)[9]) {
  constexpr int kPairs[16][2] = {{0, 3}, {3, 6}, {0, 3}, {1, 4}, {4, 7}, {1, 4}, {2, 5}, {5, 8},
                                 {2, 5}, {1, 3}, {5, 7}, {2, 6}, {4, 6}, {2, 4}, {2, 3}, {5, 6}};
  NDCONV_UNROLL
  for (int c = 0; c < 16; ++c)
    order(v[kPairs[c][0]], v[kPairs[c][1]]);
}

/// Sorts 9 keys in place (an optimal network: 25 comparators).
NDCONV_HD void sort_nine(uint32_t (&v)[9]) {
  sort_three(v[0], v[1], v[2]);
  sort_three(v[3], v[4], v[5]);
  sort_three(v[6], v[7], v[8]);
  sort_nine_from_triples(v);
}

/// A comparator network as a list of pairs.
struct MergeNetwork {
  int first[80];
  int second[80];
  int count;
};

/// The last stage of Batcher's odd-even merge sort on kN slots: merges two sorted halves.
template <int kN>
constexpr MergeNetwork odd_even_merge() {
  constexpr int kHalf = kN / 2;
  MergeNetwork n{};
  for (int k = kHalf; k >= 1; k /= 2) {
    for (int j = k % kHalf; j + k < kN; j += 2 * k) {
      for (int i = 0; i < k && i + j + k < kN; ++i) {
        if ((i + j) / (2 * kHalf) == (i + j + k) / (2 * kHalf)) {
          n.first[n.count] = i + j;
          n.second[n.count] = i + j + k;
          ++n.count;
        }
      }
    }
  }
  return n;
}

/// The keys of ranks 5 .. 14 (1-based) of the union of two sorted lists of 9 (m[0] is rank 5):
/// Batcher's merge on 32 slots, the lists in slots 0 .. 8 and 16 .. 24, the others holding the
/// largest key (orderings against them are constant, so the compiler drops them, and with them
/// every comparator whose result no kept rank needs). The network is a constant list, so that the
/// unrolled loop indexes registers only.
NDCONV_HD void merge_middle(const uint32_t (&a)[9], const uint32_t (&b)[9], uint32_t (&m)[10]) {
  constexpr int kN = 32, kHalf = kN / 2;
  constexpr MergeNetwork kNetwork = odd_even_merge<kN>();
  static_assert(kNetwork.count == 65, "Batcher's merge of two sorted 16s");
  uint32_t v[kN];
  NDCONV_UNROLL
  for (int i = 0; i < kHalf; ++i) {
    v[i] = i < 9 ? a[i] : 0xffffffffu;
    v[kHalf + i] = i < 9 ? b[i] : 0xffffffffu;
  }
  NDCONV_UNROLL
  for (int c = 0; c < kNetwork.count; ++c)
    order(v[kNetwork.first[c]], v[kNetwork.second[c]]);
  NDCONV_UNROLL
  for (int r = 0; r < 10; ++r)
    m[r] = v[4 + r];
}

/// The 14th key (1-based), the median, of a sorted list p of 9 and the list whose ranks 5 .. 14
/// are m (the middle of 18 sorted keys): min over i + j = 14 of max(p_i, m_j).
NDCONV_HD uint32_t median_of_planes(const uint32_t (&p)[9], const uint32_t (&m)[10]) {
  uint32_t best = m[9];  // i = 0: m_14
  NDCONV_UNROLL
  for (int i = 1; i <= 9; ++i) {
    const uint32_t pi = p[i - 1], mj = m[14 - i - 5];
    const uint32_t term = pi > mj ? pi : mj;
    best = term < best ? term : best;
  }
  return best;
}

/// The medians of kN 3 x 3 x 3 windows that follow one another along z, from their kN + 2 planes
/// (window k holds planes k, k + 1, k + 2): sorted_plane(p, v) fills v with plane p sorted, and
/// emit(k, key) takes window k's median as soon as it is known. Each plane is sorted once, and
/// outputs k, k + 1 (k even) merge their shared planes k + 1, k + 2 once.
template <int kN, typename SortedPlane, typename Emit>
NDCONV_HD void planes_medians(SortedPlane sorted_plane, Emit emit) {
  static_assert(kN % 2 == 0, "outputs in pairs that share a merge");
  uint32_t s0[9], s1[9], s2[9], s3[9];
  sorted_plane(0, s0);
  sorted_plane(1, s1);
  NDCONV_UNROLL
  for (int k = 0; k < kN; k += 2) {
    // s0, s1: planes k, k + 1 (sorted); outputs k and k + 1 also need planes k + 2, k + 3.
    sorted_plane(k + 2, s2);
    sorted_plane(k + 3, s3);
    uint32_t m[10];
    merge_middle(s1, s2, m);
    emit(k, median_of_planes(s0, m));
    emit(k + 1, median_of_planes(s3, m));
    NDCONV_UNROLL
    for (int i = 0; i < 9; ++i) {
      s0[i] = s2[i];
      s1[i] = s3[i];
    }
  }
}

}  // namespace ndconv::cuda_median
