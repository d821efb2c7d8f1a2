// The CUDA backend through the engine's public API (Backend::Cuda), against the float64
// reference: dims x boundary x convolution/correlation x region x filter extents (1, 2, 3, 4, 7,
// larger than the volume) x odd extents x every KO (and the automatic rule); large filters (taps
// in global memory); strided views; slabbing under a memory cap (option and environment) equal to
// one pass; abort between slabs; the resource report (no instantiation spills). Skipped with the
// reason when no usable GPU exists. The no-device path runs everywhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "cases.h"
#include "cuda/ko_rule.h"
#include "cuda/launch.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "require_gpu.h"
#include "scoped_env.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

constexpr double kTolerance = 1e-5;  // float32 lands near 1e-6
constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Replicate, Boundary::Mirror,
                                    Boundary::Periodic, Boundary::Reflect};

// What the CUDA backend is asked for beyond the options: the dense kernel family and the tuning
// (the engine's front end uses the defaults).
struct BackendChoice {
  cuda_backend::DenseKernel kernel = cuda_backend::DenseKernel::Auto;
  cuda_backend::Tuning tuning;
};

// Filters `in` densely on the GPU and returns the output; checks the report. With `choice`, through
// the CUDA backend with that kernel family and tuning, else through the engine's front end.
std::vector<float> gpu_dense(const ShapeCase& s, const std::vector<float>& in,
                             const std::vector<float>& taps, const Options& o,
                             RunReport* report_out = nullptr,
                             const BackendChoice* choice = nullptr) {
  const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
  const DenseFilter f{s.dims, s.filter, taps.data()};
  const Index out_extent = reference_output_extent(in_view, s.filter, o.region);
  std::vector<float> out(static_cast<size_t>(voxels(s.dims, out_extent)));
  poison(out);
  const VolumeView out_view = make_view(out.data(), s.dims, out_extent);
  RunReport r;
  if (choice == nullptr) {
    r = filter_dense(in_view, f, out_view, o);
  } else {
    std::vector<float> flipped;
    const detail::CorrelationProblem p =
        make_problem(in_view, out_view, f, o.operation, o.region, o.boundary, flipped);
    cuda_backend::DenseKernelRequest request;
    request.kernel = choice->kernel;
    request.outputs_per_thread = o.expert.outputs_per_thread;
    r.backend = Backend::Cuda;
    cuda_backend::run_dense(p, o, r, request, choice->tuning);
  }
  EXPECT_EQ(r.backend, Backend::Cuda);
  if (o.expert.outputs_per_thread != 0) {
    EXPECT_EQ(r.outputs_per_thread, o.expert.outputs_per_thread);
  }
  EXPECT_FALSE(r.outputs_per_thread_reason.empty());
  if (report_out)
    *report_out = r;
  return out;
}

TEST(CudaNoDevice, AutoFallsBackAndCudaThrows) {
  const CudaStatus status = cuda_status();
  EXPECT_FALSE(status.reason.empty());
  std::vector<float> in = random_values(8 * 6, fresh_seed()), out(8 * 6);
  const float tap = 1.0f;
  const DenseFilter f{2, {1, 1, 1, 1}, &tap};
  Options o;
  o.backend = Backend::Auto;
  const RunReport r = filter_dense(make_view<const float>(in.data(), 2, {8, 6}), f,
                                   make_view(out.data(), 2, {8, 6}), o);
  // So small a volume is the CPU's by the cost model (src/engine/backend_cost.h), GPU or not.
  EXPECT_EQ(r.backend, Backend::Cpu);
  EXPECT_NE(r.backend_reason.find("auto: CPU estimated faster"), std::string::npos)
      << r.backend_reason;
  if (status.usable) {
    EXPECT_FALSE(status.devices.empty());
    EXPECT_GT(status.runtime_version, 0);
  } else {
    o.backend = Backend::Cuda;
    EXPECT_THROW(filter_dense(make_view<const float>(in.data(), 2, {8, 6}), f,
                              make_view(out.data(), 2, {8, 6}), o),
                 InvalidArgument);
  }
}

using Param = std::tuple<ShapeCase, int /*ko, 0 = rule*/>;
class CudaDense : public ::testing::TestWithParam<Param> {};

TEST_P(CudaDense, MatchesReference) {
  NDCONV_REQUIRE_GPU();
  const auto& [shape, ko] = GetParam();
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(shape.dims, shape.volume), seed);
    const std::vector<float> taps = random_values(voxels(shape.dims, shape.filter), seed + 1);
    const std::vector<float> out = gpu_dense(shape, in, taps, cuda_options(op, b, region, ko));
    const DenseFilter f{shape.dims, shape.filter, taps.data()};
    const std::vector<double> ref =
        reference_dense(make_view(in.data(), shape.dims, shape.volume), f, op, b, region);
    EXPECT_LT(relative_l2_error(out, ref), kTolerance)
        << shape << " KO=" << ko << " " << to_string(b) << " " << to_string(op) << " "
        << to_string(region) << " seed=" << seed;
  });
}

INSTANTIATE_TEST_SUITE_P(AllKo, CudaDense,
                         ::testing::Combine(::testing::ValuesIn(shape_cases()),
                                            ::testing::Values(0, 1, 2, 4, 8, 16)));

