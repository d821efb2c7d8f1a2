// The CPU filter bank (ndconv/adaptive.h: filter_bank, filter_bank_weighted_sum) against the
// float64 reference: each filter's output against reference_dense, the weighted sum against
// sum_f w_f * reference_dense(filter f). Over dimension x boundary; inside each test convolution
// and correlation, `same` and `valid`, filter counts that need one and several passes, every
// instruction set and request of B, contiguous views on one thread and strided views on three.
// Fresh random data (the seed is printed on failure), outputs poisoned with NaN.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "cpu/bank_kernel_set.h"
#include "cpu/bank_rule.h"
#include "cpu/isa_dispatch.h"
#include "cpu/tuning.h"
#include "cpu_cases.h"
#include "cpu/cpu_backend.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"
#include "reference.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {
namespace {

Index bank_volume(int dims) {
  switch (dims) {
    case 2:
      return {37, 23, 1, 1};
    case 3:
      return {21, 9, 13, 1};
    default:
      return {11, 6, 5, 9};
  }
}

Index bank_filter(int dims) {
  switch (dims) {
    case 2:
      return {5, 3, 1, 1};
    case 3:
      return {3, 5, 3, 1};
    default:
      return {3, 3, 1, 3};
  }
}

class CpuBank : public ::testing::TestWithParam<std::tuple<int, Boundary>> {};

TEST_P(CpuBank, MatchesFloat64Reference) {
  const auto [dims, boundary] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (NDCONV_TEST_SEED replays the run)");
  const Index extent = bank_volume(dims);
  const std::vector<float> values = random_values(count_of(dims, extent), seed);
  const ConstVolumeView input = make_view(values.data(), dims, extent);
  StridedBuffer strided_input(dims, extent, 2);
  strided_input.fill(values);

  for (int count : {1, 5, 14}) {
    FilterBank bank;
    bank.dims = dims;
    bank.extent = bank_filter(dims);
    bank.count = count;
    const std::vector<float> taps = random_taps(bank.tap_count() * count, seed ^ count);
    bank.taps = taps.data();
    for (const auto& [operation, region] :
         {std::pair(Operation::Convolution, OutputRegion::Same),
          std::pair(Operation::Correlation, OutputRegion::Valid),
          std::pair(Operation::Correlation, OutputRegion::Same)}) {
      SCOPED_TRACE(std::to_string(count) + " filters, " + to_string(operation) + ", region " +
                   to_string(region));
      const OutputGeometry g = output_geometry(dims, extent, bank.extent, operation, region);
      const int64_t n = count_of(dims, g.extent);
      std::vector<std::vector<double>> refs;
      for (int f = 0; f < count; ++f) {
        DenseFilter one{dims, bank.extent, taps.data() + f * bank.tap_count()};
        refs.push_back(reference_dense(input, one, operation, boundary, region));
      }
      const std::vector<float> weight_values = random_values(n * count, seed ^ 0x77);
      std::vector<double> weighted_ref(n, 0.0);
      std::vector<ConstVolumeView> weights;
      for (int f = 0; f < count; ++f) {
        weights.push_back(make_view(weight_values.data() + f * n, dims, g.extent));
        for (int64_t i = 0; i < n; ++i)
          weighted_ref[i] += weight_values[f * n + i] * refs[f][i];
      }
      Options options;
      options.backend = Backend::Cpu;
      options.operation = operation;
      options.boundary = boundary;
      options.region = region;
      for (const std::string& isa : available_isas()) {
        ScopedIsa use(isa.c_str());
        for (int factor : {0, 1, 2, 4}) {
          SCOPED_TRACE("isa " + isa + ", B request " + std::to_string(factor));
          options.expert.outputs_per_thread = factor;
          options.threads = 1;
          std::vector<std::vector<float>> outs(count, std::vector<float>(n));
          std::vector<VolumeView> views;
          for (auto& o : outs) {
            poison(o);
            views.push_back(make_view(o.data(), dims, g.extent));
          }
          const RunReport report = filter_bank(input, bank, views, options);
          if (factor != 0) {
            EXPECT_EQ(report.outputs_per_thread, factor);
          }
          for (int f = 0; f < count; ++f)
            EXPECT_LT(relative_l2_error(outs[f], refs[f]), kTolerance) << "filter " << f;
          std::vector<float> sum(n);
          poison(sum);
          filter_bank_weighted_sum(input, bank, weights, make_view(sum.data(), dims, g.extent),
                                   options);
          EXPECT_LT(relative_l2_error(sum, weighted_ref), kTolerance) << "weighted sum";

          // Strided input and outputs, three threads.
          options.threads = 3;
          std::vector<StridedBuffer> strided;
          for (int f = 0; f < count; ++f)
            strided.emplace_back(dims, g.extent, 3);
          std::vector<VolumeView> strided_views;
          for (auto& s : strided)
            strided_views.push_back(s.view);
          filter_bank(as_const(strided_input.view), bank, strided_views, options);
          for (int f = 0; f < count; ++f) {
            EXPECT_LT(relative_l2_error(strided[f].values(), refs[f]), kTolerance)
                << "strided, filter " << f;
            EXPECT_EQ(strided[f].touched_gaps(), 0);
          }
          StridedBuffer strided_sum(dims, g.extent, 3);
          filter_bank_weighted_sum(as_const(strided_input.view), bank, weights, strided_sum.view,
                                   options);
          EXPECT_LT(relative_l2_error(strided_sum.values(), weighted_ref), kTolerance)
              << "strided weighted sum";
          EXPECT_EQ(strided_sum.touched_gaps(), 0);
          if (HasFailure())
            return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, CpuBank,
                         ::testing::Combine(::testing::Values(2, 3, 4),
                                            ::testing::Values(Boundary::Zero, Boundary::Replicate,
                                                              Boundary::Mirror, Boundary::Periodic,
                                                              Boundary::Reflect)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Boundary>>& info) {
                           return std::to_string(std::get<0>(info.param)) + "D_" +
                                  to_string(std::get<1>(info.param));
                         });

// One block per slab (a 1-byte padding limit, cpu_backend::Tuning) gives the same result as one
// slab. The CPU bank is called directly, on the correlation problem the front end would build.
TEST(CpuBankSlabs, OneBlockPerSlabMatchesTheReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  cpu_backend::Tuning tiny;
  tiny.pad_limit_bytes = 1;
  for (int dims : {3, 4}) {
    const Index extent = bank_volume(dims);
    const std::vector<float> values = random_values(count_of(dims, extent), seed);
    const ConstVolumeView input = make_view(values.data(), dims, extent);
    FilterBank bank{dims, bank_filter(dims), 7, nullptr};
    const std::vector<float> taps = random_taps(bank.tap_count() * bank.count, seed ^ 1);
    bank.taps = taps.data();
    const int64_t n = count_of(dims, extent);
    const std::vector<float> weight_values = random_values(n * bank.count, seed ^ 2);
    std::vector<double> weighted_ref(n, 0.0);
    std::vector<ConstVolumeView> weights;
    for (int f = 0; f < bank.count; ++f) {
      const DenseFilter one{dims, bank.extent, taps.data() + f * bank.tap_count()};
      const auto ref =
          reference_dense(input, one, Operation::Correlation, Boundary::Mirror, OutputRegion::Same);
      weights.push_back(make_view(weight_values.data() + f * n, dims, extent));
      for (int64_t i = 0; i < n; ++i)
        weighted_ref[i] += weight_values[f * n + i] * ref[i];
    }
    Options options;
    options.backend = Backend::Cpu;
    options.operation = Operation::Correlation;
    options.boundary = Boundary::Mirror;
    options.threads = 2;
    for (int factor : {1, 2}) {
      options.expert.outputs_per_thread = factor;
      std::vector<float> sum(n);
      poison(sum);
      detail::BankProblem p;
      p.input = input;
      p.filter_extent = bank.extent;
      p.count = bank.count;
      p.taps = bank.taps;
      p.boundary = Boundary::Mirror;
      p.output_extent = extent;
      for (int a = 0; a < dims; ++a)
        p.offset[a] = -(bank.extent[a] / 2);  // correlation, same region
      p.weights = weights;
      p.sum_output = make_view(sum.data(), dims, extent);
      RunReport report;
      cpu_backend::run_bank(p, options, report, tiny);
      EXPECT_GT(report.slabs, 1);
      EXPECT_LT(relative_l2_error(sum, weighted_ref), kTolerance) << dims << "D, B " << factor;
    }
  }
}

TEST(CpuBankRule, SplitsFiltersByRegisterBudget) {
  for (const cpu::KernelSet* set : cpu::available_kernel_sets()) {
    const cpu::BankKernelSet& kernels = cpu::bank_kernel_set(set->isa);
    for (int filters : {1, 6, 12, 24, 25}) {
      const cpu::BankShape shape = cpu::choose_bank_shape(filters, 0, 7, 100, kernels, false);
      int covered = 0;
      for (const cpu::BankPass& p : shape.passes) {
        EXPECT_EQ(p.first_filter, covered);
        EXPECT_LE(p.filters * shape.factor * shape.strip_vectors + shape.strip_vectors + 1,
                  kernels.registers);
        covered += p.filters;
      }
      EXPECT_EQ(covered, filters) << set->isa;
    }
    EXPECT_EQ(cpu::choose_bank_shape(12, 0, 7, 100, kernels, true).factor, 1);
    EXPECT_EQ(cpu::choose_bank_shape(12, 2, 7, 100, kernels, false).factor, 2);
    EXPECT_THROW(cpu::choose_bank_shape(12, 3, 7, 100, kernels, false), InvalidArgument);
  }
}

TEST(CpuBankFrontEnd, RejectsBadRequests) {
  const std::vector<float> in(64, 1.0f), taps(9, 0.5f);
  std::vector<float> out(64);
  const ConstVolumeView input = make_view(in.data(), 2, {8, 8, 1, 1});
  FilterBank bank{2, {3, 3, 1, 1}, 1, taps.data()};
  Options options;
  EXPECT_THROW(filter_bank(input, bank, {}, options), InvalidArgument);
  EXPECT_THROW(filter_bank(input, bank, {make_view(out.data(), 2, {7, 8, 1, 1})}, options),
               InvalidArgument);
  bank.count = 0;
  EXPECT_THROW(filter_bank(input, bank, {make_view(out.data(), 2, {8, 8, 1, 1})}, options),
               InvalidArgument);
  bank.count = 1;
  if (!cuda_status().usable) {
    options.backend = Backend::Cuda;
    EXPECT_THROW(filter_bank(input, bank, {make_view(out.data(), 2, {8, 8, 1, 1})}, options),
                 InvalidArgument);
  }
}

}  // namespace
}  // namespace ndconv::test
