// The inner check of both CPU suites: one engine call (dense or separable) for one filter,
// boundary, operation and region, run under every instruction set x blocking factor request, on
// contiguous views with one thread and on strided views with three, each result compared with
// the float64 reference and, bit for bit, with the instruction set's first result (a block of B
// outputs sums each output's taps in the order a block of one does, whatever the threads). The
// suites set up the case; this file holds the loop they share.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu_cases.h"
#include "ndconv/types.h"
#include "strided_views.h"
#include "test_data.h"

namespace ndconv::test {

/// `run(input, output, options)` is the engine call under test; `options` carries its boundary,
/// operation and region. `check_report(report, factor)` adds the suite's own expectations on
/// the contiguous run's report. Returns after the first failure.
template <typename TRun, typename TCheckReport>
void check_every_isa_and_layout(const ConstVolumeView& input, const StridedBuffer& strided_input,
                                const Index& out_extent, Options options,
                                const std::vector<double>& reference, TRun run,
                                TCheckReport check_report) {
  const int dims = input.dims;
  // Bit for bit, so that -0 and +0 differ and NaN equals NaN.
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  for (const std::string& isa : available_isas()) {
    ScopedIsa use(isa.c_str());
    std::vector<float> first;  // the instruction set's first result
    for (int factor : blocking_requests()) {
      SCOPED_TRACE("isa " + isa + ", blocking factor request " + std::to_string(factor));
      options.backend = Backend::Cpu;
      options.expert.outputs_per_thread = factor;

      // Contiguous views, one thread.
      std::vector<float> out(count_of(dims, out_extent));
      poison(out);
      options.threads = 1;
      const RunReport report = run(input, make_view(out.data(), dims, out_extent), options);
      EXPECT_LT(relative_l2_error(out, reference), kTolerance) << "contiguous, 1 thread";
      EXPECT_EQ(report.backend, Backend::Cpu);
      check_report(report, factor);
      if (first.empty())
        first = out;
      EXPECT_TRUE(same_bits(out, first)) << "contiguous, 1 thread: not the first factor's bits";

      // Strided input and output, three threads.
      StridedBuffer strided_output(dims, out_extent, 3);
      options.threads = 3;
      run(as_const(strided_input.view), strided_output.view, options);
      EXPECT_LT(relative_l2_error(strided_output.values(), reference), kTolerance)
          << "strided, 3 threads";
      EXPECT_TRUE(same_bits(strided_output.values(), first))
          << "strided, 3 threads: not the first factor's bits";
      EXPECT_EQ(strided_output.touched_gaps(), 0) << "wrote outside the output view";
      if (::testing::Test::HasFailure())
        return;
    }
  }
}

}  // namespace ndconv::test