class CudaSeparable : public ::testing::TestWithParam<Param> {};

// KO 0 (the rule): the column kernel, x fused into the first other pass; KO 8: the same at a
// forced KO; KO 1, 2, 4, 16 (no column instantiation): the tiled x pass and the blocked kernel.
TEST_P(CudaSeparable, MatchesReference) {
  NDCONV_REQUIRE_GPU();
  const auto& [shape, ko] = GetParam();
  for_each_request(shape, [&](Boundary b, Operation op, OutputRegion region) {
    const uint64_t seed = fresh_seed();
    SeparableCase c = separable_case(
        shape, seed, [&](int a) { return shape.filter[a] > 1 || seed % 3 == 0; }, region);
    auto& [in, in_view, f, out_extent, out] = c;
    const RunReport r = filter_separable(in_view, f, make_view(out.data(), shape.dims, out_extent),
                                         cuda_options(op, b, region, ko));
    EXPECT_EQ(r.backend, Backend::Cuda);
    const std::vector<double> ref = reference_separable(in_view, f, op, b, region);
    EXPECT_LT(relative_l2_error(out, ref), kTolerance)
        << shape << " KO=" << ko << " " << to_string(b) << " " << to_string(op) << " "
        << to_string(region) << " seed=" << seed;
  });
}

INSTANTIATE_TEST_SUITE_P(AllKo, CudaSeparable,
                         ::testing::Combine(::testing::ValuesIn(shape_cases()),
                                            ::testing::Values(0, 1, 2, 4, 8, 16)));

// A volume like the bench's Gaussian (two x tiles, three block tiles along y, two along z, 17 taps
// along x and y) through the staged and fused column forms: the shape cases above are too small to
// give them more than one tile along the filtered axis. The float64 reference runs one axis
// at a time (the dense outer product would take minutes here) and once for all forms.
TEST(CudaSeparableLarge, GaussianSizedVolumesInEveryColumnForm) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {256, 140, 72, 1}, {17, 17, 17, 1}};
  for (Boundary b : {Boundary::Zero, Boundary::Mirror}) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
    Index filter_extent;
    const SeparableFilter f = random_separable_filter(
        s, seed, [](int) { return true; }, filter_extent);
    const std::vector<double> ref =
        reference_separable_passes(in_view, f, Operation::Correlation, b);
    std::vector<float> out(in.size());
    poison(out);
    // KO 8, forced: the column kernel's passes (the automatic plan takes the slab kernel).
    const RunReport r =
        filter_separable(in_view, f, make_view(out.data(), s.dims, s.volume),
                         cuda_options(Operation::Correlation, b, OutputRegion::Same, 8));
    EXPECT_EQ(r.backend, Backend::Cuda);
    EXPECT_EQ(r.outputs_per_thread_reason.find("slab"), std::string::npos)
        << r.outputs_per_thread_reason;
    EXPECT_LT(relative_l2_error(out, ref), kTolerance) << to_string(b) << " seed=" << seed;
  }
}

// The fused x+y pass stages its raw rows by bulk copy exactly where column_bulk_unfit allows:
// its raw rows start 16-byte aligned (x offsets that are multiples of 4), and under a boundary
// other than zero every block has at most kFaceColumns face columns per step (two rows of 8 for
// 17 taps on a volume whose width is a multiple of 128; a block that reads far past the volume's
// last column has more). Every boundary gives the reference's result.
TEST(CudaSeparable, FusedRowsByBulkCopy) {
  NDCONV_REQUIRE_GPU();
  const bool bulk_device = cuda_status().devices.at(0).compute_capability_major >= 9;
  struct Case {
    ShapeCase shape;
    OutputRegion region;
    bool zero;   // bulk copies under the zero boundary
    bool other;  // ... and under the others
  };
  const Case cases[] = {// x offset -8: 16 face columns per block.
                        {{3, {256, 140, 20, 1}, {17, 17, 5, 1}}, OutputRegion::Same, true, true},
                        // Offset -4; the second block's columns reach 60 past the last.
                        {{3, {200, 70, 9, 1}, {9, 5, 3, 1}}, OutputRegion::Same, true, false},
                        // Offset -3: rows off a 16-byte boundary; offset 0 in the valid region.
                        {{3, {200, 70, 9, 1}, {7, 5, 3, 1}}, OutputRegion::Same, false, false},
                        {{3, {136, 30, 9, 1}, {7, 5, 3, 1}}, OutputRegion::Valid, true, false},
                        {{2, {300, 90, 1, 1}, {17, 9, 1, 1}}, OutputRegion::Same, true, false}};
  for (const Case& c : cases) {
    const ShapeCase& s = c.shape;
    for (Boundary b : kBoundaries) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
      const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
      Index filter_extent;
      const SeparableFilter f = random_separable_filter(
          s, seed, [&](int a) { return s.filter[a] > 1; }, filter_extent);
      const Index out_extent = reference_output_extent(in_view, filter_extent, c.region);
      // The dense reference would take minutes for the first case: one axis at a time there.
      const std::vector<double> ref =
          s.volume[0] == 256 ? reference_separable_passes(in_view, f, Operation::Correlation, b)
                             : reference_separable(in_view, f, Operation::Correlation, b, c.region);
      std::vector<float> out(static_cast<size_t>(voxels(s.dims, out_extent)));
      poison(out);
      const RunReport r = filter_separable(in_view, f, make_view(out.data(), s.dims, out_extent),
                                           cuda_options(Operation::Correlation, b, c.region, 0));
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << s << " " << to_string(b) << " " << to_string(c.region) << " seed=" << seed;
      const bool bulk = bulk_device && (b == Boundary::Zero ? c.zero : c.other);
      EXPECT_EQ(r.outputs_per_thread_reason.find("raw rows by bulk copy") != std::string::npos,
                bulk)
          << s << " " << to_string(b) << " " << to_string(c.region) << ": "
          << r.outputs_per_thread_reason;
    }
  }
}

