// Random test volumes for the CLI suites: a 3D or 4D image (4D when extent[3] > 1) of fresh random
// `type` values with unequal spacings, for files written with test_files.h.
#pragma once

#include "test_files.h"

namespace ndconv::test {

inline RawImage random_volume(Index extent, io::ComponentType type, uint64_t seed) {
  RawImage r;
  r.dims = extent[3] > 1 ? 4 : 3;
  r.extent = extent;
  r.spacing = {0.8, 1.0, 1.25, 0.5};
  r.type = type;
  r.values = random_for_type(r.voxels(), type, seed);
  return r;
}

}  // namespace ndconv::test
