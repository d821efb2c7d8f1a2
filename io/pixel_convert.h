// Conversions between a file's interleaved pixels (any component type) and ndconv's float32
// planes. ITK-free: ITK only moves the bytes (image_read.cpp, image_write.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "io/image.h"

namespace ndconv::io {

/// Splits an interleaved buffer (`components` values per voxel, type `type`) into float planes,
/// on `threads` threads (0: all hardware threads).
void native_to_planes(const void* buffer, ComponentType type, int components, int64_t voxels,
                      std::vector<std::vector<float>>& planes, int threads = 0);

/// Interleaves float planes into `buffer` as `type`: integers are rounded to nearest (halves
/// away from zero) and clamped to the type's range, NaN becomes 0; counts go to `report`. On
/// `threads` threads (0: all hardware threads).
void planes_to_native(const std::vector<std::vector<float>>& planes, ComponentType type,
                      int64_t voxels, std::vector<char>& buffer, WriteReport& report,
                      int threads = 0);

/// One value as `planes_to_native` stores it (as a double), for tests and previews.
double convert_value(float value, ComponentType type);

}  // namespace ndconv::io