TEST(CudaDenseLarge, FiltersAtTheLimitsUseGlobalTaps) {
  NDCONV_REQUIRE_GPU();
  for (const ShapeCase& s : {ShapeCase{3, {33, 9, 35, 1}, {31, 31, 31, 1}},
                             ShapeCase{4, {16, 5, 6, 17}, {15, 15, 15, 15}},
                             ShapeCase{2, {300, 41, 1, 1}, {31, 31, 1, 1}}}) {
    for (int ko : {0, 1, 16}) {
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
      const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
      RunReport r;
      const std::vector<float> out = gpu_dense(
          s, in, taps,
          cuda_options(Operation::Convolution, Boundary::Mirror, OutputRegion::Same, ko), &r);
      const DenseFilter f{s.dims, s.filter, taps.data()};
      const std::vector<double> ref =
          reference_dense(make_view(in.data(), s.dims, s.volume), f, Operation::Convolution,
                          Boundary::Mirror, OutputRegion::Same);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance) << s << " KO=" << ko << " seed=" << seed;
    }
  }
}

TEST(CudaDense, StridedViews) {
  NDCONV_REQUIRE_GPU();
  // A 3D volume inside a larger buffer (padding along x and y), output strided likewise.
  const Index ext{29, 13, 17, 1}, pad{35, 16, 17, 1};
  const uint64_t seed = fresh_seed();
  std::vector<float> big_in = random_values(pad[0] * pad[1] * pad[2], seed);
  std::vector<float> big_out(big_in.size());
  poison(big_out);
  ConstVolumeView in = make_view<const float>(big_in.data() + 3, 3, pad);
  VolumeView out = make_view(big_out.data() + 5, 3, pad);
  in.extent = ext;
  out.extent = ext;
  const std::vector<float> taps = random_values(5 * 3 * 4, seed + 1);
  const DenseFilter f{3, {5, 3, 4, 1}, taps.data()};
  const Options o = cuda_options(Operation::Convolution, Boundary::Periodic, OutputRegion::Same, 0);
  filter_dense(in, f, out, o);
  std::vector<float> got;
  for (int64_t z = 0; z < ext[2]; ++z)
    for (int64_t y = 0; y < ext[1]; ++y)
      for (int64_t x = 0; x < ext[0]; ++x)
        got.push_back(out.at({x, y, z, 0}));
  const auto ref =
      reference_dense(in, f, Operation::Convolution, Boundary::Periodic, OutputRegion::Same);
  EXPECT_LT(relative_l2_error(got, ref), kTolerance) << "seed=" << seed;
}

TEST(CudaDense, NanStaysInsideTheFootprint) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {70, 9, 37, 1}, {3, 3, 5, 1}};
  for (int ko : {1, 2, 4, 8, 16}) {
    const uint64_t seed = fresh_seed();
    std::vector<float> in = random_values(voxels(3, s.volume), seed);
    in[(18 * 9 + 4) * 70 + 40] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> taps = random_values(voxels(3, s.filter), seed + 1);
    const std::vector<float> out = gpu_dense(
        s, in, taps, cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same, ko));
    const DenseFilter f{3, s.filter, taps.data()};
    const auto ref = reference_dense(make_view<const float>(in.data(), 3, s.volume), f,
                                     Operation::Correlation, Boundary::Zero, OutputRegion::Same);
    EXPECT_EQ(nan_mask_mismatches(out, ref, 1e-5), 0) << "KO=" << ko << " seed=" << seed;
  }
}

