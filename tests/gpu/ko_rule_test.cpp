// The KO rule (src/cuda/ko_rule.h) on recorded numbers: what cudaFuncGetAttributes and
// cudaOccupancyMaxActiveBlocksPerMultiprocessor reported for the blocked kernel's instantiations
// (128 threads per block). docs/records/2026-11-27-gpu-runs-1-52.md has the run they come from.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/ko_rule.h"

namespace ndconv::cuda_backend {
namespace {

// Blocked kernel, taps in constant memory, sm_90, NVIDIA H100 80GB HBM3 (2048 threads and 65536
// registers per SM), as CudaResources.NoInstantiationSpills printed them in the second validation
// run of 2026-11-21 (docs/records/2026-11-21-h100-kernel-passes.md).
std::vector<KoCandidate> recorded_h100() {
  return {
      {1, 56, 0, 128, 9, 0.5625}, {2, 72, 0, 128, 7, 0.4375}, {4, 72, 0, 128, 7, 0.4375},
      {8, 80, 0, 128, 6, 0.375},  {16, 115, 0, 128, 4, 0.25},
  };
}

TEST(KoRule, LargeLastAxisAndFilterPreferRegisterBlocking) {
  const KoChoice c = choose_outputs_per_thread(recorded_h100(), 256, 11);
  EXPECT_GE(c.outputs_per_thread, 4) << c.reason;
  EXPECT_FALSE(c.reason.empty());
}

TEST(KoRule, LongerFiltersNeverGetLessBlocking) {
  // More taps along the last axis make each extra output cheaper (more reuse per load).
  int previous = 0;
  for (int64_t k : {1, 2, 3, 5, 7, 11, 17, 31}) {
    const KoChoice c = choose_outputs_per_thread(recorded_h100(), 256, k);
    EXPECT_GE(c.outputs_per_thread, previous) << "k=" << k << ": " << c.reason;
    previous = c.outputs_per_thread;
  }
}

TEST(KoRule, CapAtTheFirstKoCoveringTheFilter) {
  // One tap along the last axis: nothing to reuse.
  EXPECT_EQ(choose_outputs_per_thread(recorded_h100(), 256, 1).outputs_per_thread, 1);
  // The issue-6 workloads on the H100: the uncapped model chose 16 for k = 5 and 7 (35% and 13%
  // slower than the best KO); 16 was the best for k = 17.
  EXPECT_LE(choose_outputs_per_thread(recorded_h100(), 256, 5).outputs_per_thread, 8);
  EXPECT_LE(choose_outputs_per_thread(recorded_h100(), 16, 7).outputs_per_thread, 8);
  EXPECT_EQ(choose_outputs_per_thread(recorded_h100(), 4096, 17).outputs_per_thread, 16);
  // The cap never leaves nothing: when the capping KO spills, the next smaller ones remain.
  std::vector<KoCandidate> c = recorded_h100();
  c[3].local_bytes = 32;  // KO 8 spills
  const KoChoice choice = choose_outputs_per_thread(c, 256, 7);
  EXPECT_TRUE(choice.outputs_per_thread == 4 || choice.outputs_per_thread == 16) << choice.reason;
}

TEST(KoRule, ShortLastAxisAvoidsWastedOutputs) {
  // Three outputs along the last axis: KO 16 would compute 13 that do not exist.
  const KoChoice c = choose_outputs_per_thread(recorded_h100(), 3, 7);
  EXPECT_LE(c.outputs_per_thread, 4) << c.reason;
  const KoChoice one = choose_outputs_per_thread(recorded_h100(), 1, 7);
  EXPECT_EQ(one.outputs_per_thread, 1) << one.reason;
}

TEST(KoRule, SpillingInstantiationsAreNeverChosen) {
  std::vector<KoCandidate> c = recorded_h100();
  for (KoCandidate& k : c) {
    if (k.outputs_per_thread >= 4)
      k.local_bytes = 64;  // as if the compiler had spilled
  }
  for (int64_t n : {1, 7, 64, 4096}) {
    for (int64_t k : {1, 5, 31}) {
      const KoChoice choice = choose_outputs_per_thread(c, n, k);
      EXPECT_LT(choice.outputs_per_thread, 4) << "n=" << n << " k=" << k;
      EXPECT_GE(choice.outputs_per_thread, 1);
    }
  }
}

TEST(KoRule, LowOccupancyIsPenalised) {
  std::vector<KoCandidate> c = recorded_h100();
  c[4].occupancy = 0.0625;  // KO 16 with only 4 warps per SM cannot hide latency
  c[4].blocks_per_sm = 1;
  const KoChoice choice = choose_outputs_per_thread(c, 256, 11);
  EXPECT_NE(choice.outputs_per_thread, 16) << choice.reason;
}

TEST(KoRule, UnlaunchableAndEmpty) {
  EXPECT_EQ(choose_outputs_per_thread({}, 100, 3).outputs_per_thread, 0);
  std::vector<KoCandidate> c = recorded_h100();
  for (KoCandidate& k : c)
    k.blocks_per_sm = 0;
  const KoChoice choice = choose_outputs_per_thread(c, 100, 3);
  EXPECT_EQ(choice.outputs_per_thread, 0);
  EXPECT_FALSE(choice.reason.empty());
}

TEST(KoRule, CostMatchesTheWrittenModel) {
  // KO 8, k 11, n 256, occupancy 0.5: (11 * (8 + 2) + 18 * 4) / 8 = 22.75, no tail, no penalty.
  const KoCandidate c{8, 64, 0, 128, 8, 0.5};
  EXPECT_DOUBLE_EQ(ko_cost(c, 256, 11), 22.75);
  // n = 12 with KO 8: 16 computed for 12 useful.
  EXPECT_DOUBLE_EQ(ko_cost(c, 12, 11), 22.75 * 16 / 12);
  // Occupancy 0.125 is half the target: twice the cost.
  const KoCandidate low{8, 64, 0, 128, 2, 0.125};
  EXPECT_DOUBLE_EQ(ko_cost(low, 256, 11), 2 * 22.75);
}

TEST(TiledShapeRule, WideTilesFor2dFiltersFromNineTaps) {
  EXPECT_TRUE(prefer_wide_x(2, 17));
  EXPECT_TRUE(prefer_wide_x(2, 9));
  EXPECT_FALSE(prefer_wide_x(2, 7));
  EXPECT_FALSE(prefer_wide_x(2, 5));
  EXPECT_FALSE(prefer_wide_x(3, 17));
  EXPECT_FALSE(prefer_wide_x(4, 9));
  EXPECT_TRUE(prefer_wide_x(2, 7, 7));  // Tuning::tiled_wide_x_min_taps
}

TEST(TiledShapeRule, BlockRowsFollowAxisOne) {
  EXPECT_EQ(choose_tiled_shape(256, 256, 0).block_rows, 32);  // 3D 256^3
  EXPECT_EQ(choose_tiled_shape(96, 16, 0).block_rows, 32);    // 4D 96^3 x 16
  EXPECT_EQ(choose_tiled_shape(4096, 1, 0).block_rows, 32);   // 2D 4096^2 (y on axis 1)
  EXPECT_EQ(choose_tiled_shape(1, 4096, 0).block_rows, 1);    // axis 1 is a unit axis
  EXPECT_EQ(choose_tiled_shape(15, 40, 0).block_rows, 1);
  EXPECT_EQ(choose_tiled_shape(16, 40, 0).block_rows, 32);
}

TEST(TiledShapeRule, KoFollowsTheLastAxisAndTheCaller) {
  // 0: the register budget decides (TiledKoRule below).
  EXPECT_EQ(choose_tiled_shape(256, 256, 0).outputs_per_thread, 0);
  EXPECT_EQ(choose_tiled_shape(256, 2, 0).outputs_per_thread, 0);
  EXPECT_EQ(choose_tiled_shape(4096, 1, 0).outputs_per_thread, 1);   // 2D: y on axis 1
  EXPECT_EQ(choose_tiled_shape(256, 256, 8).outputs_per_thread, 8);  // forced
  // The wide 2D shape: 64 block rows, KO 1, not when KO is forced.
  const TiledChoice wide = choose_tiled_shape(4096, 1, 0, true);
  EXPECT_EQ(wide.outputs_along_x, 16);
  EXPECT_EQ(wide.block_rows, 64);
  EXPECT_EQ(choose_tiled_shape(4096, 1, 0, true).outputs_per_thread, 1);
  EXPECT_EQ(choose_tiled_shape(256, 256, 8, true).outputs_along_x, 8);
  EXPECT_EQ(choose_tiled_shape(8, 256, 0, true).outputs_along_x, 8);
  EXPECT_FALSE(choose_tiled_shape(1, 1, 0).reason.empty());
  EXPECT_TRUE(tiled_has_ko(1));
  EXPECT_TRUE(tiled_has_ko(4));
  EXPECT_FALSE(tiled_has_ko(8));
  EXPECT_FALSE(tiled_has_ko(16));
}

// The tiled kernel's compiled instantiations as the H100 reported them in the study sweep
// (docs/study/sweep-h100.csv): KO 4 (96 registers, 5 blocks of 128 threads per SM) and KO 1 (64
// registers, 8 blocks), and for 9^4 filters, whose taps fill the shared memory, 3 blocks each.
const KoCandidate kTiledKo4{4, 96, 0, 128, 5, 0.3125};
const KoCandidate kTiledKo1{1, 64, 0, 128, 8, 0.5};
const KoCandidate kTiledKo4Full{4, 96, 0, 128, 3, 0.1875};
const KoCandidate kTiledKo1Full{1, 64, 0, 128, 3, 0.1875};

TEST(TiledKoRule, PicksTheMeasuredBestOnEveryStudyProblem) {
  // On every 3D and 4D problem of the study KO 4 was 1.2-5.1x faster than KO 1.
  for (int64_t k : {3, 5, 7, 9, 11, 13, 15}) {
    const KoChoice c =
        choose_tiled_outputs_per_thread({kTiledKo1, kTiledKo4}, {k, k, 1, k, 8}, 256);
    EXPECT_EQ(c.outputs_per_thread, 4) << "3D " << k << ": " << c.reason;
    EXPECT_NE(c.reason.find("register budget"), std::string::npos);
  }
  for (int64_t n : {16, 20}) {
    for (int64_t k : {3, 5, 7}) {
      EXPECT_EQ(choose_tiled_outputs_per_thread({kTiledKo1, kTiledKo4}, {k, k, k, k, 8}, n)
                    .outputs_per_thread,
                4)
          << "4D " << k << " on " << n;
    }
    EXPECT_EQ(choose_tiled_outputs_per_thread({kTiledKo1Full, kTiledKo4Full}, {9, 9, 9, 9, 8}, n)
                  .outputs_per_thread,
              4);
  }
}

TEST(TiledKoRule, CountsTheOutputsPastTheLastAxisAndTheResources) {
  // Two outputs along the last axis: KO 4 computes twice the outputs that exist.
  EXPECT_EQ(choose_tiled_outputs_per_thread({kTiledKo1, kTiledKo4}, {3, 3, 1, 3, 8}, 2)
                .outputs_per_thread,
            1);
  // A spilling or non-resident instantiation is never chosen.
  KoCandidate spills = kTiledKo4;
  spills.local_bytes = 24;
  EXPECT_EQ(
      choose_tiled_outputs_per_thread({kTiledKo1, spills}, {7, 7, 1, 7, 8}, 256).outputs_per_thread,
      1);
  EXPECT_EQ(choose_tiled_outputs_per_thread({kTiledKo1, spills}, {7, 7, 1, 7, 8}, 256, 24)
                .outputs_per_thread,
            4);
  KoCandidate absent = kTiledKo1;
  absent.blocks_per_sm = 0;
  const KoChoice none = choose_tiled_outputs_per_thread({absent}, {7, 7, 1, 7, 8}, 256);
  EXPECT_EQ(none.outputs_per_thread, 0);
  EXPECT_FALSE(none.reason.empty());
  // Lower occupancy than the target costs time in proportion.
  KoCandidate low = kTiledKo4;
  low.occupancy = kOccupancyTarget / 2;
  EXPECT_DOUBLE_EQ(tiled_ko_cost(low, {7, 7, 1, 7, 8}, 256),
                   2 * tiled_ko_cost(kTiledKo4, {7, 7, 1, 7, 8}, 256));
}

}  // namespace
}  // namespace ndconv::cuda_backend
