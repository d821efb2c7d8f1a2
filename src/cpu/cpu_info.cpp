#include "cpu/cpu_info.h"

#include <fstream>
#include <thread>

namespace ndconv::cpu {

namespace {
std::string model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
    }
  }
  return "CPU";
}
}  // namespace

std::string cpu_description() {
  static const std::string description = model_name() + ", " +
                                         std::to_string(std::thread::hardware_concurrency()) +
                                         " hardware threads";
  return description;
}

}  // namespace ndconv::cpu
