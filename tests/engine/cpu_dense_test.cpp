// The CPU backend's dense path against the float64 reference, over dimension x volume shape x
// boundary x filter extents (one test each); inside each test convolution and correlation,
// `same` and `valid`, every instruction set this CPU runs, every blocking factor, contiguous views
// on one thread and strided views on three threads. Fresh random data every run (the seed is
// printed on failure; replay with NDCONV_TEST_SEED), outputs poisoned with NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "cpu/blocking_rule.h"
#include "cpu/isa_dispatch.h"
#include "cpu/kernel_set.h"
#include "cpu/tuning.h"
#include "cpu_cases.h"
#include "every_isa_and_layout.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

class CpuDense : public ::testing::TestWithParam<CaseParam> {};

// Whether the blocking rule chose a ring of accumulator strips (blocking_rule.h).
bool ran_ring(const RunReport& report) {
  return report.outputs_per_thread_reason.rfind("automatic: a ring of", 0) == 0;
}

TEST_P(CpuDense, MatchesFloat64Reference) {
  const auto [dims, shape, boundary, filter_case] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Index extent = volume_shape(dims, shape);
  const int64_t limit = dims == 4 ? kMaxDenseExtent4D : kMaxDenseExtent3D;
  const Index k = filter_extent(filter_case, dims, extent, limit);
  const std::vector<float> values = random_values(count_of(dims, extent), seed);
  DenseFilter filter;
  filter.dims = dims;
  filter.extent = k;
  const std::vector<float> taps = random_taps(filter.tap_count(), seed ^ 0x5eed);
  filter.taps = taps.data();
  const ConstVolumeView input = make_view(values.data(), dims, extent);
  StridedBuffer strided_input(dims, extent, 2);
  strided_input.fill(values);

  for (const auto& [operation, region] : {std::pair(Operation::Convolution, OutputRegion::Same),
                                          std::pair(Operation::Convolution, OutputRegion::Valid),
                                          std::pair(Operation::Correlation, OutputRegion::Same),
                                          std::pair(Operation::Correlation, OutputRegion::Valid)}) {
    SCOPED_TRACE(std::string(to_string(operation)) + ", region " + to_string(region));
    bool fits = true;
    for (int a = 0; a < dims; ++a)
      fits = fits && k[a] <= extent[a];
    if (region == OutputRegion::Valid && !fits) {
      EXPECT_THROW(output_geometry(dims, extent, k, operation, region), InvalidArgument);
      continue;
    }
    const float value = test_boundary_value(boundary, seed);
    const std::vector<double> reference =
        reference_dense(input, filter, operation, boundary, region, value);
    const OutputGeometry g = output_geometry(dims, extent, k, operation, region);
    ASSERT_EQ(g.extent, reference_output_extent(input, k, region));
    Options options;
    options.operation = operation;
    options.boundary = boundary;
    options.boundary_value = value;
    options.region = region;
    check_every_isa_and_layout(
        input, strided_input, g.extent, options, reference,
        [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
          return filter_dense(in, filter, out, o);
        },
        [](const RunReport& report, int factor) {
          EXPECT_EQ(report.threads, 1);
          if (factor != 0) {
            EXPECT_EQ(report.outputs_per_thread, factor);
          }
        });
    if (HasFailure())
      return;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, CpuDense, all_cases(), case_name);

// Volumes whose padded copy exceeds the limit are processed in slabs along the last axis; a tiny
// limit (cpu_backend::Tuning::pad_limit_bytes) forces one block per slab, which must give the same
// result.
TEST(CpuDenseSlabs, SlabsAlongTheLastAxisMatchTheReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  cpu_backend::Tuning tiny;
  tiny.pad_limit_bytes = 1;
  for (int dims : {2, 3, 4}) {
    const Index extent = volume_shape(dims, 0);
    const Index k = filter_extent(FilterCase::Mixed, dims, extent, kMaxDenseExtent4D);
    const std::vector<float> values = random_values(count_of(dims, extent), seed + dims);
    DenseFilter filter;
    filter.dims = dims;
    filter.extent = k;
    const std::vector<float> taps = random_taps(filter.tap_count(), seed);
    filter.taps = taps.data();
    const ConstVolumeView input = make_view(values.data(), dims, extent);
    for (Boundary boundary : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic}) {
      for (int factor : {0, 1, 4}) {  // 0: automatic, a ring of k3 columns where it pays
        SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary) + ", B " +
                     std::to_string(factor));
        Options options;
        options.backend = Backend::Cpu;
        options.operation = Operation::Correlation;
        options.boundary = boundary;
        options.expert.outputs_per_thread = factor;
        std::vector<float> out(values.size());
        poison(out);
        detail::CorrelationProblem p;  // correlation, same region: reads from -k / 2
        p.input = input;
        p.output = make_view(out.data(), dims, extent);
        p.filter_extent = k;
        p.taps = taps.data();
        p.boundary = boundary;
        for (int a = 0; a < dims; ++a)
          p.offset[a] = -(k[a] / 2);
        RunReport report;
        cpu_backend::run_dense(p, options, report, tiny);
        // A ring's column, like a block, is no longer than one slab holds: one output here.
        const int64_t item = ran_ring(report) ? 1 : report.outputs_per_thread;
        EXPECT_EQ(report.slabs, static_cast<int>((extent[dims - 1] + item - 1) / item));
        EXPECT_LT(relative_l2_error(out, reference_dense(input, filter, options.operation, boundary,
                                                         options.region)),
                  kTolerance);
      }
    }
  }
}

