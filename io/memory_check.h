// How much memory a command will need, and whether this machine lets it have that much. The
// estimate is the peak of the path ndconv takes (read, filter, write), stage by stage, so that a
// volume that cannot fit is refused before any large allocation instead of the process being
// killed by the kernel's OOM killer half-way.
#pragma once

#include <string>

namespace ndconv::io {

/// Throws IoError when a header describes `values` of `bytes_per_value` each that cannot be
/// right or cannot be held: far more than its data files could expand to (a corrupt header), or
/// more than the usable memory (usable_memory_bytes) just to read them.
void check_memory(const std::string& path, double values, int bytes_per_value);

/// What a command holds in memory, in values (voxels times components).
struct MemoryPlan {
  double input_values = 0;
  int input_bytes = 4;       ///< bytes per stored input value
  bool input_nifti = false;  ///< niftilib reads through a buffer of its own
  /// A MetaImage whose pixels ndconv reads itself (ImageInfo::metaimage_pixels): no reader's
  /// buffers stay behind while the volume is filtered.
  bool input_local_metaimage = false;
  double output_values = 0;       ///< 0: the command writes nothing (info)
  int output_bytes = 4;           ///< bytes per written value
  bool output_compressed = true;  ///< .nii.gz or MetaImage: the parallel compressor's buffers
  double filter_copies = 0;       ///< float32 copies of the output the filter keeps besides it
  int compress_threads = 1;       ///< threads that compress the output at once
};

/// Peak bytes of the plan: the largest of its read, filter and write stages plus the program's
/// own baseline.
double peak_bytes(const MemoryPlan& plan);

/// Bytes this process may hold in all (comparable with peak_bytes, which counts resident bytes):
/// physical memory, lowered by RLIMIT_AS and RLIMIT_DATA less what the process has mapped but
/// not touched and a stack per hardware thread, and by its memory cgroups (v2 memory.max, v1
/// memory.limit_in_bytes, of its group and those above it) less what the others in them hold.
double usable_memory_bytes();

/// Throws IoError, naming `path`, when peak_bytes(plan) exceeds usable_memory_bytes().
void check_plan_fits(const std::string& path, const MemoryPlan& plan);

/// "0.5 KiB", "12.3 MiB", "4.1 GiB".
std::string human_bytes(double bytes);

}  // namespace ndconv::io
