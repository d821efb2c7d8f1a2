// Division by a divisor fixed at launch, by a multiply-high and a shift (Granlund and Montgomery;
// CUTLASS's FastDivmod is the same idea): the divisor's magic number is worked out once on the
// host, and a quotient costs two instructions on the GPU where an integer division by a run-time
// value costs about 25. The tiled kernel numbers its block tiles 0, 1, ... and turns a number into
// the tile's position with three of them (tiled_origin), which with divisions would cost a large
// share of the per-tile work.
#pragma once

#include <cstdint>

#include "kernels/hd.h"

namespace ndconv::kernels {

/// n / d and n % d for 0 <= n < 2^31 and a divisor 1 <= d < 2^31 set by fast_divmod.
struct FastDivmod {
  int divisor;
  unsigned multiplier;  ///< 0 for d = 1
  int shift;

  NDCONV_HD int quotient(int n) const {
#ifdef __CUDA_ARCH__
    const unsigned high = __umulhi(static_cast<unsigned>(n), multiplier);
#else
    const unsigned high =
        static_cast<unsigned>((uint64_t{static_cast<unsigned>(n)} * multiplier) >> 32);
#endif
    return divisor == 1 ? n : static_cast<int>(high >> shift);
  }
  NDCONV_HD int remainder(int n, int q) const {
    return n - q * divisor;
  }
};

/// The magic number of divisor d (1 <= d < 2^31): with p = 31 + ceil(log2 d), m = ceil(2^p / d)
/// and n / d = (n * m) >> p for every n < 2^31.
NDCONV_HD FastDivmod fast_divmod(int d) {
  FastDivmod f{d, 0, 0};
  if (d <= 1)
    return f;
  int log2 = 0;
  while ((int64_t{1} << log2) < d)
    ++log2;
  const int p = 31 + log2;
  f.multiplier = static_cast<unsigned>(((uint64_t{1} << p) + static_cast<uint64_t>(d) - 1) /
                                       static_cast<uint64_t>(d));
  f.shift = p - 32;
  return f;
}

}  // namespace ndconv::kernels
