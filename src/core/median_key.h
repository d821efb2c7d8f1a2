// The median's order as 32-bit keys, shared by the CPU median (src/cpu/median*) and the GPU
// median (src/cuda/median/): a float becomes a key whose unsigned order is the float order with
// -0 below +0 and every NaN (any sign or payload) above +Inf, so that both backends select with
// integer compares and agree bit for bit (a NaN median comes back as the quiet NaN 0x7fc00000).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace ndconv::detail {

/// Float to a key whose unsigned order is the float order, NaN (any sign) above +Inf.
NDCONV_HD uint32_t median_key(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return 0xffffffffu;
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

/// The float of a key (the NaN key: the quiet NaN).
NDCONV_HD float median_value(uint32_t key) {
  const uint32_t bits = key == 0xffffffffu    ? 0x7fc00000u
                        : (key & 0x80000000u) ? key & 0x7fffffffu
                                              : ~key;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace ndconv::detail
