// ndconv/stored.h: scalar types, stored views and the CPU conversion to float on all cores (the
// filter entry points are in engine.cpp, beside the other front ends).
#include "ndconv/stored.h"

#include <cmath>
#include <string>

#include "core/parallel_for.h"
#include "core/convert_value.h"
#include "core/enum_names.h"
#include "core/stored_access.h"

namespace ndconv {

std::size_t scalar_size(ScalarType type) {
  return detail::visit_scalar_type(type, [](auto zero) { return sizeof(zero); });
}

const char* to_string(ScalarType type) {
  static constexpr EnumName<ScalarType> kScalarTypeNames[] = {
      {ScalarType::UInt8, "uint8"},     {ScalarType::Int8, "int8"},
      {ScalarType::UInt16, "uint16"},   {ScalarType::Int16, "int16"},
      {ScalarType::UInt32, "uint32"},   {ScalarType::Int32, "int32"},
      {ScalarType::Float32, "float32"}, {ScalarType::Float64, "float64"}};
  static_assert(lists_every(kScalarTypeNames, kScalarTypeCount), "a ScalarType without its name");
  return name_of(type, kScalarTypeNames, "?");
}

StoredVolumeView make_stored_view(const void* data, ScalarType type, int dims, const Index& extent,
                                  double scale, double offset) {
  StoredVolumeView v;
  static_cast<BasicVolumeView<const unsigned char>&>(v) =
      make_view(static_cast<const unsigned char*>(data), dims, extent);
  v.type = type;
  v.scale = scale;
  v.offset = offset;
  return v;
}

StoredVolumeView stored_view(const ConstVolumeView& v) {
  StoredVolumeView s;
  static_cast<BasicVolumeView<const unsigned char>&>(s) = {
      v.dims, v.extent, v.stride, v.spacing, reinterpret_cast<const unsigned char*>(v.data)};
  return s;
}

void convert_to_float(const StoredVolumeView& input, const VolumeView& output, int threads) {
  if (input.dims != output.dims || input.extent != output.extent)
    throw InvalidArgument("the converted volume's extents differ from the stored volume's");
  if (!std::isfinite(input.scale) || !std::isfinite(input.offset))
    throw InvalidArgument("the stored volume's scale or offset is not finite");
  const bool identity = input.scale == 1.0 && input.offset == 0.0;
  // One work item per x row (all rows of every axis but x).
  const int64_t rows = input.voxel_count() / input.extent[0];
  const int64_t ny = input.extent[1], nz = input.extent[2];
  detail::visit_scalar_type(input.type, [&](auto zero) {
    using T = decltype(zero);
    const T* src = reinterpret_cast<const T*>(input.data);
    core::parallel_for(
        core::resolve_thread_count(threads), rows,
        [&](int64_t begin, int64_t end, int) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t y = r % ny, z = (r / ny) % nz, t = r / (ny * nz);
            const T* in_row = src + y * input.stride[1] + z * input.stride[2] + t * input.stride[3];
            float* out_row =
                output.data + y * output.stride[1] + z * output.stride[2] + t * output.stride[3];
            for (int64_t x = 0; x < input.extent[0]; ++x)
              out_row[x * output.stride[0]] = convert::stored_to_float(
                  in_row[x * input.stride[0]], identity, input.scale, input.offset);
          }
        },
        {});
  });
}

}  // namespace ndconv
