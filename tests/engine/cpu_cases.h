// Shared parameters of the CPU suites: volume shapes (odd extents, extent 1 along some axis),
// filter extent cases, and a guard that selects one instruction set of the CPU backend through
// NDCONV_CPU_ISA for the duration of a scope.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/isa_dispatch.h"
#include "ndconv/types.h"
#include "reference.h"
#include "scoped_env.h"
#include "test_data.h"

namespace ndconv::test {

/// Relative L2 error accepted against the float64 reference. float32 accumulation over up to
/// ~3000 taps of values in [-1, 1) lands near 1e-7..1e-6; 1e-5 leaves margin without hiding a
/// wrong tap (one misplaced tap gives errors of order 1e-1).
inline constexpr double kTolerance = 1e-5;

/// Three shapes per dimension: a general one with x long enough for the widest SIMD strips, one
/// with extent 1 along a middle or the last axis, one with extent 1 along x.
inline Index volume_shape(int dims, int shape) {
  static const Index shapes[3][3] = {
      {{75, 13, 1, 1}, {21, 1, 1, 1}, {1, 9, 1, 1}},
      {{35, 7, 5, 1}, {17, 1, 7, 1}, {1, 5, 9, 1}},
      {{9, 5, 6, 4}, {9, 6, 1, 5}, {11, 3, 4, 1}},
  };
  return shapes[dims - 2][shape];
}

/// Filter extent cases: uniform 1, 2, 3, 4, 7; mixed per axis; larger than the volume (n + 2,
/// clamped to the engine's limit, so larger along at least the short axes).
enum class FilterCase { K1, K2, K3, K4, K7, Mixed, Larger };
inline const char* to_string(FilterCase c) {
  static const char* names[] = {"k1", "k2", "k3", "k4", "k7", "mixed", "larger"};
  return names[static_cast<int>(c)];
}

/// One case of the parameterised CPU suites: dimensions, volume shape, boundary, filter case.
using CaseParam = std::tuple<int, int, Boundary, FilterCase>;

/// Every boundary (reference.h); Boundary::Constant runs with test_boundary_value.
inline auto every_boundary() {
  return ::testing::ValuesIn(kEveryBoundary);
}

/// Every case: 2, 3 and 4 dimensions x the three shapes x every boundary x every filter case.
inline auto all_cases() {
  return ::testing::Combine(
      ::testing::Values(2, 3, 4), ::testing::Values(0, 1, 2), every_boundary(),
      ::testing::Values(FilterCase::K1, FilterCase::K2, FilterCase::K3, FilterCase::K4,
                        FilterCase::K7, FilterCase::Mixed, FilterCase::Larger));
}

/// A case's test name, e.g. 3D_shape1_mirror_k7.
inline std::string case_name(const ::testing::TestParamInfo<CaseParam>& info) {
  const auto [dims, shape, boundary, filter_case] = info.param;
  return std::to_string(dims) + "D_shape" + std::to_string(shape) + "_" + to_string(boundary) +
         "_" + to_string(filter_case);
}

inline Index filter_extent(FilterCase c, int dims, const Index& volume, int64_t limit) {
  Index k{1, 1, 1, 1};
  static const int64_t mixed[4] = {4, 1, 3, 2};
  for (int a = 0; a < dims; ++a) {
    switch (c) {
      case FilterCase::K1:
        k[a] = 1;
        break;
      case FilterCase::K2:
        k[a] = 2;
        break;
      case FilterCase::K3:
        k[a] = 3;
        break;
      case FilterCase::K4:
        k[a] = 4;
        break;
      case FilterCase::K7:
        k[a] = 7;
        break;
      case FilterCase::Mixed:
        k[a] = mixed[a];
        break;
      case FilterCase::Larger:
        k[a] = volume[a] + 2 < limit ? volume[a] + 2 : limit;
        break;
    }
  }
  return k;
}

/// Selects one instruction set of the CPU backend (NDCONV_CPU_ISA) for a scope.
class ScopedIsa : public ScopedEnv {
 public:
  explicit ScopedIsa(const char* isa) : ScopedEnv("NDCONV_CPU_ISA", isa) {}
};

inline std::vector<std::string> available_isas() {
  std::vector<std::string> names;
  for (const cpu::KernelSet* s : cpu::available_kernel_sets())
    names.push_back(s->isa);
  return names;
}

/// Filter taps for the suites: random in [0.25, 1.75), never zero. Positive taps keep the result
/// well conditioned: with taps of both signs, an axis of extent 1 under `replicate` or `mirror`
/// sums all taps along it onto one voxel, and a sum near zero makes float32's relative error
/// (of order eps * sum|taps| / |sum taps|) exceed any fixed tolerance. The input data keeps
/// both signs, so a misplaced or flipped tap still changes the result by ~10%.
inline std::vector<float> random_taps(int64_t count, uint64_t seed) {
  std::vector<float> taps = random_values(count, seed);
  for (float& t : taps)
    t = 1.0f + 0.75f * t;
  return taps;
}

/// Every blocking factor request: automatic and each compiled one.
inline const std::vector<int>& blocking_requests() {
  static const std::vector<int> r{0, 1, 2, 4, 8};
  return r;
}

}  // namespace ndconv::test
