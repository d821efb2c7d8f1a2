// The end-to-end rows' input: an echocardiography-like sequence, generated so that it compresses
// like real echo data rather than like uniform noise. A pyramidal imaging sector (zero outside, as
// in a scanner's 3D volumes) holds dim tissue, a dark blood pool and a thick ellipsoidal shell,
// the myocardium, whose radii beat over the sequence; the amplitude is multiplied by fully
// developed speckle (the magnitude of a spatially correlated complex Gaussian field, hence
// Rayleigh distributed with mean 1), then quantised to 8 bits.
#pragma once

#include <cstdint>
#include <vector>

#include "perf/params.h"

namespace ndconv::perf {

/// The phantom's noise-free amplitude at voxel (x, y, z) of frame t of a volume of `shape` (3D: t
/// is 0); 0 outside the sector, at most 1.
double echo_amplitude(const Shape& shape, int64_t x, int64_t y, int64_t z, int64_t t);

/// The quantised sequence, x fastest (3D or 4D `shape`); the same `seed` gives the same bytes.
/// Runs on all hardware threads.
std::vector<uint8_t> make_echo_sequence(const Shape& shape, uint64_t seed);

/// Grey level of amplitude 1 times speckle 1 (the speckle's mean).
inline constexpr double kEchoFullScale = 120.0;

}  // namespace ndconv::perf