// The tiled kernel with 32 block rows (axis 1 of at least 16 outputs, or y of a 2D image; the 3D
// and 4D shape cases above are mostly narrower and take the 1-row shape), for every boundary, with
// the blocked kernel (DenseKernel::Blocked) as a second opinion on the same input.
TEST(CudaDense, TiledBlockRowsAndKernelSelection) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase shapes[] = {{3, {70, 40, 21, 1}, {5, 3, 4, 1}},
                              {3, {37, 33, 9, 1}, {11, 11, 11, 1}},
                              {4, {35, 17, 5, 11}, {3, 4, 3, 5}},
                              {2, {100, 50, 1, 1}, {9, 7, 1, 1}}};
  for (const ShapeCase& s : shapes) {
    for (Boundary b : kBoundaries) {
      for (int ko : {0, 1, 4}) {  // the tiled kernel's KO (a forced 8 takes the blocked kernel)
        if (s.dims == 2 && ko != 0)
          continue;  // a forced KO (along the last axis) takes the blocked kernel in 2D
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
        const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
        const Options o = cuda_options(Operation::Convolution, b, OutputRegion::Same, ko);
        RunReport r;
        const std::vector<float> out = gpu_dense(s, in, taps, o, &r);
        const DenseFilter f{s.dims, s.filter, taps.data()};
        const auto ref = reference_dense(make_view<const float>(in.data(), s.dims, s.volume), f,
                                         Operation::Convolution, b, OutputRegion::Same);
        EXPECT_LT(relative_l2_error(out, ref), kTolerance)
            << s << " KO=" << ko << " " << to_string(b) << " seed=" << seed;
        std::string notes;
        for (const std::string& n : r.notes)
          notes += n + "\n";
        EXPECT_NE(notes.find("dense plan: tiled"), std::string::npos) << notes;
        // 2D filters from 9 taps wide take the wide shape (TX 16, 64 block rows: prefer_wide_x).
        const char* rows =
            cuda_backend::prefer_wide_x(s.dims, s.filter[0]) ? "64 block row" : "32 block row";
        EXPECT_NE(r.outputs_per_thread_reason.find(rows), std::string::npos)
            << r.outputs_per_thread_reason;

        RunReport rb;
        BackendChoice blocked;
        blocked.kernel = cuda_backend::DenseKernel::Blocked;
        const std::vector<float> out_blocked = gpu_dense(s, in, taps, o, &rb, &blocked);
        EXPECT_LT(relative_l2_error(out_blocked, ref), kTolerance) << s << " blocked";
        notes.clear();
        for (const std::string& n : rb.notes)
          notes += n + "\n";
        EXPECT_NE(notes.find("dense plan: blocked"), std::string::npos) << notes;
      }
    }
  }
}

