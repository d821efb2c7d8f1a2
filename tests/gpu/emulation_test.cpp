// Host emulation of the CUDA kernels (runs in CI, no GPU): every KO, dims 2/3/4, every boundary,
// convolution and correlation, `same` and `valid`, odd extents, filters larger than the volume
// and extent-1 axes, each against the float64 reference with fresh random data and NaN-poisoned
// outputs. The grid walk and the per-thread functions are the ones the GPU runs (emulate.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "cases.h"
#include "cuda/border/border_plan.h"
#include "cuda/plan.h"
#include "cuda/separable/separable_plan.h"
#include "cuda/tensor_map.h"
#include "cuda/tiled/tiled_plan.h"
#include "cuda/tiled/tiled_tensor_maps.h"
#include "emulate.h"
#include "reference.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

// float32 accumulation of at most a few thousand terms lands near 1e-7..1e-6.
constexpr double kTolerance = 1e-5;
constexpr int kCompiledKo[] = {1, 2, 4, 8, 16};
constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic, Boundary::Reflect};

TEST(BoundaryIndexTwin, AgreesWithTheEngine) {
  for (int b = 0; b < static_cast<int>(kBoundaryCount); ++b) {
    for (int64_t n = 1; n <= 9; ++n) {
      for (int64_t i = -40; i <= 40; ++i) {
        const int64_t expected = detail::boundary_index(i, n, static_cast<Boundary>(b));
        ASSERT_EQ(kernels::boundary_index_hd(i, n, b), expected)
            << "i=" << i << " n=" << n << " b=" << b;
        ASSERT_EQ(kernels::boundary_index_t<int>(static_cast<int>(i), static_cast<int>(n), b),
                  expected)
            << "int: i=" << i << " n=" << n << " b=" << b;
      }
    }
  }
}

// One random dense problem of `shape` for the emulation tests: fresh input and taps, the output
// poisoned, the backend's problem over them, and the float64 reference.
struct DenseCase {
  uint64_t seed = fresh_seed();
  std::vector<float> in, taps, out, flipped;
  detail::CorrelationProblem problem;
  std::vector<double> ref;

  DenseCase(const ShapeCase& shape, Boundary b, Operation op, OutputRegion region) {
    in = random_values(voxels(shape.dims, shape.volume), seed);
    taps = random_values(voxels(shape.dims, shape.filter), seed + 1);
    const ConstVolumeView in_view = make_view<const float>(in.data(), shape.dims, shape.volume);
    const DenseFilter f{shape.dims, shape.filter, taps.data()};
    const Index out_extent = reference_output_extent(in_view, shape.filter, region);
    out.resize(static_cast<size_t>(voxels(shape.dims, out_extent)));
    poison(out);
    problem = make_problem(in_view, make_view(out.data(), shape.dims, out_extent), f, op, region, b,
                           flipped);
    ref = reference_dense(in_view, f, op, b, region);
  }
};

// Calls f(c, b, op, region) with a fresh DenseCase of `shape` for every boundary, operation and
// output region (the valid region where it fits).
template <typename F>
void for_each_dense_case(const ShapeCase& shape, F f) {
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    DenseCase c(shape, b, op, region);
    f(c, b, op, region);
  });
}

using DenseParam = std::tuple<ShapeCase, int /*ko*/>;

class DenseEmulation : public ::testing::TestWithParam<DenseParam> {};

TEST_P(DenseEmulation, MatchesReference) {
  const auto& [shape, ko] = GetParam();
  for_each_dense_case(
      shape, [&, ko = ko](DenseCase& c, Boundary b, Operation op, OutputRegion region) {
        const std::vector<float> tap_rows = cuda_backend::dense_tap_rows(c.problem);
        const bool small_grid = (c.seed & 1) != 0;  // also walk the grid-stride loops
        emulate_blocked_ko(ko, cuda_backend::dense_geometry(c.problem), c.in.data(), c.out.data(),
                           tap_rows.data(), small_grid);
        EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
            << shape << " KO=" << ko << " " << to_string(b) << " " << to_string(op) << " "
            << to_string(region) << " seed=" << c.seed;
      });
}

INSTANTIATE_TEST_SUITE_P(AllKo, DenseEmulation,
                         ::testing::Combine(::testing::ValuesIn(shape_cases()),
                                            ::testing::ValuesIn(kCompiledKo)));

// A NaN in the input reaches exactly the outputs whose footprint holds it (no multiplication of
// inputs outside a footprint by zero taps, which would spread it along the blocked axis).
TEST(DenseEmulationNan, StaysInsideTheFootprint) {
  const ShapeCase shape{3, {40, 9, 37, 1}, {3, 3, 5, 1}};
  for (int ko : kCompiledKo) {
    const uint64_t seed = fresh_seed();
    std::vector<float> in = random_values(voxels(3, shape.volume), seed);
    in[(18 * 9 + 4) * 40 + 20] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> taps = random_values(voxels(3, shape.filter), seed + 1);
    const ConstVolumeView in_view = make_view<const float>(in.data(), 3, shape.volume);
    const DenseFilter f{3, shape.filter, taps.data()};
    std::vector<float> out(in.size());
    poison(out);
    std::vector<float> flipped;
    const detail::CorrelationProblem p =
        make_problem(in_view, make_view(out.data(), 3, shape.volume), f, Operation::Correlation,
                     OutputRegion::Same, Boundary::Zero, flipped);
    const std::vector<float> tap_rows = cuda_backend::dense_tap_rows(p);
    emulate_blocked_ko(ko, cuda_backend::dense_geometry(p), in.data(), out.data(), tap_rows.data());
    const std::vector<double> ref =
        reference_dense(in_view, f, Operation::Correlation, Boundary::Zero, OutputRegion::Same);
    EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0) << "KO=" << ko << " seed=" << seed;
  }
}

