// The bench's own writers for the files its end-to-end rows read: NIfTI-1 (.nii, and .nii.gz as
// one gzip stream at zlib's default level, as most tools write it) and uncompressed MetaImage
// (.mha). They are independent of ndconv's writers, so that the inputs stay the same whatever the
// tree under test does, and small: one header and the voxels, x fastest.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ndconv/types.h"
#include "perf/params.h"

namespace ndconv::perf {

enum class VoxelType { UInt8, Float32 };

/// Voxels of `shape` (x fastest) with `spacing` per axis (mm; axis 3 in seconds).
struct RawVolume {
  Shape shape;
  std::array<double, kMaxDims> spacing{1, 1, 1, 1};
  VoxelType type = VoxelType::UInt8;
  const void* data = nullptr;
};

/// The formats the end-to-end rows use: "mha", "nii", "nii.gz".
enum class FileFormat { Mha, Nii, NiiGz };
/// How many FileFormat values there are (the last one + 1; name tables are checked against it).
inline constexpr std::size_t kFileFormatCount = static_cast<std::size_t>(FileFormat::NiiGz) + 1;
const char* extension(FileFormat f);  ///< ".mha", ".nii", ".nii.gz"

/// Whether this build can write `f` (.nii.gz needs zlib, which is optional for the perf library).
bool can_write(FileFormat f);

/// Writes `volume` to `path` in format `f`; throws InvalidArgument naming the file on failure.
void write_volume(const std::string& path, FileFormat f, const RawVolume& volume);

/// The 352 bytes that precede the voxels of a NIfTI-1 single file (header and an empty extension
/// flag): identity orientation, spacing in mm and s, no scaling.
std::string nifti1_header(const RawVolume& volume);

/// Size of a file in bytes; -1 when it does not exist.
int64_t file_bytes(const std::string& path);

}  // namespace ndconv::perf