// The tiled kernel's two ways of loading input planes: the bulk tensor copy (sm_90) where rows,
// slices and frames start 16 bytes apart (x a multiple of 4 floats here) and every box starts on a
// 16-byte boundary along x (the valid region, or the same region with 1, 9, 17, ... taps along x);
// thread-by-thread copies elsewhere. For the other boundaries the bulk launches patch their face
// tiles' halo (cuda/tiled/tiled_halo.h) by default where tiles have one plane (2D) or the face
// shell is small (cuda_backend::tiled_border_pays), else pad their input; without a halo
// (Tuning::tiled_max_halo_slots 0) they correct the face shell with the border kernel (with
// Tuning::border_fmas_per_voxel large) or pad the input (with it 0). Every boundary, tiles at
// every face, planes outside the volume (filters longer than the last axis), the valid region (no
// output reads outside: no halo), 2D to 4D.
TEST(CudaDense, TiledBulkAndCopiedPlanes) {
  NDCONV_REQUIRE_GPU();
  const bool bulk_device = cuda_status().devices.at(0).compute_capability_major >= 9;
  struct Case {
    ShapeCase shape;
    bool rows_aligned;  // rows 16-byte multiples
  };
  const Case cases[] = {{{3, {68, 40, 21, 1}, {9, 3, 4, 1}}, true},
                        {{3, {36, 33, 9, 1}, {17, 11, 5, 1}}, true},
                        {{3, {40, 36, 3, 1}, {9, 5, 9, 1}}, true},
                        {{4, {36, 17, 5, 11}, {9, 4, 3, 5}}, true},
                        {{4, {36, 40, 5, 11}, {9, 4, 3, 5}}, true},
                        {{2, {100, 50, 1, 1}, {17, 7, 1, 1}}, true},
                        {{2, {64, 40, 1, 1}, {3, 3, 1, 1}}, true},
                        {{3, {37, 33, 9, 1}, {9, 5, 5, 1}}, false},
                        // Widths whose boxes start off a 16-byte boundary: 3, 2, 1 and 2 lead taps.
                        {{3, {68, 40, 21, 1}, {11, 3, 4, 1}}, true},
                        {{3, {36, 33, 9, 1}, {5, 5, 3, 1}}, true},
                        {{4, {36, 17, 5, 11}, {7, 3, 3, 4}}, true},
                        {{3, {40, 36, 7, 1}, {4, 3, 3, 1}}, true}};
  int border_runs = 0;  // with the border kernel wherever it fits
  for (const Case& c : cases) {
    const ShapeCase& s = c.shape;
    for (Boundary b : kBoundaries) {
      for (OutputRegion region : {OutputRegion::Same, OutputRegion::Valid}) {
        if (region == OutputRegion::Valid && !valid_fits(s))
          continue;
        const uint64_t seed = fresh_seed();
        const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
        const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
        const Options o = cuda_options(Operation::Correlation, b, region, 0);
        const DenseFilter f{s.dims, s.filter, taps.data()};
        const auto ref = reference_dense(make_view<const float>(in.data(), s.dims, s.volume), f,
                                         Operation::Correlation, b, region);
        // The same region reads K0 / 2 columns left of each output.
        const int lead = region == OutputRegion::Valid ? 0 : (4 - s.filter[0] / 2 % 4) % 4;
        for (const std::string mode : {"", "pad", "border"}) {
          if (mode != "" && b == Boundary::Zero)
            continue;
          BackendChoice choice;
          if (mode != "")
            choice.tuning.tiled_max_halo_slots = 0;
          if (mode == "pad")
            choice.tuning.border_fmas_per_voxel = 0;
          if (mode == "border")
            choice.tuning.border_fmas_per_voxel = 1e30;
          RunReport r;
          const std::vector<float> out = gpu_dense(s, in, taps, o, &r, &choice);
          std::string notes;
          for (const std::string& n : r.notes)
            notes += n + "\n";
          EXPECT_LT(relative_l2_error(out, ref), kTolerance)
              << s << " " << to_string(b) << " " << to_string(region) << " " << mode
              << " seed=" << seed << "\n"
              << notes;
          ASSERT_NE(notes.find("dense plan: tiled"), std::string::npos) << notes;
          // The one-row block shape's tiles (128 threads x 8 outputs along x) are wider than a
          // box of the copy engine (256 elements).
          const bool narrow_box = notes.find("block 128x1") == std::string::npos;
          // Only the 3D/4D default shape (TX 8, KO 4, 32 block rows) skips lead taps.
          const bool leads = notes.find("KO=4 block 4x32") != std::string::npos;
          const bool can_bulk = c.rows_aligned && (lead == 0 || leads) && narrow_box && bulk_device;
          // The same region's face tiles read outside the volume (every case's filter is wider
          // than 1 along x and axis 1); no output of the valid region does.
          const bool shell = can_bulk && b != Boundary::Zero && region == OutputRegion::Same;
          const bool bulk = can_bulk;
          EXPECT_EQ(notes.find(" bulk") != std::string::npos, bulk) << s << "\n" << notes;
          EXPECT_EQ(notes.find(" lead " + std::to_string(lead)) != std::string::npos,
                    bulk && lead > 0)
              << s << "\n"
              << notes;
          const bool halo = notes.find(" halo") != std::string::npos;
          const bool padded = notes.find(" padded") != std::string::npos;
          const bool border = notes.find(" border") != std::string::npos;
          std::ostringstream case_text;
          case_text << s << " " << to_string(b) << " " << to_string(region) << " " << mode << "\n"
                    << notes;
          const std::string what = case_text.str();
          // By default the halo (always in 2D; in 3D and 4D where the face shell is small, else
          // the padded input), on request the border kernel or the padded input.
          const bool default_mode = mode == "";
          EXPECT_EQ(halo || padded || border, shell) << what;
          EXPECT_TRUE(!halo || (shell && default_mode)) << what;
          if (shell && default_mode && s.dims == 2) {
            EXPECT_TRUE(halo) << what;
          }
          EXPECT_EQ(padded || border, shell && (mode == "pad" || mode == "border" ||
                                                (default_mode && s.dims > 2 && !halo)))
              << what;
          EXPECT_FALSE(border && mode == "pad") << what;
          border_runs += border && mode == "border";
        }
      }
    }
  }
  if (bulk_device) {
    EXPECT_GT(border_runs, 0);
  }
}

// A small filter on a volume large enough that correcting the face shell with the border kernel
// costs less than padding the input (cuda_backend::tiled_border_pays): the dense launcher's default
// for every boundary other than zero is the halo (cuda/tiled/tiled_halo.h; copied within the plane
// for replicate and mirror, from the opposite faces' boxes for periodic); without a halo
// (Tuning::tiled_max_halo_slots 0) the border kernel, with Tuning::border_fmas_per_voxel 0 too the
// padded input. All match the reference.
TEST(CudaDense, HaloByDefaultBorderOrPadOnRequest) {
  NDCONV_REQUIRE_GPU();
  if (cuda_status().devices.at(0).compute_capability_major < 9)
    GTEST_SKIP() << "the bulk copy needs compute capability 9.0";
  const ShapeCase s{3, {256, 128, 40, 1}, {5, 5, 5, 1}};
  for (Boundary b : {Boundary::Replicate, Boundary::Mirror, Boundary::Periodic}) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
    const Options o = cuda_options(Operation::Correlation, b, OutputRegion::Same, 0);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    const auto ref = reference_dense(make_view<const float>(in.data(), s.dims, s.volume), f,
                                     Operation::Correlation, b, OutputRegion::Same);
    for (const std::string expected : {" halo", " border", " padded"}) {
      const bool halo = expected == " halo";
      BackendChoice choice;
      if (!halo)
        choice.tuning.tiled_max_halo_slots = 0;
      if (expected == " padded")
        choice.tuning.border_fmas_per_voxel = 0;
      RunReport r;
      const std::vector<float> out = gpu_dense(s, in, taps, o, &r, &choice);
      std::string notes;
      for (const std::string& n : r.notes)
        notes += n + "\n";
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << to_string(b) << expected << " seed=" << seed << "\n"
          << notes;
      EXPECT_NE(notes.find(halo ? " halo" : expected), std::string::npos) << notes;
      // Replicate and mirror copy the halo within the plane; periodic from the opposite faces'
      // boxes.
      if (halo) {
        EXPECT_EQ(notes.find(" halo local") != std::string::npos, b != Boundary::Periodic)
            << to_string(b) << "\n"
            << notes;
        EXPECT_EQ(notes.find(" halo wrap") != std::string::npos, b == Boundary::Periodic)
            << to_string(b) << expected << "\n"
            << notes;
      }
    }
  }
}