// The tiled kernel (cuda/tiled/tiled_thread.h), every entry of the dispatch table: (KO, block
// rows).
using TiledParam = std::tuple<ShapeCase, std::pair<int, int>>;
const std::pair<int, int> kTiledEntries[] = {{8, 32}, {4, 32}, {1, 32}, {8, 1},
                                             {4, 1},  {1, 1},  {2, 64}, {1, 64}};

class TiledEmulation : public ::testing::TestWithParam<TiledParam> {};

// Both ways of loading planes: thread by thread, and the bulk copy's boxes with the face tiles'
// halo patched over the copy's zeros for the other boundaries (cuda/tiled/tiled_halo.h); the bulk
// runs also take their taps laid out on the host (the dense launcher's way), the others lay them
// out in the kernel. The bulk form for the same region and correlation only: the loads do not
// depend on the operation, and the valid region has no faces. Half the seeds run a third of the
// grid, so that blocks walk several tiles and fetch the next tile's first plane and halo.
TEST_P(TiledEmulation, MatchesReference) {
  const auto& [shape, entry] = GetParam();
  for (Boundary b : kBoundaries) {
    for (Operation op : {Operation::Correlation, Operation::Convolution}) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        for (const bool bulk : {false, true}) {
          if (region == OutputRegion::Valid && !valid_fits(shape))
            continue;
          if (bulk && (region != OutputRegion::Same || op != Operation::Correlation))
            continue;
          DenseCase c(shape, b, op, region);
          const std::vector<float> tap_rows = cuda_backend::tiled_tap_rows(c.problem);
          emulate_tiled_entry(entry.first, entry.second, cuda_backend::tiled_geometry(c.problem),
                              c.in.data(), c.out.data(), tap_rows.data(), (c.seed & 1) != 0, bulk,
                              bulk);
          EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
              << shape << " tiled KO=" << entry.first << " rows=" << entry.second << " "
              << to_string(b) << " " << to_string(op) << " " << to_string(region)
              << (bulk ? " bulk" : " copy") << " seed=" << c.seed;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllEntries, TiledEmulation,
                         ::testing::Combine(::testing::ValuesIn(shape_cases()),
                                            ::testing::ValuesIn(kTiledEntries)));

// The padded input of the dense launcher's bulk launches for the other boundaries where the halo
// does not fit (cuda/border/pad_thread.h, cuda_backend::pad_tiled_input): every element of the
// padded buffer is written, no tile of the padded geometry has a halo, the boxes keep their 16-byte
// alignment, and the tiled kernel on it (the 3D/4D shape, bulk copies, lead taps) matches the
// reference for every boundary. Padding serves wherever tiles have a halo.
TEST(TiledPaddedInput, MatchesReferenceWithoutHalo) {
  using S = kernels::TiledShape<8, 4, 4, 32, true>;
  // The largest halo of a tile of the bulk launch on g (lead taps applied).
  auto halo = [](const kernels::Geometry& g) {
    const int lead = kernels::tiled_lead(g);
    const kernels::Geometry lg = kernels::tiled_lead_geometry(g, lead);
    kernels::TiledLayout l = kernels::tiled_layout<S>(lg);
    l.lead = lead;
    return cuda_backend::tiled_halo_elements(lg, l, S::kTileX, S::BY);
  };
  for (const ShapeCase& shape : shape_cases()) {
    if (shape.dims < 3)
      continue;
    for (Boundary b : kBoundaries) {
      DenseCase c(shape, b, Operation::Correlation, OutputRegion::Same);
      const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
      // Padding covers every halo (it counts whole tiles' spans: also where only outputs past the
      // volume's end would read outside).
      EXPECT_TRUE(halo(tg) == 0 || cuda_backend::tiled_input_padding_pays(tg, S::kTileX, S::BY))
          << shape << " " << to_string(b);
      const cuda_backend::PaddedInput pi = cuda_backend::pad_tiled_input(tg, S::kTileX, S::BY);
      EXPECT_EQ(pi.layout.extent[0] % 4, 0);
      EXPECT_EQ(pi.layout.before[0] % 4, 0);  // the lead taps and box alignment are unchanged
      EXPECT_EQ(kernels::tiled_lead(pi.geometry), kernels::tiled_lead(tg));
      std::vector<float> padded(static_cast<size_t>(pi.floats),
                                std::numeric_limits<float>::quiet_NaN());
      for (int64_t i3 = 0; i3 < tg.in_extent[3]; ++i3)
        for (int64_t i2 = 0; i2 < tg.in_extent[2]; ++i2)
          for (int64_t row = 0; row < pi.layout.extent[1]; ++row)
            for (int64_t quad = 0; quad < pi.layout.extent[0] / 4; ++quad)
              kernels::pad_write(pi.layout, padded.data(),
                                 kernels::pad_read(tg, pi.layout, c.in.data(), quad, row, i2, i3),
                                 quad, row, i2, i3);
      EXPECT_EQ(std::count_if(padded.begin(), padded.end(), [](float v) { return std::isnan(v); }),
                0)
          << shape;
      const kernels::Geometry lg =
          kernels::tiled_lead_geometry(pi.geometry, kernels::tiled_lead(pi.geometry));
      EXPECT_EQ(cuda_backend::bulk_copy_unfit(lg, kernels::tiled_layout<S>(lg), 4096), "") << shape;
      EXPECT_EQ(halo(pi.geometry), 0) << shape << " " << to_string(b);
      const std::vector<float> tap_rows = cuda_backend::tiled_tap_rows(c.problem);
      emulate_tiled<S>(pi.geometry, padded.data(), c.out.data(), tap_rows.data(), (c.seed & 1) != 0,
                       true, true);
      EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
          << shape << " padded " << to_string(b) << " seed=" << c.seed;
    }
  }
}

// The halo of the tiled kernel's face tiles (cuda/tiled/tiled_halo.h): every tile lists exactly the
// plane elements that its existing outputs multiply (rows below `rows`, columns from the lead taps
// to `columns`) and that lie outside the volume along x or axis 1, each once; the launcher's bound
// (tiled_halo_elements) is the largest tile's count; a tile has a halo exactly where
// tiled_halo_needed says so (for the boundaries with one).
TEST(TiledHalo, ListsEveryOutsideElementOnce) {
  using S = kernels::TiledShape<8, 4, 4, 32, true>;
  std::vector<ShapeCase> shapes = shape_cases();
  shapes.push_back({3, {70, 66, 4, 1}, {17, 11, 3, 1}});  // several slots per thread
  shapes.push_back({3, {64, 64, 4, 1}, {5, 5, 5, 1}});    // tiles that end at the volume's end
  for (const ShapeCase& shape : shapes) {
    if (shape.dims < 3)
      continue;
    for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
      if (region == OutputRegion::Valid && !valid_fits(shape))
        continue;
      DenseCase c(shape, Boundary::Mirror, Operation::Correlation, region);
      const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
      const int lead = kernels::tiled_lead(tg);
      const kernels::Geometry g = kernels::tiled_lead_geometry(tg, lead);
      kernels::TiledLayout l = kernels::tiled_layout<S>(g);
      l.lead = lead;
      int64_t most = 0;
      const int tiles = static_cast<int>(kernels::tiled_tile_count<S>(g));
      for (int tile = 0; tile < tiles; ++tile) {
        const kernels::TileOrigin t = kernels::tiled_origin<S>(l, tile);
        const kernels::TiledHalo h = kernels::tiled_halo(g, l, S::kTileX, S::BY, t.o[0], t.o[1]);
        // The elements the tile's existing outputs multiply, outside the volume.
        std::vector<int> expected(static_cast<size_t>(l.rows * l.pitch), 0);
        const int64_t outputs0 = std::min<int64_t>(S::kTileX, g.out_extent[0] - t.o[0]);
        const int64_t outputs1 = std::min<int64_t>(S::BY, g.out_extent[1] - t.o[1]);
        int outside = 0;
        for (int64_t r = 0; r < outputs1 + g.filter_extent[1] - 1; ++r) {
          for (int64_t col = lead; col < outputs0 + g.filter_extent[0] - 1; ++col) {
            const int64_t x = t.o[0] + g.offset[0] + col, y = t.o[1] + g.offset[1] + r;
            if (x < 0 || x >= g.in_extent[0] || y < 0 || y >= g.in_extent[1]) {
              expected[static_cast<size_t>(r * l.pitch + col)] = 1;
              ++outside;
            }
          }
        }
        ASSERT_EQ(h.count(), outside) << shape << " tile " << tile;
        for (int e = 0; e < h.count(); ++e) {
          int r = -1, col = -1;
          h.element(e, r, col);
          ASSERT_TRUE(r >= 0 && r < l.rows && col >= lead && col < l.columns)
              << shape << " tile " << tile << " e=" << e << " (" << r << ", " << col << ")";
          ASSERT_EQ(expected[static_cast<size_t>(r * l.pitch + col)]--, 1)
              << shape << " tile " << tile << " e=" << e << " (" << r << ", " << col << ")";
        }
        most = std::max<int64_t>(most, outside);
        kernels::TiledLayout with_halo = l;  // tiled_halo_needed answers for launches with one
        kernels::tiled_add_halo(with_halo, g, 1, S::kThreads, kernels::TiledHaloMode::kStaged);
        if (outside > 0) {
          EXPECT_TRUE(kernels::tiled_halo_needed(with_halo, t)) << shape << " tile " << tile;
        }
      }
      EXPECT_EQ(cuda_backend::tiled_halo_elements(g, l, S::kTileX, S::BY), most) << shape;
    }
  }
}

// The tiled kernel with a halo of several slots per thread and blocks that walk several tiles
// (grid shrunk) or one each, against the reference, for every boundary and every way of patching
// the halo that applies (local only where the halo's values lie in the tile's plane box, wrap
// boxes only for periodic where they serve: cuda_backend::tiled_wrap_extent).
TEST(TiledHalo, PatchedPlanesMatchReference) {
  using S = kernels::TiledShape<8, 4, 4, 32, true>;
  using Mode = kernels::TiledHaloMode;
  const ShapeCase shapes[] = {{3, {70, 66, 4, 1}, {17, 11, 3, 1}},
                              {3, {64, 64, 9, 1}, {5, 5, 5, 1}},
                              {3, {33, 70, 5, 1}, {5, 3, 3, 1}},  // a tile spans x
                              {3, {74, 45, 3, 1}, {7, 9, 3, 1}},  // x not a multiple of 4
                              {4, {36, 40, 3, 9}, {7, 3, 3, 4}}};
  int wrapped = 0;
  for (const ShapeCase& shape : shapes) {
    for (Boundary b : kBoundaries) {
      for (const Mode mode : {Mode::kDirect, Mode::kStaged, Mode::kLocal, Mode::kWrap}) {
        for (const bool small_grid : {false, true}) {
          DenseCase c(shape, b, Operation::Correlation, OutputRegion::Same);
          const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
          const kernels::Geometry g = kernels::tiled_lead_geometry(tg, kernels::tiled_lead(tg));
          kernels::TiledLayout l = kernels::tiled_layout<S>(g);
          l.lead = kernels::tiled_lead(tg);
          if (mode == Mode::kLocal && !cuda_backend::tiled_halo_local(g, l, S::kTileX, S::BY))
            continue;
          if (mode == Mode::kWrap &&
              cuda_backend::tiled_wrap_extent(g, l, S::kTileX, S::BY).columns == 0)
            continue;
          wrapped += mode == Mode::kWrap;
          const std::vector<float> tap_rows = cuda_backend::tiled_tap_rows(c.problem);
          emulate_tiled<S>(tg, c.in.data(), c.out.data(), tap_rows.data(), small_grid, true, true,
                           false, mode);
          EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
              << shape << " " << to_string(b) << " mode " << static_cast<int>(mode)
              << (small_grid ? " small grid" : "") << " seed=" << c.seed;
        }
      }
    }
  }
  EXPECT_EQ(wrapped, 2 * 4) << "the periodic runs with wrap boxes: every shape but the one whose "
                               "tiles span x, each with both grids";
}

// The opposite faces' boxes of periodic launches (cuda_backend::tiled_wrap_extent): where every
// face tile's plane box crosses one face per axis at most and its halo wraps once, the side box
// reaches from a 16-byte boundary through the last wrapped column and the band box holds the
// widest band; for 256^3 with 5^3 (lead 2: halo columns -2, -1 and 256, 257; rows -2, -1 and 256,
// 257) 4 columns and 2 rows. Not for the other boundaries, nor where a tile spans x or the halo
// wraps more than once.
TEST(TiledHalo, WrapBoxesWhereEachTileWrapsOnce) {
  using S = kernels::TiledLeadShape;
  struct Case {
    ShapeCase shape;
    int columns, rows;  // 0, 0: the wrap boxes do not serve
  };
  // Two planes along axis 2 and one tap: the boxes depend on x and axis 1 alone.
  const Case cases[] = {{{3, {256, 256, 2, 1}, {5, 5, 1, 1}}, 4, 2},
                        {{3, {254, 100, 2, 1}, {5, 7, 1, 1}}, 4, 3},   // left face at 252..253
                        {{3, {250, 100, 2, 1}, {11, 3, 1, 1}}, 8, 1},  // 245..249 from 244
                        {{3, {33, 70, 2, 1}, {5, 3, 1, 1}}, 0, 0},     // a tile spans x
                        {{3, {64, 20, 2, 1}, {5, 5, 1, 1}}, 0, 0},     // a tile spans axis 1
                        {{3, {5, 4, 2, 1}, {9, 7, 1, 1}}, 0, 0}};      // filters wider than it
  for (const Case& k : cases) {
    for (Boundary b : kBoundaries) {
      DenseCase c(k.shape, b, Operation::Correlation, OutputRegion::Same);
      const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
      const kernels::Geometry g = kernels::tiled_lead_geometry(tg, kernels::tiled_lead(tg));
      kernels::TiledLayout l = kernels::tiled_layout<S>(g);
      l.lead = kernels::tiled_lead(tg);
      const kernels::TiledWrapExtent w = cuda_backend::tiled_wrap_extent(g, l, S::kTileX, S::BY);
      const bool periodic = b == Boundary::Periodic;
      EXPECT_EQ(w.columns, periodic ? k.columns : 0) << k.shape << " " << to_string(b);
      EXPECT_EQ(w.rows, periodic ? k.rows : 0) << k.shape << " " << to_string(b);
    }
  }
}

// The lead-tap shape's kernels with row code fixed for one filter width (kernels::
// TiledFixedRowsList): each fits exactly one of the odd widths 3..15 of the same region, every such
// width has one, and its row code gives the reference's result for every boundary, blocks walking
// several tiles or one each; the widths along the other axes vary (the row code fixes only x's).
// Each is compiled with the halo code of the launches it serves (kernels::TiledHaloCode): none
// for zero, copied within the plane for the others (replicate and mirror locally, periodic from
// the wrap boxes, all of which these shapes have).
template <typename R>
void check_fixed_rows(std::vector<int>& widths_served) {
  using S = kernels::TiledLeadShape;
  int fits = 0;
  for (int k0 = 3; k0 <= 15; k0 += 2) {
    const ShapeCase shape{3, {37 + k0, 40, 9, 1}, {k0, 3 + k0 % 4, 5, 1}};
    DenseCase probe(shape, Boundary::Zero, Operation::Correlation, OutputRegion::Same);
    const kernels::Geometry tg = cuda_backend::tiled_geometry(probe.problem);
    const int lead = kernels::tiled_lead(tg);
    const kernels::Geometry g = kernels::tiled_lead_geometry(tg, lead);
    kernels::TiledLayout l = kernels::tiled_layout<S>(g);
    l.lead = lead;
    if (!kernels::tiled_rows_fit<S, R>(g, l))
      continue;
    ++fits;
    widths_served.push_back(k0);
    for (Boundary b : kBoundaries) {
      for (const bool small_grid : {false, true}) {
        DenseCase c(shape, b, Operation::Correlation, OutputRegion::Same);
        const std::vector<float> tap_rows = cuda_backend::tiled_tap_rows(c.problem);
        const kernels::Geometry cg = cuda_backend::tiled_geometry(c.problem);
        if (b == Boundary::Zero) {
          emulate_tiled<S, R, kernels::TiledHaloCode::kNone>(
              cg, c.in.data(), c.out.data(), tap_rows.data(), small_grid, true, true);
        } else {
          emulate_tiled<S, R, kernels::TiledHaloCode::kWithin>(
              cg, c.in.data(), c.out.data(), tap_rows.data(), small_grid, true, true);
        }
        EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
            << shape << " " << to_string(b) << (small_grid ? " small grid" : "")
            << " seed=" << c.seed;
      }
    }
  }
  EXPECT_EQ(fits, 1) << "first " << R::kFirst << " last " << R::kLast << " blocks " << R::kBlocks;
}

template <typename... R>
void check_fixed_rows_list(std::tuple<R...>*, std::vector<int>& widths_served) {
  (check_fixed_rows<R>(widths_served), ...);
}

TEST(TiledFixedRows, EachServesOneWidthAndMatchesReference) {
  std::vector<int> widths;
  check_fixed_rows_list(static_cast<kernels::TiledFixedRowsList*>(nullptr), widths);
  std::sort(widths.begin(), widths.end());
  EXPECT_EQ(widths, (std::vector<int>{3, 5, 7, 9, 11, 13, 15}));
}

// Face tiles dealt over the blocks (cuda_backend::tiled_deal_face_tiles): a permutation of each
// chunk's positions under which every block of the bench's 256^3 launch (4096 tiles of 32 x 32 on
// 8 x 8 positions, 28 with a face, 660 blocks walking b, b + 660, ...) holds as many face tiles as
// any other give or take two (one more tile, one more face; in number order, 0 to 5).
TEST(TiledDeal, FaceTilesEvenlyOverTheBlocks) {
  kernels::TiledLayout l{};
  l.tiles_x = kernels::fast_divmod(8);
  l.tiles_y = kernels::fast_divmod(8);
  l.halo_slots = 1;
  const int inner[4] = {32, 192, 32, 192};  // origins 32..192: positions 1..6 along x and y
  std::copy(inner, inner + 4, l.inner);
  for (const int grid : {660, 528, 132, 100}) {  // not a multiple of 64: blocks would stay put
    cuda_backend::tiled_deal_face_tiles(l, 32, 32, grid);
    ASSERT_EQ(l.deal_size, 64);
    std::vector<int> seen(64, 0);
    for (int p = 0; p < 64; ++p)
      ++seen[l.deal[p]];
    EXPECT_EQ(seen, std::vector<int>(64, 1)) << "grid " << grid;
    auto is_face = [](int position) {
      const int x = position % 8, y = position / 8;
      return x == 0 || x == 7 || y == 0 || y == 7;
    };
    int fewest = 1 << 20, most = 0;
    for (int b = 0; b < grid; ++b) {
      int faces = 0;
      for (int tile = b; tile < 4096; tile += grid)
        faces += is_face(l.deal[tile % 64]) ? 1 : 0;
      fewest = std::min(fewest, faces);
      most = std::max(most, faces);
    }
    // Blocks walk 4096 / grid tiles or one more, so a spread of 2 (in number order: 5 at 660);
    // where a cycle of positions is shorter than a block's walk and its share of faces not whole
    // (528: cycles of 4 with 1.75 faces each), 3.
    EXPECT_LE(most - fewest, grid == 660 ? 2 : 3) << "grid " << grid;
  }
}

// Local halos (tiled_halo_local): for replicate, mirror and reflect every face tile's halo values
// lie in its own plane box, whatever the volume and filter; for periodic only where a tile spans
// the volume along each axis with a halo. A mutation check: the local copy alone (no global load)
// gives the reference's result (PatchedPlanesMatchReference), and a source outside the box would
// read the copy's zeros or another tile's data.
TEST(TiledHalo, LocalWhereTheValuesLieInThePlaneBox) {
  using S = kernels::TiledShape<8, 4, 4, 32, true>;
  std::vector<ShapeCase> shapes = shape_cases();
  shapes.push_back({3, {256, 256, 8, 1}, {5, 5, 5, 1}});
  shapes.push_back({3, {5, 4, 4, 1}, {9, 7, 3, 1}});  // filters wider than the volume
  for (const ShapeCase& shape : shapes) {
    if (shape.dims < 3)
      continue;
    for (Boundary b : kBoundaries) {
      DenseCase c(shape, b, Operation::Correlation, OutputRegion::Same);
      const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
      const kernels::Geometry g = kernels::tiled_lead_geometry(tg, kernels::tiled_lead(tg));
      kernels::TiledLayout l = kernels::tiled_layout<S>(g);
      l.lead = kernels::tiled_lead(tg);
      const bool local = cuda_backend::tiled_halo_local(g, l, S::kTileX, S::BY);
      if (b == Boundary::Replicate || b == Boundary::Mirror || b == Boundary::Reflect) {
        EXPECT_TRUE(local) << shape << " " << to_string(b);
      }
      if (b == Boundary::Zero) {
        EXPECT_FALSE(local) << shape;
      }
      if (b == Boundary::Periodic && tg.filter_extent[0] > 1 && g.in_extent[0] > 2 * l.pitch) {
        EXPECT_FALSE(local) << shape;
      }
    }
  }
}

// The border kernel (cuda/border/border_thread.h): its boxes cover exactly the outputs whose
// footprint leaves the input along x or axis 1, each once; after the tiled kernel's bulk launch
// that keeps the copy's zeros at the faces (kTiledBulkZeroFaces) its terms make the result match
// the reference for every boundary, region and operation, where the tiled launch alone does not (a
// boundary other than zero with a shell to correct).
TEST(BorderKernel, RecomputesTheFaceShell) {
  using S = kernels::TiledShape<8, 4, 4, 32, true>;
  std::vector<ShapeCase> shapes = shape_cases();
  // A patch plane larger than the elements a block stages from registers (kBorderSlots per thread):
  // the general staging loop.
  const ShapeCase wide{3, {40, 36, 5, 1}, {33, 17, 3, 1}};
  shapes.push_back(wide);
  {
    DenseCase c(wide, Boundary::Mirror, Operation::Correlation, OutputRegion::Same);
    const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
    const kernels::BorderBlock k = kernels::border_block(tg, kernels::border_plan(tg), 0);
    EXPECT_GT(k.patch.extent[0] * k.patch.extent[1],
              kernels::kBorderSlots * kernels::kBorderThreads);
  }
  for (const ShapeCase& shape : shapes) {
    for_each_dense_case(shape, [&](DenseCase& c, Boundary b, Operation op, OutputRegion region) {
      const kernels::Geometry tg = cuda_backend::tiled_geometry(c.problem);
      const kernels::BorderPlan plan = kernels::border_plan(tg);
      // Coverage: how often the boxes hold each (x, axis 1) output.
      std::vector<int> covered(static_cast<size_t>(tg.out_extent[0] * tg.out_extent[1]), 0);
      for (int k = 0; k < plan.boxes; ++k) {
        for (int64_t y = 0; y < plan.box[k].extent[1]; ++y) {
          for (int64_t x = 0; x < plan.box[k].extent[0]; ++x)
            ++covered[static_cast<size_t>((plan.box[k].first[1] + y) * tg.out_extent[0] +
                                          plan.box[k].first[0] + x)];
        }
      }
      int64_t shell = 0;
      for (int64_t y = 0; y < tg.out_extent[1]; ++y) {
        for (int64_t x = 0; x < tg.out_extent[0]; ++x) {
          const int64_t o[2] = {x, y};
          bool leaves = false;
          for (int a = 0; a < 2; ++a)
            leaves = leaves || o[a] + tg.offset[a] < 0 ||
                     o[a] + tg.offset[a] + tg.filter_extent[a] > tg.in_extent[a];
          shell += leaves;
          ASSERT_EQ(covered[static_cast<size_t>(y * tg.out_extent[0] + x)], leaves ? 1 : 0)
              << shape << " " << to_string(region) << " output " << x << "," << y;
        }
      }
      const std::vector<float> tap_rows = cuda_backend::tiled_tap_rows(c.problem);
      const bool small_grid = (c.seed & 1) != 0;
      emulate_tiled<S>(tg, c.in.data(), c.out.data(), tap_rows.data(), small_grid, true, true,
                       true);
      const double tiled_alone = relative_l2_error(c.out, c.ref);
      if (b != Boundary::Zero && shell > 0) {
        EXPECT_GT(tiled_alone, kTolerance) << shape << " " << to_string(b);
      }
      emulate_border(tg, c.in.data(), c.out.data(), tap_rows.data(), small_grid);
      EXPECT_LT(relative_l2_error(c.out, c.ref), kTolerance)
          << shape << " border " << to_string(b) << " " << to_string(op) << " " << to_string(region)
          << " seed=" << c.seed;
    });
  }
}

// The border kernel's patch: every float a block's threads read is staged (the emulation poisons
// the patch), and its rows start on banks that keep the lanes of a warp apart: an odd multiple of
// the threads along x below a warp.
TEST(BorderKernel, PatchPitchSpreadsTheBanks) {
  kernels::Geometry g{};
  for (int a = 0; a < kernels::kAxes; ++a)
    g.filter_extent[a] = 1;
  for (int k0 : {1, 2, 5, 11}) {
    g.filter_extent[0] = k0;
    for (int log_x = 0; log_x <= 5; ++log_x) {
      const kernels::BorderPatch p = kernels::border_patch(g, log_x, 2);
      const int cx = 1 << log_x;
      EXPECT_GE(p.stride[1], p.extent[0]);
      if (cx < 32) {
        EXPECT_EQ(p.stride[1] % (2 * cx), cx) << "K0 " << k0 << " threads along x " << cx;
        std::vector<int> banks;
        for (int y = 0; y < 32 / cx; ++y)
          for (int x = 0; x < cx; ++x)
            banks.push_back((x + y * p.stride[1]) % 32);
        std::sort(banks.begin(), banks.end());
        EXPECT_EQ(std::unique(banks.begin(), banks.end()) - banks.begin(), 32) << "K0 " << k0;
      }
    }
  }
}

// Whether the launcher can pad where the halo does not serve: not for the zero boundary (the copy
// engine's zeros are the boundary), not where no tile reads outside the volume (the valid region
// here: 64 x 32 outputs, whole tiles); 2D images too (one plane per tile).
TEST(TiledPaddedInput, OnlyWhereTilesReadOutside) {
  auto geometry = [](int dims, Boundary b, OutputRegion region) {
    const ShapeCase shape{dims, {68, 36, dims > 2 ? 9 : 1, 1}, {5, 5, dims > 2 ? 3 : 1, 1}};
    DenseCase c(shape, b, Operation::Correlation, region);
    return cuda_backend::tiled_geometry(c.problem);
  };
  EXPECT_TRUE(cuda_backend::tiled_input_padding_pays(
      geometry(3, Boundary::Mirror, OutputRegion::Same), 32, 32));
  EXPECT_FALSE(cuda_backend::tiled_input_padding_pays(
      geometry(3, Boundary::Zero, OutputRegion::Same), 32, 32));
  EXPECT_FALSE(cuda_backend::tiled_input_padding_pays(
      geometry(3, Boundary::Periodic, OutputRegion::Valid), 32, 32));
  EXPECT_TRUE(cuda_backend::tiled_input_padding_pays(
      geometry(2, Boundary::Replicate, OutputRegion::Same), 32, 64));
}

// Which inputs the tiled kernel's bulk plane copies can load (src/cuda/tensor_map.h): contiguous
// x, 16-byte aligned rows, slices and frames (a unit axis's stride is never used), a 16-byte
// aligned start, boxes that start on 16-byte boundaries along x, plane tiles of at most 256 x 256
// elements.
TEST(TiledBulkCopy, RuleOfLayouts) {
  using kernels::Geometry;
  using S = kernels::TiledShape<8, 4, 4, 32>;
  auto volume = [](int64_t nx, int64_t ny, int64_t nz, int k) {
    Geometry g{};
    const int64_t extent[4] = {nx, ny, 1, nz};
    const int64_t stride[4] = {1, nx, 7, nx * ny};  // axis 2 is a unit axis
    for (int a = 0; a < 4; ++a) {
      g.in_extent[a] = g.out_extent[a] = extent[a];
      g.in_stride[a] = g.out_stride[a] = stride[a];
      g.filter_extent[a] = a == 2 ? 1 : k;
      g.offset[a] = a == 2 ? 0 : -(k / 2);
    }
    return g;
  };
  const uintptr_t aligned = 4096;
  Geometry g = volume(256, 256, 256, 17);  // the same region: boxes start 8 columns left
  EXPECT_EQ(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  EXPECT_NE(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned + 4), "");
  g = volume(256, 256, 256, 11);  // 5 columns left: not on a 16-byte boundary
  EXPECT_NE(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  // ... but with 3 lead taps (offset -8, 14 taps, the first 3 skipped) they do.
  EXPECT_EQ(kernels::tiled_lead(g), 3);
  const Geometry lg = kernels::tiled_lead_geometry(g, 3);
  EXPECT_EQ(lg.offset[0], -8);
  EXPECT_EQ(lg.filter_extent[0], 14);
  EXPECT_EQ(cuda_backend::bulk_copy_unfit(lg, kernels::tiled_layout<S>(lg), aligned), "");
  EXPECT_EQ(kernels::tiled_lead(volume(256, 256, 256, 5)), 2);
  EXPECT_EQ(kernels::tiled_lead(volume(256, 256, 256, 7)), 1);
  EXPECT_EQ(kernels::tiled_lead(volume(256, 256, 256, 9)), 0);
  g.offset[0] = 0;  // the valid region
  EXPECT_EQ(kernels::tiled_lead(g), 0);
  EXPECT_EQ(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  g = volume(37, 33, 9, 9);  // rows 148 bytes apart
  EXPECT_NE(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  g = volume(36, 33, 9, 9);
  EXPECT_EQ(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  g.in_stride[0] = 2;
  EXPECT_NE(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  g = volume(256, 256, 8, 233);  // 32 + 232 tile rows
  EXPECT_NE(cuda_backend::bulk_copy_unfit(g, kernels::tiled_layout<S>(g), aligned), "");
  // The plane buffers start 128-byte aligned, as the copy engine writes them.
  g = volume(256, 256, 256, 5);
  const kernels::TiledLayout l = kernels::tiled_layout<S>(g);
  EXPECT_EQ(l.tile_offset % 32, 0);
  EXPECT_EQ(l.tile_floats % 32, 0);
  EXPECT_GE(l.tile_offset, l.tap_floats);
  EXPECT_GE(l.map_offset, l.tile_offset + 2 * l.pitch * l.rows);
  EXPECT_EQ(l.barrier_offset % 2, 0);
  EXPECT_GE(l.barrier_offset, l.map_offset + l.map_ints);
}

// Lead taps: zero rows before every run of K0 tap rows along x, the rows themselves unchanged.
TEST(TiledLeadTaps, ZeroRowsBeforeEveryRun) {
  const std::vector<float> rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // 2 runs of 3 rows x 2
  EXPECT_EQ(cuda_backend::tiled_lead_tap_rows(rows, 3, 2, 0), rows);
  const std::vector<float> led = {0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(cuda_backend::tiled_lead_tap_rows(rows, 3, 2, 2), led);
}

// The tiled kernel multiplies no input outside an output's footprint either (the partial last
// block of a tap row stops at K0; planes without a tap of an output are skipped).
TEST(TiledEmulationNan, StaysInsideTheFootprint) {
  const ShapeCase shape{3, {40, 19, 37, 1}, {3, 3, 5, 1}};
  for (const auto& entry : kTiledEntries) {
    const uint64_t seed = fresh_seed();
    std::vector<float> in = random_values(voxels(3, shape.volume), seed);
    in[(18 * 19 + 4) * 40 + 20] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> taps = random_values(voxels(3, shape.filter), seed + 1);
    const ConstVolumeView in_view = make_view<const float>(in.data(), 3, shape.volume);
    const DenseFilter f{3, shape.filter, taps.data()};
    std::vector<float> out(in.size());
    poison(out);
    std::vector<float> flipped;
    const detail::CorrelationProblem p =
        make_problem(in_view, make_view(out.data(), 3, shape.volume), f, Operation::Correlation,
                     OutputRegion::Same, Boundary::Zero, flipped);
    const std::vector<float> tap_rows = cuda_backend::dense_tap_rows(p);
    const std::vector<double> ref =
        reference_dense(in_view, f, Operation::Correlation, Boundary::Zero, OutputRegion::Same);
    for (const bool bulk : {false, true}) {
      poison(out);
      emulate_tiled_entry(entry.first, entry.second, cuda_backend::dense_geometry(p), in.data(),
                          out.data(), tap_rows.data(), false, bulk);
      EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0)
          << "KO=" << entry.first << " rows=" << entry.second << (bulk ? " bulk" : " copy")
          << " seed=" << seed;
    }
  }
}

// (kernels of the passes, KO of the blocked passes): the column kernel (the default) at its own
// and a forced KO, and the tiled x pass with the blocked kernel at every blocked KO (a forced KO
// the column kernel does not have).
using SeparableKernels = cuda_backend::SeparableKernels;
const std::pair<SeparableKernels, int> kSeparableModes[] = {
    {SeparableKernels::kColumns, 0}, {SeparableKernels::kColumns, 8},
    {SeparableKernels::kTiledX, 1},  {SeparableKernels::kTiledX, 2},
    {SeparableKernels::kTiledX, 4},  {SeparableKernels::kTiledX, 8},
    {SeparableKernels::kTiledX, 16}};

using SeparableParam = std::tuple<ShapeCase, std::pair<SeparableKernels, int>>;

class SeparableEmulation : public ::testing::TestWithParam<SeparableParam> {};

TEST_P(SeparableEmulation, MatchesReference) {
  const auto& [shape, mode] = GetParam();
  const auto [pass_kernels, ko] = mode;
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    // Axes with a filter extent of 1 are skipped (no taps), as a user would.
    SeparableCase c = separable_case(
        shape, seed, [&](int a) { return shape.filter[a] > 1 || (a == 0 && seed % 3 == 0); },
        region);
    auto& [in, in_view, f, out_extent, out] = c;
    const VolumeView out_view = make_view(out.data(), shape.dims, out_extent);

    const detail::SeparableProblem p = make_separable_problem(in_view, out_view, f, op, region, b);
    const cuda_backend::SeparablePlan plan = cuda_backend::plan_separable(
        p, [&](int, int64_t, int64_t) { return ko; }, pass_kernels, ko);
    emulate_separable(plan, in.data(), out.data(), voxels(shape.dims, shape.volume),
                      (seed & 1) != 0);
    const std::vector<double> ref = reference_separable(in_view, f, op, b, region);
    EXPECT_LT(relative_l2_error(out, ref), kTolerance)
        << shape << " kernels=" << static_cast<int>(pass_kernels) << " KO=" << ko << " "
        << to_string(b) << " " << to_string(op) << " " << to_string(region) << " seed=" << seed;
  });
}

INSTANTIATE_TEST_SUITE_P(AllModes, SeparableEmulation,
                         ::testing::Combine(::testing::ValuesIn(shape_cases()),
                                            ::testing::ValuesIn(kSeparableModes)));

TEST(SeparablePlan, PingPongsThroughScratch) {
  std::vector<float> in(5 * 6 * 7 * 8, 1.0f), out(in.size());
  detail::SeparableProblem p;
  p.input = make_view<const float>(in.data(), 4, {5, 6, 7, 8});
  p.output = make_view(out.data(), 4, {5, 6, 7, 8});
  for (int a = 0; a < 4; ++a)
    p.taps[a] = {1.0f, 2.0f, 1.0f};
  const auto plan = cuda_backend::plan_separable(p, [](int, int64_t, int64_t) { return 4; });
  ASSERT_EQ(plan.passes.size(), 4u);
  EXPECT_EQ(plan.scratch_halves, 2);
  EXPECT_EQ(plan.passes[0].ko, 0);          // an x pass ...
  EXPECT_EQ(plan.passes[0].tiled_rows, 1);  // ... on the tiled kernel, 1 block row (y has 6)
  EXPECT_EQ(plan.passes[0].source, cuda_backend::kInputBuffer);
  for (size_t i = 1; i < plan.passes.size(); ++i) {
    EXPECT_EQ(plan.passes[i].source, plan.passes[i - 1].destination);
    EXPECT_NE(plan.passes[i].source, plan.passes[i].destination);
  }
  EXPECT_EQ(plan.passes.back().destination, cuda_backend::kOutputBuffer);
}

// The x pass takes the tiled kernel (32 block rows when y has >= 16 outputs, else 1) while its
// tile fits in shared memory, and the x-row kernel for longer filters; both against the reference.
TEST(SeparableXPass, TiledOrRowKernelByFilterLength) {
  struct Case {
    Index volume;
    int64_t k;
    int rows;
  };
  for (const Case& c :
       {Case{{70, 33, 3, 1}, 17, 32}, Case{{45, 7, 2, 1}, 9, 1}, Case{{400, 18, 1, 1}, 301, 0}}) {
    for (Boundary b : kBoundaries) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(3, c.volume), seed);
      const ConstVolumeView in_view = make_view(in.data(), 3, c.volume);
      SeparableFilter f;
      f.dims = 3;
      f.taps[0] = random_values(c.k, seed + 1);
      std::vector<float> out(in.size());
      poison(out);
      detail::SeparableProblem p;
      p.input = in_view;
      p.output = make_view(out.data(), 3, c.volume);
      p.boundary = b;
      p.taps[0] = f.taps[0];
      p.offset[0] = -(c.k / 2);
      const cuda_backend::SeparablePlan plan =
          cuda_backend::plan_separable(p, [](int, int64_t, int64_t) { return 1; });
      ASSERT_EQ(plan.passes.size(), 1u);
      EXPECT_EQ(plan.passes[0].tiled_rows, c.rows) << "k=" << c.k;
      emulate_separable(plan, in.data(), out.data(), voxels(3, c.volume), (seed & 1) != 0);
      const std::vector<double> ref =
          reference_separable(in_view, f, Operation::Correlation, b, OutputRegion::Same);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << "k=" << c.k << " " << to_string(b) << " seed=" << seed;
    }
  }
}

}  // namespace
}  // namespace ndconv::test
