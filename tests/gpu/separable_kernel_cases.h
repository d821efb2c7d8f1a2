// The one-pass separable kernels' GPU check (slab and streaming kernels): every boundary,
// operation and region through the engine, the plan naming the kernel, against float64.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "cases.h"
#include "ndconv/engine.h"

namespace ndconv::test {

/// Filters random data of each shape with a random separable filter on the GPU for every
/// request; the run's plan must name `kernel`, and the result be within `tolerance` (relative L2)
/// of the float64 reference: the passes one axis at a time for `same` (the dense outer product
/// takes seconds per case), the dense reference for `valid`.
inline void expect_separable_kernel_matches_reference(std::initializer_list<ShapeCase> shapes,
                                                      const std::string& kernel, double tolerance) {
  for (const ShapeCase& s : shapes) {
    for_each_request(s, [&](Boundary b, Operation op, OutputRegion region) {
      const uint64_t seed = fresh_seed();
      SeparableCase c = separable_case(
          s, seed, [](int) { return true; }, region);
      auto& [in, in_view, f, out_extent, out] = c;
      const RunReport r = filter_separable(in_view, f, make_view(out.data(), s.dims, out_extent),
                                           cuda_options(op, b, region));
      EXPECT_EQ(r.backend, Backend::Cuda);
      EXPECT_NE(r.outputs_per_thread_reason.find(kernel), std::string::npos)
          << r.outputs_per_thread_reason;
      const std::vector<double> ref = region == OutputRegion::Same
                                          ? reference_separable_passes(in_view, f, op, b)
                                          : reference_separable(in_view, f, op, b, region);
      EXPECT_LT(relative_l2_error(out, ref), tolerance)
          << s << " " << to_string(b) << " " << to_string(op) << " " << to_string(region)
          << " seed=" << seed;
    });
  }
}

}  // namespace ndconv::test