// The report's "dense plan: ..." note, and the plan's grid along x.
std::string dense_plan(const RunReport& r) {
  for (const std::string& n : r.notes) {
    if (n.rfind("dense plan: ", 0) == 0)
      return n;
  }
  return "(no dense plan)";
}
int dense_plan_grid(const RunReport& r) {
  const std::string plan = dense_plan(r);
  const size_t at = plan.find(" grid ");
  return at == std::string::npos ? -1 : std::atoi(plan.c_str() + at + 6);
}

// A grid of the blocks the device holds walks the tiles in rounds (block b: b, b + grid, ...; the
// next tile's first plane copied in during the last plane of one): on a volume of several rounds
// and a partial one, the launch matches the float64 reference and gives bit for bit the same
// output twice and from two host threads at once. Zero, a halo copied within the plane (mirror)
// and one from the opposite faces' boxes (periodic) take the next tile at different places.
TEST(CudaDense, TilesWalkedInRoundsMatchOneBlockPerTile) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {256, 256, 164, 1}, {3, 3, 3, 1}};  // 2624 tiles of 32 x 32 x 4
  for (Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
    const uint64_t seed = fresh_seed();
    const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
    const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
    const Options o = cuda_options(Operation::Correlation, b, OutputRegion::Same, 0);
    RunReport first_report;
    const std::vector<float> first = gpu_dense(s, in, taps, o, &first_report);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    const auto ref = reference_dense(make_view<const float>(in.data(), s.dims, s.volume), f,
                                     Operation::Correlation, b, OutputRegion::Same);
    EXPECT_LT(relative_l2_error(first, ref), kTolerance) << to_string(b) << " seed=" << seed;
    std::vector<float> outs[2][2];
    RunReport reports[2];
    auto calls = [&](int k) {
      for (int run = 0; run < 2; ++run)
        outs[k][run] = gpu_dense(s, in, taps, o, &reports[k]);
    };
    std::thread other(calls, 1);
    calls(0);
    other.join();
    for (int k = 0; k < 2; ++k) {
      const int grid = dense_plan_grid(reports[k]);
      EXPECT_TRUE(grid < 2624 && 2624 % grid != 0)
          << "not several rounds and a partial one: " << dense_plan(reports[k]);
      for (int run = 0; run < 2; ++run) {
        EXPECT_EQ(std::memcmp(outs[k][run].data(), first.data(), first.size() * sizeof(float)), 0)
            << to_string(b) << " thread " << k << " run " << run << " seed=" << seed;
      }
    }
  }
}

// The lead-tap shape's launches take the kernel whose row code is fixed for their filter width
// (3, 5, ..., 15 taps along x: kernels::TiledFixedRowsList), and other widths the shape's kernel
// for every width; with zero, without halo code, with mirror and periodic (wrap boxes), with the
// halo copied within the plane. All against the reference.
TEST(CudaDense, FixedRowCodeForOddWidthsUpTo15) {
  NDCONV_REQUIRE_GPU();
  if (cuda_status().devices.at(0).compute_capability_major < 9)
    GTEST_SKIP() << "lead taps come with the bulk copy (compute capability 9.0)";
  for (const int k0 : {3, 5, 11, 15, 17}) {
    for (const Boundary b : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
      const ShapeCase s{3, {96, 64, 20, 1}, {k0, 5, 3, 1}};
      const uint64_t seed = fresh_seed();
      const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
      const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
      const Options o = cuda_options(Operation::Correlation, b, OutputRegion::Same, 0);
      RunReport r;
      const std::vector<float> out = gpu_dense(s, in, taps, o, &r);
      const DenseFilter f{s.dims, s.filter, taps.data()};
      const auto ref = reference_dense(make_view<const float>(in.data(), s.dims, s.volume), f,
                                       Operation::Correlation, b, OutputRegion::Same);
      const std::string plan = dense_plan(r);
      EXPECT_LT(relative_l2_error(out, ref), kTolerance)
          << k0 << " " << to_string(b) << " seed=" << seed << "\n"
          << plan;
      EXPECT_NE(plan.find("tiled"), std::string::npos) << plan;
      EXPECT_EQ(plan.find(" rows fixed") != std::string::npos, k0 <= 15)
          << to_string(b) << ": " << plan;
    }
  }
}

