// Float filter taps as signed 8-bit digits for integer matrix units (the GPU bank's tensor cores,
// src/cuda/bank/tensor_core_layout.h; the CPU's AMX): the precision scheme of issue 49, one for
// every backend so that they give the same values.
//
// The inputs are 8-bit voxels (exact integers 0..255). Each filter's taps w are split with one
// scale s per filter (s = max |w| / 127) into signed 8-bit digits,
//   w / s ~ d0 + d1 2^-7 + d2 2^-14 + d3 2^-21   (d0 in [-127, 127], d1.. in [-64, 64]),
// rounding to nearest at each digit, so the digits lose at most half of the last one's weight:
// 2^-(7 (slices - 1) + 1) / 127 of the largest tap. Each digit is summed in its own int32
// accumulator: a u8 x s8 product is below 2^15, so a sum over fewer than 2^16 taps is exact (a 4D
// 7^4 filter: 2401 taps, below 2^27), and over fewer than 2^9 taps (a 3D 7^3 filter) also exact as
// a float. combine_slices joins the accumulators in a fixed order (Horner in float with fused
// multiply-adds, then the scale), so a backend's result is deterministic and every backend that
// sums exactly gives the same float. Above 2^24 a conversion rounds: each of the few roundings
// costs at most 2^-24 of sum |d0| |x| (about 2^-24 of sum |w| |x|), below the FP32 kernels' own
// per-voxel error.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/host_device.h"

namespace ndconv::detail {

/// Bits between consecutive digits (each later digit weighs 2^-kDigitBits of the one before).
constexpr int kDigitBits = 7;

/// One filter's taps split into `slices` digit planes: digits[s * taps + j], and the scale.
struct SplitFilter {
  float scale = 0;
  std::vector<int8_t> digits;
};

/// Splits `count` taps into `slices` signed digits (2 to 4; InvalidArgument otherwise).
SplitFilter split_filter(const float* taps, int64_t count, int slices);

/// The largest |w - reconstructed w| over the filter's taps, relative to its largest |w| (0 for a
/// filter of zeros): what the digits lose, before any rounding of the sums.
double split_error(const float* taps, int64_t count, const SplitFilter& split, int slices);

/// The response from a filter's `slices` exact accumulators (acc[s] for digit s): Horner in float
/// from the smallest digit up, each step one fused multiply-add, then times the scale. The first
/// step, fmaf(acc[s-1], 2^-7, acc[s-2]) for sums over fewer than 2^9 taps (every accumulator exact
/// as a float), is the correctly rounded (acc[s-1] + 2^7 acc[s-2]) 2^-7: the two joined exactly in
/// int64 (int32 would overflow for a 4D filter's sums) and converted once, one integer-to-float
/// conversion fewer, the same float; for longer sums that join is the first step's definition.
NDCONV_HD float combine_slices(const int32_t* acc, int slices, float scale) {
  constexpr float kStep = 1.0f / (1 << kDigitBits);
  float t = static_cast<float>(int64_t{acc[slices - 1]} +
                               int64_t{acc[slices - 2]} * (int64_t{1} << kDigitBits)) *
            kStep;
  for (int s = slices - 3; s >= 0; --s)
    t = fmaf(t, kStep, static_cast<float>(acc[s]));
  return t * scale;
}

}  // namespace ndconv::detail
