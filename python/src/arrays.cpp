#include "arrays.h"

#include <string>

namespace ndconv::python {

namespace {

using Code = nb::dlpack::dtype_code;

Placement placement(int device_type, int device_id) {
  // kDLCUDA (2), kDLCUDAHost (3: pinned host memory, which the CPU reads), kDLCUDAManaged (13).
  Placement p;
  p.on_gpu = device_type == nb::device::cuda::value || device_type == 13;
  p.device = p.on_gpu ? device_id : 0;
  if (!p.on_gpu && device_type != nb::device::cpu::value && device_type != 3)
    throw nb::value_error(
        "ndconv filters arrays in host memory or on a CUDA GPU; this array lives "
        "on another kind of device");
  return p;
}

std::string dtype_text(nb::dlpack::dtype t) {
  const std::string kind = t.code == uint8_t(Code::Int)       ? "int"
                           : t.code == uint8_t(Code::UInt)    ? "uint"
                           : t.code == uint8_t(Code::Float)   ? "float"
                           : t.code == uint8_t(Code::Complex) ? "complex"
                           : t.code == uint8_t(Code::Bool)
                               ? "bool"
                               : "dtype code " + std::to_string(t.code) + " of ";
  return kind + std::to_string(t.bits);
}

template <typename Array, typename View>
void fill_view(const Array& a, View& v) {
  const int dims = engine_dims(a.ndim());
  v.dims = dims;
  const int n = static_cast<int>(a.ndim());
  for (int axis = 0; axis < n; ++axis) {
    const int engine_axis = n - 1 - axis;
    v.extent[engine_axis] = static_cast<int64_t>(a.shape(axis));
    v.stride[engine_axis] = a.stride(axis);
  }
  if (n == 1) {  // one row: the second engine axis has one voxel
    v.extent[1] = 1;
    v.stride[1] = v.extent[0] * (v.stride[0] == 0 ? 1 : v.stride[0]);
  }
  for (int axis = 0; axis < dims; ++axis) {
    if (v.extent[axis] < 1)
      throw nb::value_error("ndconv does not filter empty arrays (an axis of length 0)");
    if (v.stride[axis] < 0)
      throw nb::value_error(
          "internal: negative strides reach the engine (the package copies them)");
  }
}

}  // namespace

int engine_dims(std::size_t ndim) {
  if (ndim == 0)
    throw nb::value_error("ndconv filters arrays of 1 to 4 axes; this one is 0-d");
  if (ndim > 4)
    throw nb::value_error(
        ("ndconv filters arrays of 1 to 4 axes; this one has " + std::to_string(ndim)).c_str());
  return ndim == 1 ? 2 : static_cast<int>(ndim);
}

Placement placement_of(const InArray& a) {
  return placement(a.device_type(), a.device_id());
}

Placement placement_of(const OutArray& a) {
  return placement(a.device_type(), a.device_id());
}

ScalarType scalar_type_of(const InArray& a) {
  const nb::dlpack::dtype t = a.dtype();
  if (t.lanes == 1) {
    if (t.code == uint8_t(Code::UInt)) {
      if (t.bits == 8)
        return ScalarType::UInt8;
      if (t.bits == 16)
        return ScalarType::UInt16;
      if (t.bits == 32)
        return ScalarType::UInt32;
    } else if (t.code == uint8_t(Code::Int)) {
      if (t.bits == 8)
        return ScalarType::Int8;
      if (t.bits == 16)
        return ScalarType::Int16;
      if (t.bits == 32)
        return ScalarType::Int32;
    } else if (t.code == uint8_t(Code::Float)) {
      if (t.bits == 32)
        return ScalarType::Float32;
      if (t.bits == 64)
        return ScalarType::Float64;
    }
  }
  throw nb::type_error(("ndconv filters arrays of uint8, int8, uint16, int16, uint32, int32, "
                        "float32 and float64 values, not " +
                        dtype_text(t))
                           .c_str());
}

StoredVolumeView stored_view_of(const InArray& a) {
  StoredVolumeView v;
  v.type = scalar_type_of(a);
  v.data = static_cast<const unsigned char*>(a.data());
  fill_view(a, v);
  return v;
}

ConstVolumeView float_view_of(const InArray& a) {
  if (scalar_type_of(a) != ScalarType::Float32)
    throw nb::type_error("internal: a float32 array was expected");
  ConstVolumeView v;
  v.data = static_cast<const float*>(a.data());
  fill_view(a, v);
  return v;
}

VolumeView output_view_of(const OutArray& out, const BasicVolumeView<const unsigned char>& like) {
  VolumeView v;
  v.data = out.data();
  fill_view(out, v);
  bool same = v.dims == like.dims;
  for (int axis = 0; same && axis < like.dims; ++axis)
    same = v.extent[axis] == like.extent[axis];
  if (!same)
    throw nb::value_error("the output array's shape differs from the input's");
  return v;
}

}  // namespace ndconv::python
