// A short description of the CPU for RunReport::device_name.
#pragma once

#include <string>

namespace ndconv::cpu {

/// e.g. "Intel(R) Xeon(R) Processor, 2 hardware threads"; the model name comes from
/// /proc/cpuinfo where it exists.
std::string cpu_description();

}  // namespace ndconv::cpu
