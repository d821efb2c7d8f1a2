// The contract between the filter bank's front end (engine/adaptive/bank_front.cpp) and the
// backends' bank drivers: as problem.h's CorrelationProblem, with F filters and either F outputs
// or one weighted sum.
#pragma once

#include <vector>

#include "core/problem.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

struct BankProblem {
  ConstVolumeView input;
  Index filter_extent{1, 1, 1, 1};
  int count = 0;
  const float* taps = nullptr;  ///< count filters, correlation order, contiguous, x fastest
  Index offset{0, 0, 0, 0};
  Boundary boundary = Boundary::Zero;
  Index output_extent{1, 1, 1, 1};
  std::vector<VolumeView> outputs;       ///< one per filter, or empty for the weighted sum
  std::vector<ConstVolumeView> weights;  ///< one per filter for the weighted sum
  VolumeView sum_output;                 ///< the weighted sum
};

}  // namespace ndconv::detail
