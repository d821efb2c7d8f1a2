// The drivers see every volume through four canonical axes: x (contiguous in the kernels' rows),
// two middle axes, and the blocked axis, which is the volume's last axis (y in 2D, z in 3D, t in
// 4D). Missing middle axes have extent 1, so 2D, 3D and 4D share one code path.
#pragma once

#include "ndconv/types.h"

namespace ndconv::core {

/// The volume axis behind canonical axis c (0..3) for a volume of `dims` axes, or -1.
inline int volume_axis(int dims, int c) {
  if (c == 0)
    return 0;
  if (c == 3)
    return dims - 1;
  return c < dims - 1 ? c : -1;  // c = 1: y when dims >= 3; c = 2: z when dims == 4
}

/// Reorders per-axis values into canonical order, `missing` where no volume axis maps.
inline Index to_canonical(int dims, const Index& v, int64_t missing) {
  Index c{};
  for (int a = 0; a < kMaxDims; ++a) {
    const int src = volume_axis(dims, a);
    c[a] = src < 0 ? missing : v[src];
  }
  return c;
}

}  // namespace ndconv::core
