// The size of the __constant__ tap buffer (tap_memory.cuh), apart from it so that host code
// deciding whether taps fit includes no copy of the buffer.
#pragma once

namespace ndconv::kernels {

/// 64 KiB of constant memory, all of it for taps.
inline constexpr int kConstantTapFloats = 16384;

}  // namespace ndconv::kernels