// Random values of `extent` and a random dense filter of extents `k` (random_taps).
struct RandomDense {
  RandomDense(int dims, const Index& extent, const Index& k, uint64_t seed)
      : values(random_values(count_of(dims, extent), seed)),
        taps(random_taps(DenseFilter{dims, k, nullptr}.tap_count(), ~seed)),
        filter{dims, k, taps.data()},
        input(make_view(static_cast<const float*>(values.data()), dims, extent)) {}
  RandomDense(const RandomDense&) = delete;
  RandomDense& operator=(const RandomDense&) = delete;
  const std::vector<float> values, taps;
  const DenseFilter filter;
  const ConstVolumeView input;
};

// Rows of every length from one vector to several strips: the kernels cover a row with strips of
// W vectors and one narrower strip for the rest, its last vector partial; each length against
// the reference and, through check_every_isa_and_layout, every blocking factor bit for bit
// against the others, on 2D, 3D and 4D volumes whose blocked axis is no multiple of the factors.
TEST(CpuDenseRows, EveryRowLengthAndStripWidth) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int64_t nx : {15, 16, 17, 33, 47, 48, 63, 64, 65, 81, 100, 113, 127, 128, 129, 160, 199}) {
    for (int dims : {2, 3, 4}) {
      SCOPED_TRACE("x extent " + std::to_string(nx) + ", " + std::to_string(dims) + "D");
      const Index extent =
          dims == 2 ? Index{nx, 11, 1, 1} : (dims == 3 ? Index{nx, 3, 13, 1} : Index{nx, 2, 3, 9});
      const Index k =
          dims == 2 ? Index{5, 6, 1, 1} : (dims == 3 ? Index{3, 2, 5, 1} : Index{2, 3, 1, 4});
      const RandomDense c(dims, extent, k, seed + nx);
      const ConstVolumeView& input = c.input;
      const DenseFilter& filter = c.filter;
      StridedBuffer strided_input(dims, extent, 2);
      strided_input.fill(c.values);
      Options options;
      options.boundary = nx % 2 ? Boundary::Reflect : Boundary::Zero;
      check_every_isa_and_layout(
          input, strided_input, extent, options,
          reference_dense(input, filter, options.operation, options.boundary, options.region),
          [&](const ConstVolumeView& in, const VolumeView& out, const Options& o) {
            return filter_dense(in, filter, out, o);
          },
          [](const RunReport&, int) {});
      if (HasFailure())
        return;
    }
  }
}

// The ring kernels (a ring of k3 accumulator strips along the last axis, columns of outputs per
// work item) bit for bit against blocks of one output: every k3 they are compiled for (and one
// either side, which takes blocks), columns
// cut into pieces for the threads (2D: one column of (m1, m2), so the last axis is cut) with a
// short last piece, on 1 to 5 threads, every boundary, every instruction set whose rule picks
// them.
TEST(CpuDenseRing, ColumnsMatchSingleOutputBlocksBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rings = 0;
  for (const std::string& isa : available_isas()) {
    ScopedIsa use(isa.c_str());
    for (int dims : {2, 3, 4}) {
      for (int64_t k3 = cpu::kMinRingTaps - 1; k3 <= cpu::kMaxRingTaps + 1; ++k3) {
        const Index extent = dims == 2 ? Index{37, 61, 1, 1}
                                       : (dims == 3 ? Index{21, 5, 29, 1} : Index{19, 3, 4, 23});
        const Index k =
            dims == 2 ? Index{3, k3, 1, 1} : (dims == 3 ? Index{2, 3, k3, 1} : Index{3, 2, 1, k3});
        const RandomDense c(dims, extent, k, seed + k3);
        const ConstVolumeView& input = c.input;
        const DenseFilter& filter = c.filter;
        const std::vector<float>& values = c.values;
        for (Boundary boundary : kEveryBoundary) {
          SCOPED_TRACE(isa + ", " + std::to_string(dims) + "D, k3 " + std::to_string(k3) + ", " +
                       to_string(boundary));
          Options options;
          options.backend = Backend::Cpu;
          options.boundary = boundary;
          options.boundary_value = test_boundary_value(boundary, seed);
          options.threads = 1;
          options.expert.outputs_per_thread = 1;
          std::vector<float> single(values.size());
          poison(single);
          filter_dense(input, filter, make_view(single.data(), dims, extent), options);
          options.expert.outputs_per_thread = 0;
          for (int threads : {1, 2, 3, 5}) {
            options.threads = threads;
            std::vector<float> out(values.size());
            poison(out);
            const RunReport report =
                filter_dense(input, filter, make_view(out.data(), dims, extent), options);
            rings += ran_ring(report);
            ASSERT_EQ(std::memcmp(out.data(), single.data(), out.size() * sizeof(float)), 0)
                << threads << " threads, " << report.outputs_per_thread_reason;
          }
        }
      }
    }
  }
  EXPECT_GT(rings, 0) << "no case ran the ring kernels";
}

