// The output formats' file names and the finishing of what ITK wrote into a staging folder.
//
// ITK writes every image into the staging folder under a neutral name ("image.nii",
// "image.mhd", ...): names with '%' (which ITK's MetaImage writer passes to sprintf) or a doubled
// extension (x.nii.nii) then cannot confuse it. For NIfTI and MetaImage, ITK writes the
// uncompressed file only (its header keeps the geometry exactly as ITK writes it); ndconv then
// checks its length, compresses the data on all cores where the output is compressed
// (.nii.gz: gzip members; .mha/.mhd: one zlib stream) and gives every file its final name inside
// the staging folder, ready for StagingFolder::commit. ITK-free.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ndconv::io {

enum class OutputKind {
  Nifti,       ///< .nii
  NiftiGz,     ///< .nii.gz
  NiftiPair,   ///< .hdr + .img
  MetaSingle,  ///< .mha
  MetaHeader,  ///< .mhd + .raw / .zraw
  Other,       ///< PNG, JPEG, BMP, TIFF: written by ITK as they are
  ItkDirect    ///< ITK writes under the final name itself (.img.gz, .nrrd, .nhdr + .raw.gz)
};

/// How `target` is written: its kind, the neutral name ITK writes in the staging folder, and the
/// companion files (other than the target itself) that the output may create beside it.
struct OutputNames {
  OutputKind kind = OutputKind::Other;
  std::string itk_name;                 ///< file name ITK writes inside the staging folder
  std::vector<std::string> companions;  ///< final names of the files that go with the target
};
OutputNames output_names(const std::string& target, int compression_level);

/// Refuses (RequestError), before anything is written, to replace a companion file that exists
/// beside `target`: without `overwrite` always; with it, unless `target` itself exists too (then
/// the two are taken for one image, replaced as a whole). "scan.hdr --force" thus never replaces
/// an unrelated scan.img.
void check_companions(const std::string& target, const OutputNames& names, bool overwrite);

/// After ITK wrote `names.itk_name` into `folder`: checks that every file is complete (the
/// header plus `data_bytes` of pixels), compresses where the kind asks for it, marks a 4D
/// NIfTI's time unit as seconds when `time_in_seconds`, and leaves only the final files in
/// `folder`. Throws IoError naming `target` and the reason (e.g. "No space left on device").
/// `progress` (may be empty) follows the compression from 0 to 1.
///
/// With `pixels`, ITK wrote only a one-voxel image of the same geometry (its header is all that
/// is used: the extents are set from `pixels`) and the file's data comes from `pixels` itself,
/// so that the pixels are not written twice. For scalar NIfTI (.nii, .nii.gz) and MetaImage
/// (.mha, .mhd), whose data ITK writes as the buffer is.
struct MemoryPixels {
  const unsigned char* data = nullptr;
  uint64_t bytes = 0;
  int dims = 0;
  int64_t extent[4] = {1, 1, 1, 1};
  uint64_t itk_bytes = 0;  ///< the one voxel's bytes at the end of ITK's file
};
void finish_staged_output(const std::string& folder, const std::string& target,
                          const OutputNames& names, uint64_t data_bytes, int compression_level,
                          int threads, bool time_in_seconds,
                          const std::function<void(double)>& progress = {},
                          const MemoryPixels* pixels = nullptr);

/// Why writing into `folder` fails now (errno text of a probe write reaching `bytes` bytes), or
/// "" when a probe succeeds.
std::string write_failure_reason(const std::string& folder, uint64_t bytes);

}  // namespace ndconv::io
