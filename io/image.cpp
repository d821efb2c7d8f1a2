// The ITK-free parts of io/image.h: type names and limits, geometry sizes, plane views.
#include "io/image.h"

#include <limits>

namespace ndconv::io {

namespace {
struct TypeEntry {
  ComponentType type;
  const char* name;
  int bytes;
  double lowest, highest;
};
constexpr double kF = std::numeric_limits<float>::max();
constexpr double kD = std::numeric_limits<double>::max();
const TypeEntry kTypes[] = {
    {ComponentType::UInt8, "uint8", 1, 0, 255},
    {ComponentType::Int8, "int8", 1, -128, 127},
    {ComponentType::UInt16, "uint16", 2, 0, 65535},
    {ComponentType::Int16, "int16", 2, -32768, 32767},
    {ComponentType::UInt32, "uint32", 4, 0, 4294967295.0},
    {ComponentType::Int32, "int32", 4, -2147483648.0, 2147483647.0},
    {ComponentType::UInt64, "uint64", 8, 0, 18446744073709551615.0},
    {ComponentType::Int64, "int64", 8, -9223372036854775808.0, 9223372036854775807.0},
    {ComponentType::Float32, "float32", 4, -kF, kF},
    {ComponentType::Float64, "float64", 8, -kD, kD},
};
const TypeEntry& entry(ComponentType t) {
  for (const auto& e : kTypes)
    if (e.type == t)
      return e;
  return kTypes[8];
}
}  // namespace

const char* to_string(ComponentType t) {
  return entry(t).name;
}

bool parse_component_type(const std::string& name, ComponentType& out) {
  if (name == "float") {
    out = ComponentType::Float32;
    return true;
  }
  if (name == "double") {
    out = ComponentType::Float64;
    return true;
  }
  for (const auto& e : kTypes) {
    if (name == e.name) {
      out = e.type;
      return true;
    }
  }
  return false;
}

double lowest_value(ComponentType t) {
  return entry(t).lowest;
}
double highest_value(ComponentType t) {
  return entry(t).highest;
}
bool is_integer(ComponentType t) {
  return t != ComponentType::Float32 && t != ComponentType::Float64;
}
int component_bytes(ComponentType t) {
  return entry(t).bytes;
}

int64_t Geometry::voxel_count() const {
  int64_t n = 1;
  for (int a = 0; a < dims; ++a)
    n *= extent[a];
  return n;
}

int64_t ImageInfo::native_bytes() const {
  return geometry.voxel_count() * components * component_bytes(component_type);
}

VolumeView Image::plane_view(int component) {
  return make_view(planes.at(component).data(), info.geometry.dims, info.geometry.extent,
                   info.geometry.spacing);
}

ConstVolumeView Image::plane_view(int component) const {
  return make_view(static_cast<const float*>(planes.at(component).data()), info.geometry.dims,
                   info.geometry.extent, info.geometry.spacing);
}

}  // namespace ndconv::io
