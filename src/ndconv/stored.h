// Volumes in their stored scalar type (as image files hold them), filtered into float32 outputs.
//
// An 8-bit echo volume crosses PCIe as 8 bits: the GPU backend uploads the stored bytes and
// converts them to float on the device; the CPU backend converts on all cores (the separable filter
// one slab of frames at a time, as its passes reach it). Each stored
// value v becomes float(v * scale + offset), computed in double (NIfTI's scl_slope and scl_inter;
// scale 1 and offset 0 give float(v) exactly), the same on both backends, so that the results equal
// filter_dense / filter_separable on the converted float volume bit for bit.
//
// ITK-free and CUDA-free.
#pragma once

#include <array>
#include <cstddef>

#include "ndconv/errors.h"
#include "ndconv/types.h"

namespace ndconv {

enum class ScalarType { UInt8, Int8, UInt16, Int16, UInt32, Int32, Float32, Float64 };
/// How many ScalarType values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kScalarTypeCount = static_cast<std::size_t>(ScalarType::Float64) + 1;

/// Bytes per value, e.g. 1 for UInt8.
std::size_t scalar_size(ScalarType type);
/// "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64".
const char* to_string(ScalarType type);

/// A strided view of a volume of `type` values, with the linear map to float applied on
/// conversion. `data` points to the first value's first byte; strides count values, not bytes
/// (as VolumeView's count floats), so there is no typed at().
struct StoredVolumeView : BasicVolumeView<const unsigned char> {
  ScalarType type = ScalarType::Float32;
  double scale = 1.0;   ///< NIfTI scl_slope (1 when absent or 0 in the file)
  double offset = 0.0;  ///< NIfTI scl_inter
  const unsigned char& at(const Index&) const = delete;
};

/// A contiguous (x fastest) stored view of `data`.
StoredVolumeView make_stored_view(const void* data, ScalarType type, int dims, const Index& extent,
                                  double scale = 1.0, double offset = 0.0);

/// A float32 view as a stored view (no conversion).
StoredVolumeView stored_view(const ConstVolumeView& v);

/// Converts `input` into `output` (float32, the same extents) on `threads` CPU threads (0 = all).
/// Throws InvalidArgument for mismatched views or a non-finite scale or offset.
void convert_to_float(const StoredVolumeView& input, const VolumeView& output, int threads = 0);

/// filter_dense on the converted input (see above); the GPU backend uploads the stored values.
RunReport filter_dense_stored(const StoredVolumeView& input, const DenseFilter& filter,
                              const VolumeView& output, const Options& options = {});

/// filter_separable on the converted input.
RunReport filter_separable_stored(const StoredVolumeView& input, const SeparableFilter& filter,
                                  const VolumeView& output, const Options& options = {});

}  // namespace ndconv
