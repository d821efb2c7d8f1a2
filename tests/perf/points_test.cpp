// The GPU sweep's points (points.h) from a list of compiled instantiations, without a GPU: both
// kernel families, the 2D exception of the tiled kernel, --ko, --block-shapes and the auto point.
#include <gtest/gtest.h>

#include <algorithm>

#include "ndconv/errors.h"
#include "perf/points.h"

namespace ndconv::perf {
namespace {

using cuda_backend::DenseKernel;
using cuda_backend::DenseKernelVariant;

// The shape of today's tables (tiled/ and blocked/ launchers): blocked KO 1..16 in two tap
// flavours; tiled TX 8 KO 8/4/1 with 32 and 1 block rows, TX 16 KO 2/1 with 64.
std::vector<DenseKernelVariant> compiled() {
  std::vector<DenseKernelVariant> v;
  for (int ko : {1, 2, 4, 8, 16}) {
    for (bool constant : {true, false}) {
      DenseKernelVariant b;
      b.kernel = DenseKernel::Blocked;
      b.block_x = 128;
      b.constant_taps = constant;
      b.resources.outputs_per_thread = ko;
      v.push_back(b);
    }
  }
  const struct {
    int tx, ko, bx, by;
  } tiled[] = {{8, 8, 4, 32},  {8, 4, 4, 32},  {8, 1, 4, 32},  {8, 8, 128, 1},
               {8, 4, 128, 1}, {8, 1, 128, 1}, {16, 2, 2, 64}, {16, 1, 2, 64}};
  for (const auto& t : tiled) {
    DenseKernelVariant e;
    e.kernel = DenseKernel::Tiled;
    e.outputs_along_x = t.tx;
    e.block_x = t.bx;
    e.block_rows = t.by;
    e.resources.outputs_per_thread = t.ko;
    v.push_back(e);
  }
  return v;
}

std::vector<std::string> labels(const std::vector<PointRequest>& points) {
  std::vector<std::string> out;
  for (const PointRequest& p : points)
    out.push_back(p.label());
  return out;
}

TEST(SweepPoints, FamilyNames) {
  EXPECT_STREQ(family_name(DenseKernel::Auto), "auto");
  EXPECT_STREQ(family_name(DenseKernel::Tiled), "tiled");
  EXPECT_STREQ(family_name(DenseKernel::Blocked), "blocked");
  EXPECT_STREQ(family_name(static_cast<DenseKernel>(cuda_backend::kDenseKernelCount)), "auto");
}

TEST(SweepPoints, EveryKoOfBothFamiliesThenAuto) {
  const auto points = sweep_points(compiled(), 3, {}, false);
  EXPECT_EQ(labels(points),
            (std::vector<std::string>{"blocked KO=1", "blocked KO=2", "blocked KO=4",
                                      "blocked KO=8", "blocked KO=16", "tiled TX=8 KO=8",
                                      "tiled TX=8 KO=4", "tiled TX=8 KO=1", "auto"}));
  EXPECT_TRUE(points.back().is_auto);
  EXPECT_EQ(points.back().request.kernel, DenseKernel::Auto);
  EXPECT_EQ(points.back().request.outputs_per_thread, 0);
  // The default tiled points leave the block rows to the plan (32 or 1 by axis 1).
  EXPECT_EQ(points[6].request.kernel, DenseKernel::Tiled);
  EXPECT_EQ(points[6].request.tiled_outputs_along_x, 8);
  EXPECT_EQ(points[6].request.tiled_block_rows, 0);
}

TEST(SweepPoints, TwoDimensionalImagesHaveTiledKoOneOnly) {
  EXPECT_EQ(labels(sweep_points(compiled(), 2, {}, false)),
            (std::vector<std::string>{"blocked KO=1", "blocked KO=2", "blocked KO=4",
                                      "blocked KO=8", "blocked KO=16", "tiled TX=8 KO=1", "auto"}));
}

TEST(SweepPoints, KoListKeepsThoseKoInEachFamilyAndAlwaysTheAutoPoint) {
  EXPECT_EQ(labels(sweep_points(compiled(), 4, {2}, false)),
            (std::vector<std::string>{"blocked KO=2", "auto"}));
  EXPECT_EQ(labels(sweep_points(compiled(), 3, {4, 16}, false)),
            (std::vector<std::string>{"blocked KO=4", "blocked KO=16", "tiled TX=8 KO=4", "auto"}));
}

TEST(SweepPoints, BlockShapesAddEveryCompiledTiledShape) {
  const auto three = labels(sweep_points(compiled(), 3, {}, true));
  for (const char* want : {"tiled TX=8 KO=4", "tiled TX=8 KO=4 rows=32", "tiled TX=8 KO=4 rows=1",
                           "tiled TX=16 KO=2 rows=64", "tiled TX=16 KO=1 rows=64"}) {
    EXPECT_NE(std::find(three.begin(), three.end(), want), three.end()) << want;
  }
  EXPECT_EQ(three.size(), 5u + 3u + 8u + 1u);
  EXPECT_EQ(three.back(), "auto");
  // 2D: the shapes of KO 1 only.
  EXPECT_EQ(
      labels(sweep_points(compiled(), 2, {}, true)),
      (std::vector<std::string>{"blocked KO=1", "blocked KO=2", "blocked KO=4", "blocked KO=8",
                                "blocked KO=16", "tiled TX=8 KO=1", "tiled TX=8 KO=1 rows=32",
                                "tiled TX=8 KO=1 rows=1", "tiled TX=16 KO=1 rows=64", "auto"}));
}

TEST(SweepPoints, KoCompiledInNeitherFamilyIsRejected) {
  EXPECT_NO_THROW(check_compiled_kos(compiled(), {1, 2, 16}));
  try {
    check_compiled_kos(compiled(), {3});
    FAIL() << "KO 3 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("compiled: 1,2,4,8,16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ndconv::perf