// A ring's thread pads its rows into a window of its own (cpu_backend::Tuning::ring_window_bytes):
// runs of several m1 reuse the window's rows, and a small window cuts every column into pieces
// (here of 50 outputs, the last one short), as do forced splits (runs of 1 and 2, columns of 1
// and 37): bit for bit the blocks of one output, on 1 and 3 threads.
TEST(CpuDenseRing, WindowsMatchSingleOutputBlocksBitForBit) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rings = 0, cut_rings = 0;
  for (int dims : {2, 3, 4}) {
    const Index extent = dims == 2 ? Index{37, 203, 1, 1}
                                   : (dims == 3 ? Index{21, 7, 203, 1} : Index{19, 6, 4, 203});
    const Index k =
        dims == 2 ? Index{3, 5, 1, 1} : (dims == 3 ? Index{2, 3, 5, 1} : Index{3, 2, 3, 5});
    const RandomDense c(dims, extent, k, seed + dims);
    // The window's rows per position: the filter's extents along the middle axes.
    int64_t rows = 1;
    for (int a = 1; a + 1 < dims; ++a)
      rows *= k[a];
    cpu_backend::Tuning cut;
    cut.ring_window_bytes = (50 + 4) * rows * cpu::padded_row_length(extent[0], k[0]) * 4;
    for (Boundary boundary : {Boundary::Zero, Boundary::Mirror, Boundary::Periodic,
                              Boundary::Replicate, Boundary::Reflect}) {
      detail::CorrelationProblem p;  // correlation, same region: reads from -k / 2
      p.input = c.input;
      p.filter_extent = k;
      p.taps = c.taps.data();
      p.boundary = boundary;
      for (int a = 0; a < dims; ++a)
        p.offset[a] = -(k[a] / 2);
      Options options;
      options.backend = Backend::Cpu;
      options.boundary = boundary;
      options.expert.outputs_per_thread = 1;
      std::vector<float> single(c.values.size());
      poison(single);
      p.output = make_view(single.data(), dims, extent);
      RunReport single_report;
      cpu_backend::run_dense(p, options, single_report, cpu_backend::Tuning{});
      options.expert.outputs_per_thread = 0;
      // Forced splits (runs of m1, columns along the last axis) against the model's choice.
      cpu_backend::Tuning single_rows, short_runs;
      single_rows.ring_run = 1;
      single_rows.ring_column = 1;
      short_runs.ring_run = 2;
      short_runs.ring_column = 37;
      for (const cpu_backend::Tuning& tuning :
           {cut, cpu_backend::Tuning{}, single_rows, short_runs}) {
        for (int threads : {1, 3}) {
          SCOPED_TRACE(std::to_string(dims) + "D, " + to_string(boundary) + ", window " +
                       std::to_string(tuning.ring_window_bytes) + " bytes, split " +
                       std::to_string(tuning.ring_run) + " x " +
                       std::to_string(tuning.ring_column) + ", " + std::to_string(threads) +
                       " threads");
          options.threads = threads;
          std::vector<float> out(c.values.size());
          poison(out);
          p.output = make_view(out.data(), dims, extent);
          RunReport report;
          cpu_backend::run_dense(p, options, report, tuning);
          rings += ran_ring(report);
          cut_rings += ran_ring(report) && tuning.ring_window_bytes == cut.ring_window_bytes;
          cut_rings += ran_ring(report) && tuning.ring_window_bytes == cut.ring_window_bytes;
          ASSERT_EQ(std::memcmp(out.data(), single.data(), out.size() * sizeof(float)), 0);
        }
      }
    }
  }
  // Where the rule picks rings for these filters (AVX-512 and AVX2, not SSE2), some cases ran them.
  const cpu::KernelSet& kernels = cpu::select_kernel_set();
  if (cpu::choose_blocking(0, {5, 203, 21, 6, true}, kernels).ring) {
    EXPECT_GT(rings, 0) << "no case ran the ring kernels";
  }
  if (cpu::choose_blocking(0, {5, 203, 21, 6, true, 50}, kernels).ring) {
    EXPECT_GT(cut_rings, 0) << "no case ran them on columns cut by the window";
  }
}

