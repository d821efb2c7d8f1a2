// The least-squares fit behind the adaptive filter's filter design (design_fit.cpp): taps of a
// given size fitted to each target's ideal frequency response. design.cpp says which filters a
// design holds and what their ideal responses are; this is the numerics they share.
#pragma once

#include <array>
#include <complex>
#include <functional>
#include <vector>

#include "engine/adaptive/design_method.h"
#include "ndconv/adaptive.h"

namespace ndconv::detail {

inline constexpr double kPi = 3.14159265358979323846;

// One filter to design: its ideal frequency response, and the direction that response turns
// with. Within one family, the ideal response of direction Q n is that of n turned by Q
// (ideal_Qn(u) = ideal_n(Q^T u)) for every signed permutation Q of the axes.
struct DesignTarget {
  std::array<double, kMaxDims> direction{};  // zero for the lowpass filter
  int family = 0;
  std::function<std::complex<double>(const std::array<double, kMaxDims>&)> ideal;
};

// Designs a filter of `size` taps per axis for every target; with method.reuse_symmetric, a
// target that a signed permutation maps from an earlier one of its family is that filter moved.
std::vector<DesignedFilter> design_filters(int dims, int size, bool complex_taps,
                                           const std::vector<DesignTarget>& targets,
                                           const DesignMethod& method);

}  // namespace ndconv::detail