// Launches skip the upload of taps the device already holds (src/cuda/uploaded_taps.h). A
// sequence of filters whose taps repeat, change by one tap, and alternate between the tiled
// kernel (global taps), the blocked kernel (constant taps) and a separable filter (both), each on
// the stream of its own call, must each match the reference: a stale buffer or an upload the
// launch does not wait for gives another filter's result.
TEST(CudaTaps, RepeatedAndChangedTapsReachTheKernels) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {40, 33, 21, 1}, {5, 3, 7, 1}};
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
  const std::vector<float> a = random_values(voxels(s.dims, s.filter), seed + 1);
  const std::vector<float> b = random_values(voxels(s.dims, s.filter), seed + 2);
  std::vector<float> a_changed = a;
  a_changed.back() = -a_changed.back();
  const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
  const Options o = cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same, 0);
  auto check_dense = [&](const std::vector<float>& taps, cuda_backend::DenseKernel kernel,
                         const char* what) {
    BackendChoice choice;
    choice.kernel = kernel;
    const std::vector<float> out = gpu_dense(s, in, taps, o, nullptr, &choice);
    const DenseFilter f{s.dims, s.filter, taps.data()};
    EXPECT_LT(relative_l2_error(out, reference_dense(in_view, f, Operation::Correlation,
                                                     Boundary::Zero, OutputRegion::Same)),
              kTolerance)
        << what << " seed=" << seed;
  };
  auto check_separable = [&](uint64_t taps_seed) {
    Index filter_extent;
    const SeparableFilter f = random_separable_filter(
        s, taps_seed, [](int) { return true; }, filter_extent);
    std::vector<float> out(in.size());
    poison(out);
    filter_separable(in_view, f, make_view(out.data(), s.dims, s.volume), o);
    EXPECT_LT(relative_l2_error(out, reference_separable(in_view, f, Operation::Correlation,
                                                         Boundary::Zero, OutputRegion::Same)),
              kTolerance)
        << "separable seed=" << taps_seed;
  };
  for (const cuda_backend::DenseKernel kernel :
       {cuda_backend::DenseKernel::Auto, cuda_backend::DenseKernel::Blocked}) {
    check_dense(a, kernel, "a");
    check_dense(a, kernel, "a again");
    check_dense(b, kernel, "b");
    check_dense(a, kernel, "a after b");
    check_dense(a_changed, kernel, "a with its last tap negated");
    check_separable(seed + 3);
    check_dense(a, kernel, "a after a separable filter");
    check_separable(seed + 3);
    check_separable(seed + 4);
  }
}

TEST(CudaDense, RejectsKoWithoutInstantiation) {
  NDCONV_REQUIRE_GPU();
  std::vector<float> in = random_values(16 * 16, fresh_seed()), out(16 * 16);
  const float tap = 1.0f;
  const DenseFilter f{2, {1, 1, 1, 1}, &tap};
  Options o = cuda_options(Operation::Correlation, Boundary::Zero, OutputRegion::Same, 3);
  try {
    filter_dense(make_view<const float>(in.data(), 2, {16, 16}), f,
                 make_view(out.data(), 2, {16, 16}), o);
    FAIL() << "KO 3 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("1, 2, 4, 8, 16"), std::string::npos) << e.what();
  }
}

// Slabbing: the same request with a memory cap (option or environment) equals one pass.
struct SlabCase {
  ShapeCase shape;
  Boundary boundary;
  OutputRegion region;
};

std::ostream& operator<<(std::ostream& os, const SlabCase& c) {
  return os << c.shape << " " << to_string(c.boundary) << " " << to_string(c.region);
}

class CudaSlabs : public ::testing::TestWithParam<SlabCase> {};

TEST_P(CudaSlabs, EqualOnePass) {
  NDCONV_REQUIRE_GPU();
  const SlabCase& c = GetParam();
  const ShapeCase& s = c.shape;
  const uint64_t seed = fresh_seed();
  const std::vector<float> in = random_values(voxels(s.dims, s.volume), seed);
  const std::vector<float> taps = random_values(voxels(s.dims, s.filter), seed + 1);
  Options o = cuda_options(Operation::Convolution, c.boundary, c.region, 0);
  RunReport one;
  const std::vector<float> whole = gpu_dense(s, in, taps, o, &one);
  EXPECT_EQ(one.slabs, 1);
  // A cap of about a fifth of the volume's input and output.
  const size_t cap = static_cast<size_t>(voxels(s.dims, s.volume)) * sizeof(float) * 2 / 5;

  o.device_memory_cap = cap;
  int progress_calls = 0;
  o.progress = [&](double f) {
    EXPECT_GT(f, 0.0);
    EXPECT_LT(f, 1.0);
    ++progress_calls;
    return true;
  };
  RunReport sliced;
  const std::vector<float> by_option = gpu_dense(s, in, taps, o, &sliced);
  EXPECT_GT(sliced.slabs, 2);
  EXPECT_EQ(progress_calls, sliced.slabs - 1);

  o.device_memory_cap = 0;
  o.progress = nullptr;
  RunReport by_env_report;
  std::vector<float> by_env;
  {
    const ScopedEnv cap_env("NDCONV_DEVICE_MEMORY_CAP", (std::to_string(cap / 1024) + "K").c_str());
    by_env = gpu_dense(s, in, taps, o, &by_env_report);
  }
  EXPECT_GT(by_env_report.slabs, 2);

  const DenseFilter f{s.dims, s.filter, taps.data()};
  const auto ref = reference_dense(make_view(in.data(), s.dims, s.volume), f,
                                   Operation::Convolution, c.boundary, c.region);
  std::vector<double> whole_d(whole.begin(), whole.end());
  EXPECT_LT(relative_l2_error(by_option, whole_d), 1e-6) << s << " seed=" << seed;
  EXPECT_LT(relative_l2_error(by_env, whole_d), 1e-6) << s << " seed=" << seed;
  EXPECT_LT(relative_l2_error(by_option, ref), kTolerance) << s << " seed=" << seed;

  // Separable, same cap: equal to one pass as well.
  SeparableFilter sf;
  sf.dims = s.dims;
  for (int a = 0; a < s.dims; ++a)
    sf.taps[a] = positive_taps(s.filter[a], seed + 11 + a);
  const ConstVolumeView in_view = make_view(in.data(), s.dims, s.volume);
  const Index out_extent = reference_output_extent(in_view, s.filter, c.region);
  std::vector<float> sep(static_cast<size_t>(voxels(s.dims, out_extent)));
  poison(sep);
  o.device_memory_cap = cap * 2;  // the separable path also holds scratch
  const RunReport sr = filter_separable(in_view, sf, make_view(sep.data(), s.dims, out_extent), o);
  EXPECT_GT(sr.slabs, 1);
  const auto sref = reference_separable(in_view, sf, Operation::Convolution, c.boundary, c.region);
  EXPECT_LT(relative_l2_error(sep, sref), kTolerance) << s << " seed=" << seed;
}

