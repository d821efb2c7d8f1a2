// The adaptive filter's design cache (design_cache.cpp): the most recent filter designs, shared by
// every thread, so that a second adaptive filter with the same parameters reuses them.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "engine/adaptive/design_method.h"
#include "ndconv/adaptive.h"

namespace ndconv::detail {

// What a design depends on: the kind of filters, dims, size, and the kind's parameters.
struct DesignKey {
  int kind = 0;  // 0 quadrature, 1 reconstruction
  int dims = 0;
  int size = 0;
  std::array<double, 2> parameters{};
  bool operator==(const DesignKey& o) const {
    return kind == o.kind && dims == o.dims && size == o.size && parameters == o.parameters;
  }
};

/// design(), or a copy of its earlier result for the same key (without method.cached, design()).
std::vector<DesignedFilter> cached_design(
    const DesignKey& key, const DesignMethod& method,
    const std::function<std::vector<DesignedFilter>()>& design);

}  // namespace ndconv::detail