// The padded rows a CPU run holds besides its input and output (cpu_dense_scratch_bytes, for the
// command line's memory estimate): a ring's windows, a few hundred KiB per thread; blocks' padded
// copy of the whole input, its extents grown by the filter's and rounded up to whole blocks.
TEST(CpuDenseScratch, NamesThePaddedRowsOfTheRun) {
  const Index extent{160, 50, 40, 1}, k{7, 7, 7, 1};
  Options options;
  options.threads = 2;
  const double ring = cpu_dense_scratch_bytes(3, extent, k, options);
  options.expert.outputs_per_thread = 4;
  const double blocks = cpu_dense_scratch_bytes(3, extent, k, options);
  const double row = static_cast<double>(cpu::padded_row_length(160, 7)) * sizeof(float);
  EXPECT_DOUBLE_EQ(blocks, (50 + 6) * (40 + 6) * row);
  if (cpu::choose_blocking(0, {7, 40, 160, 49, true}, cpu::select_kernel_set()).ring) {
    EXPECT_DOUBLE_EQ(ring, 2.0 * (40 + 6) * 7 * row);  // a whole column per window
  }
}

}  // namespace
}  // namespace ndconv::test

namespace ndconv::test {
namespace {

// NaN and Inf in the input reach exactly the outputs whose footprint holds them, as in the
// reference, whatever blocking factor is requested or chosen (the kernels multiply no zero weight
// of their own, which would spread them: 0 * NaN is NaN).
TEST(CpuNonFinite, NaNAndInfReachOnlyTheirFootprint) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Index extent{21, 9, 11, 1};
  std::vector<float> values = random_values(21 * 9 * 11, seed);
  values[5 + 21 * (4 + 9 * 5)] = std::nanf("");
  values[17 + 21 * (1 + 9 * 9)] = std::numeric_limits<float>::infinity();
  const ConstVolumeView input = make_view<const float>(values.data(), 3, extent);
  DenseFilter filter;
  filter.dims = 3;
  filter.extent = {3, 2, 5, 1};
  const std::vector<float> taps = random_taps(filter.tap_count(), seed + 1);
  filter.taps = taps.data();
  SeparableFilter separable;
  separable.dims = 3;
  separable.taps[0] = random_taps(3, seed + 2);
  separable.taps[2] = random_taps(6, seed + 3);
  const std::vector<double> dense_ref =
      reference_dense(input, filter, Operation::Convolution, Boundary::Mirror, OutputRegion::Same);
  const std::vector<double> separable_ref = reference_separable(
      input, separable, Operation::Convolution, Boundary::Mirror, OutputRegion::Same);
  for (int factor : blocking_requests()) {
    SCOPED_TRACE("blocking factor request " + std::to_string(factor));
    Options options;
    options.backend = Backend::Cpu;
    options.boundary = Boundary::Mirror;
    options.expert.outputs_per_thread = factor;
    for (bool dense : {true, false}) {
      SCOPED_TRACE(dense ? "dense" : "separable");
      std::vector<float> out(values.size());
      poison(out);
      const RunReport report =
          dense ? filter_dense(input, filter, make_view(out.data(), 3, extent), options)
                : filter_separable(input, separable, make_view(out.data(), 3, extent), options);
      if (factor != 0) {
        EXPECT_EQ(report.outputs_per_thread, factor);  // separable: the last pass's, along z
      }
      const std::vector<double>& ref = dense ? dense_ref : separable_ref;
      std::vector<float> finite_out;
      std::vector<double> finite_ref;
      int64_t non_finite = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(std::isfinite(out[i]), std::isfinite(ref[i])) << "voxel " << i;
        if (std::isfinite(ref[i])) {
          finite_out.push_back(out[i]);
          finite_ref.push_back(ref[i]);
        } else {
          ++non_finite;
        }
      }
      EXPECT_GT(non_finite, 0);
      EXPECT_LT(relative_l2_error(finite_out, finite_ref), kTolerance);
    }
  }
}

}  // namespace
}  // namespace ndconv::test