INSTANTIATE_TEST_SUITE_P(
    CapForcesSlabs, CudaSlabs,
    ::testing::Values(
        SlabCase{{2, {301, 211, 1, 1}, {5, 9, 1, 1}}, Boundary::Mirror, OutputRegion::Same},
        SlabCase{{3, {64, 40, 57, 1}, {3, 5, 7, 1}}, Boundary::Zero, OutputRegion::Same},
        SlabCase{{3, {64, 40, 57, 1}, {3, 5, 6, 1}}, Boundary::Periodic, OutputRegion::Valid},
        SlabCase{{4, {20, 17, 9, 31}, {3, 3, 3, 4}}, Boundary::Replicate, OutputRegion::Same}));

TEST(CudaSlabs, ProgressCanAbort) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {64, 40, 57, 1}, {3, 3, 3, 1}};
  const std::vector<float> in = random_values(voxels(3, s.volume), fresh_seed());
  const std::vector<float> taps = random_values(27, fresh_seed());
  Options o = cuda_options(Operation::Convolution, Boundary::Zero, OutputRegion::Same, 0);
  o.device_memory_cap = 64 * 1024;
  o.progress = [](double) { return false; };
  EXPECT_THROW(gpu_dense(s, in, taps, o), Aborted);
}

TEST(CudaSlabs, CapTooSmallIsAClearError) {
  NDCONV_REQUIRE_GPU();
  const ShapeCase s{3, {64, 40, 57, 1}, {3, 3, 3, 1}};
  const std::vector<float> in = random_values(voxels(3, s.volume), fresh_seed());
  const std::vector<float> taps = random_values(27, fresh_seed());
  Options o = cuda_options(Operation::Convolution, Boundary::Zero, OutputRegion::Same, 0);
  o.device_memory_cap = 1024;
  EXPECT_THROW(gpu_dense(s, in, taps, o), InvalidArgument);
}

TEST(CudaResources, NoInstantiationSpills) {
  NDCONV_REQUIRE_GPU();
  const auto variants = cuda_backend::dense_variants(0, 3);
  ASSERT_EQ(variants.size(), 5u);
  for (const auto& v : variants) {
    EXPECT_EQ(v.local_bytes, 0u) << "KO " << v.outputs_per_thread;
    EXPECT_GT(v.blocks_per_sm, 0) << "KO " << v.outputs_per_thread;
    std::printf("KO %2d: %3d registers, %zu local bytes, %d blocks/SM of %d, occupancy %.3f\n",
                v.outputs_per_thread, v.registers_per_thread, v.local_bytes, v.blocks_per_sm,
                v.block_threads, v.occupancy);
  }
  const auto tiled = cuda_backend::tiled_variants(0);
  // The table's, and the fixed row code of 3, 5, ..., 15 taps without a halo and with one copied
  // within the plane.
  ASSERT_EQ(tiled.size(), 5u + 2u * 7u);
  for (size_t i = 0; i < tiled.size(); ++i) {
    const auto& v = tiled[i];
    // The fixed-row kernels spill a little, once per tile (cuda/launch.h).
    EXPECT_LE(v.local_bytes, i < 5 ? 0u : cuda_backend::kTiledFixedRowsLocalBytes)
        << "tiled KO " << v.outputs_per_thread << " (entry " << i << ")";
    EXPECT_GT(v.blocks_per_sm, 0) << "tiled KO " << v.outputs_per_thread;
    std::printf(
        "tiled KO %d (dispatch-table order), %d threads: %3d registers, %zu local bytes, "
        "%d blocks/SM, "
        "occupancy %.3f\n",
        v.outputs_per_thread, v.block_threads, v.registers_per_thread, v.local_bytes,
        v.blocks_per_sm, v.occupancy);
  }
}

}  // namespace
}  // namespace ndconv::test
